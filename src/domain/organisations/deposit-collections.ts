import { randomUUID } from 'node:crypto';
import { z } from 'zod';
import { FUNDS_COLLECTED } from '../shared/event-types.js';
import { Decimal, fromBaseUnits, WIRE_DECIMALS } from '../shared/money.js';
import { amount, dateTime, uuid } from '../shared/view-fields.js';

/**
 * What a collect moved from deposit addresses to the wallet (docs/operations.md#collecting-deposits): recorded per
 * session and asset, with its `funds.collected` event, in one database transaction.
 */

/** What one collect moved from one session's deposit address in one asset. */
export interface CollectedAsset {
  readonly sessionId: string;
  readonly depositAddress: string;
  readonly asset: string;
  /** Null for the native coin. */
  readonly tokenAddress: string | null;
  readonly decimals: number;
  readonly baseUnits: bigint;
}

/** A collect transaction seen mined, and what it moved. */
export interface DepositCollection {
  readonly id: string;
  readonly organisationId: string;
  readonly network: string;
  readonly chainId: string;
  readonly destination: string;
  readonly txHash: string;
  readonly blockNumber: bigint;
  readonly gasUsed: bigint;
  readonly collectedAt: Date;
  readonly items: readonly CollectedAsset[];
}

export const collectedAssetSchema = z.strictObject({
  session_id: uuid,
  deposit_address: z.string(),
  crypto_currency: z.string(),
  token_address: z.string().nullable().describe('Null for the native coin'),
  amount: amount.describe('Rounded down to 8 fractional digits; base_units is exact'),
  base_units: z.string().regex(/^\d+$/).describe("The exact amount in the asset's smallest unit"),
});

/** The `data` of a `funds.collected` event (docs/api/webhooks.md#funds-collected). */
export const fundsCollectedSchema = z
  .strictObject({
    collection_id: uuid,
    organisation_id: uuid,
    network: z.string(),
    chain_id: z.string(),
    destination: z.string().describe("The organisation's wallet the money went to"),
    tx_hash: z.string(),
    block_number: z.string().regex(/^\d+$/),
    gas_used: z.string().regex(/^\d+$/),
    collected_at: dateTime.describe("The block's time"),
    collected: z.array(collectedAssetSchema).describe('Per session and asset'),
  })
  .describe('Money a collect transaction moved from deposit addresses to the organisation wallet');

export type FundsCollectedView = z.infer<typeof fundsCollectedSchema>;

export function toFundsCollectedView(collection: DepositCollection): FundsCollectedView {
  return {
    collection_id: collection.id,
    organisation_id: collection.organisationId,
    network: collection.network,
    chain_id: collection.chainId,
    destination: collection.destination,
    tx_hash: collection.txHash,
    block_number: collection.blockNumber.toString(),
    gas_used: collection.gasUsed.toString(),
    collected_at: collection.collectedAt.toISOString(),
    collected: collection.items.map((item) => ({
      session_id: item.sessionId,
      deposit_address: item.depositAddress,
      crypto_currency: item.asset,
      token_address: item.tokenAddress,
      amount: collectedAmount(item).toFixed(WIRE_DECIMALS, Decimal.ROUND_DOWN),
      base_units: item.baseUnits.toString(),
    })),
  };
}

/** The asset amount (exact; the wire shows it rounded down to 8 digits). */
export function collectedAmount(item: Pick<CollectedAsset, 'baseUnits' | 'decimals'>): Decimal {
  return fromBaseUnits(item.baseUnits, item.decimals);
}

/** The outbox row of a collection: its event, of the organisation, tied to no one session. */
export function fundsCollectedEvent(collection: DepositCollection, at: Date) {
  return {
    id: randomUUID(),
    organisationId: collection.organisationId,
    sessionId: null,
    type: FUNDS_COLLECTED,
    payload: toFundsCollectedView(collection),
    createdAt: at,
  } as const;
}

/** Writes a collection, its rows per session and asset and its event, in one transaction (src/db). */
export interface DepositCollectionStore {
  /** False when that transaction was recorded before (nothing written, no second event). */
  record(collection: DepositCollection, at: Date): Promise<boolean>;
}
