import type { Decimal } from '../shared/money.js';
import type { StoredSecret } from '../shared/secret-box.js';

/**
 * Organisations with their wallets, payment policy and API keys, as storage keeps them; src/db implements these,
 * read through the caches of cached-stores.ts.
 */

/**
 * How an organisation receives money (docs/operations.md#receiving-modes): on its shared wallet, or at a deposit
 * address per session; a session keeps the mode it was created with.
 */
export const RECEIVING_MODES = ['shared_wallet', 'deposit_addresses'] as const;
export type ReceivingMode = (typeof RECEIVING_MODES)[number];

/** A new organisation's receiving mode and why it has it, said by `kassa orgs create`. */
export interface ReceivingChoice {
  readonly mode: ReceivingMode;
  readonly reason: string;
}

export interface Organisation {
  readonly id: string;
  readonly name: string;
  readonly deleted: boolean;
  readonly underpaymentTolerancePercent: Decimal;
  readonly latePaymentWindowMinutes: number;
  /** Receiving wallet per network slug (lower-case addresses). */
  readonly wallets: Readonly<Record<string, string>>;
  readonly receivingMode: ReceivingMode;
  readonly createdAt: Date;
}

export interface OrganisationStore {
  create(input: {
    id: string;
    name: string;
    wallets: Record<string, string>;
    receivingMode?: ReceivingMode;
  }): Promise<Organisation>;
  findById(id: string): Promise<Organisation | null>;
  list(): Promise<Organisation[]>;
  /** Throws the conflict of `walletTaken` when another organisation holds the wallet on that network. */
  setWallet(organisationId: string, network: string, address: string): Promise<void>;
  /** The organisation whose receiving wallet `address` is on `network`, if any. */
  walletOwner(network: string, address: string): Promise<string | null>;
  setPaymentPolicy(
    organisationId: string,
    policy: {
      underpaymentTolerancePercent?: Decimal;
      latePaymentWindowMinutes?: number;
      receivingMode?: ReceivingMode;
    },
  ): Promise<void>;
}

export interface ApiKeyRecord {
  readonly id: string;
  readonly organisationId: string;
  readonly publicKey: string;
  /** The sealed secret with the row it belongs to (src/domain/secret-box.ts). */
  readonly secretCiphertext: StoredSecret;
  readonly createdAt: Date;
  readonly expiresAt: Date | null;
  readonly revokedAt: Date | null;
  readonly lastUsedAt: Date | null;
}

export interface ApiKeyStore {
  create(input: {
    id: string;
    organisationId: string;
    publicKey: string;
    secretCiphertext: string;
    rotatedFromId?: string;
  }): Promise<ApiKeyRecord>;
  findByPublicKey(publicKey: string): Promise<ApiKeyRecord | null>;
  listForOrganisation(organisationId: string): Promise<ApiKeyRecord[]>;
  /** Sets revoked_at (if not yet set); false when the key does not exist. Any revoked_at revokes, whatever its time. */
  revoke(publicKey: string, at: Date): Promise<boolean>;
  /**
   * Sets expires_at, if unset, to the database's clock plus `graceMinutes`, so a CLI host's fast clock cannot lengthen
   * the grace; null when the key had one (one rotation per key).
   */
  expire(publicKey: string, graceMinutes: number): Promise<Date | null>;
  touch(id: string, at: Date): Promise<void>;
  /** Any one stored key (the newest), to check the master key against; null when there is none. */
  sample(): Promise<ApiKeyRecord | null>;
}
