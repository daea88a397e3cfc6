import type { Decimal } from '../../shared/money.js';

/**
 * What the dashboard's deposits page needs of the chains and of the collections' records (docs/decisions/0035),
 * implemented in src/chain/dashboard-deposits.ts.
 */

/** One asset held at one deposit address, in the asset's smallest units. */
export interface DepositAssetUnits {
  readonly asset: string;
  readonly decimals: number;
  readonly units: bigint;
}

/** An unsigned collect transaction, packed as `kassa collect` packs it (docs/decisions/0028). */
export interface PlannedCollect {
  readonly destination: string;
  readonly sessionIds: readonly string[];
  readonly to: string;
  readonly data: string;
  /** The node's estimate. */
  readonly gas: bigint;
}

/** What the chain says about an organisation's deposit addresses on one network. */
export interface DepositSurvey {
  readonly network: string;
  readonly chainId: number;
  /** Its deposit-mode sessions' addresses there, holding money or not. */
  readonly depositAddresses: number;
  readonly holdings: ReadonlyArray<{ readonly sessionId: string; readonly balances: readonly DepositAssetUnits[] }>;
  readonly collects: readonly PlannedCollect[];
}

export type CollectState = 'unknown' | 'pending' | 'confirming' | 'confirmed' | 'reverted' | 'nothing';

/** Where a reported collect transaction stands; `confirmed` once mined deep enough and recorded. */
export interface CollectProgress {
  readonly network: string;
  readonly txHash: string;
  readonly state: CollectState;
  readonly confirmations: number;
  readonly confirmationsRequired: number;
  readonly blockNumber: bigint | null;
  readonly collected: ReadonlyArray<{ readonly sessionId: string; readonly asset: string; readonly amount: Decimal }>;
}

export interface DepositChain {
  /** Whether the deposit factory has code on `network`; null when no node answered. */
  factoryDeployed(network: string): Promise<boolean | null>;
  /** Balances at the organisation's deposit addresses and the collects that would move them. */
  survey(organisationId: string, network: string): Promise<DepositSurvey>;
  /** Reads the transaction; once mined with the network's confirmations, records what it moved (once). */
  progress(organisationId: string, network: string, txHash: string): Promise<CollectProgress>;
  /** Follows the transaction in the background until it is confirmed, reverted or given up. */
  follow(organisationId: string, network: string, txHash: string): void;
}
