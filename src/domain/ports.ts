import type { CheckoutSession, CheckoutSessionStatus } from './checkout-session.js';
import type { CheckoutEventType } from './status-machine.js';
import type { Decimal } from './money.js';
import type { WebhookStore } from './webhook-ports.js';

/**
 * What the domain needs from storage. Implemented over Prisma in src/db; the
 * domain never sees the Prisma client.
 */
export interface Store {
  readonly sessions: SessionReader;
  readonly organisations: OrganisationStore;
  readonly apiKeys: ApiKeyStore;
  readonly webhooks: WebhookStore;
  /** Runs `work` in one database transaction; everything it writes commits or nothing does. */
  transaction<T>(work: (tx: TxStore) => Promise<T>): Promise<T>;
  /**
   * Runs `settle` on up to `limit` open sessions that are past expiry (and past
   * the in-flight grace when a transaction was bound in time), each locked for
   * this caller only (SKIP LOCKED), so several instances can sweep at once.
   */
  settleDueExpiries(
    now: Date,
    inflightGraceMinutes: number,
    limit: number,
    settle: (tx: TxStore, session: CheckoutSession) => Promise<void>,
  ): Promise<number>;
  /** Forgets idempotency keys created before `before`. */
  deleteIdempotencyKeysBefore(before: Date): Promise<number>;
}

export interface SessionReader {
  findById(id: string): Promise<CheckoutSession | null>;
  findIdempotencyKey(organisationId: string, key: string): Promise<IdempotencyRecord | null>;
}

export interface IdempotencyRecord {
  readonly requestHash: string;
  readonly sessionId: string;
}

export interface StatusChange {
  readonly sessionId: string;
  readonly from: CheckoutSessionStatus | null;
  readonly to: CheckoutSessionStatus;
  readonly cause: string;
  readonly at: Date;
}

export interface OutboxEvent {
  readonly id: string;
  readonly organisationId: string;
  readonly sessionId: string | null;
  readonly type: CheckoutEventType;
  readonly payload: unknown;
  readonly createdAt: Date;
}

export interface SessionPatch {
  readonly status?: CheckoutSessionStatus;
  readonly overpaid?: boolean;
  readonly cryptoCurrency?: string;
  readonly totalAmountCrypto?: Decimal;
  readonly boundTxHash?: string;
  readonly boundAt?: Date;
  readonly payerWalletAddress?: string | null;
  readonly chainId?: string;
  readonly failureReason?: string;
  readonly updatedAt: Date;
}

/** Storage inside one transaction. Never mix with the outer Store while it is open. */
export interface TxStore {
  /** Inserts the key; false when the key already exists (after waiting for a concurrent holder). */
  claimIdempotencyKey(organisationId: string, key: string, requestHash: string, sessionId: string): Promise<boolean>;
  findIdempotencyKey(organisationId: string, key: string): Promise<IdempotencyRecord | null>;
  insertSession(session: CheckoutSession): Promise<void>;
  /** Reads the session and locks its row until the transaction ends. */
  lockSession(id: string): Promise<CheckoutSession | null>;
  /** The session a transaction hash is bound to, if any. */
  findSessionIdByTxHash(txHash: string): Promise<string | null>;
  /** Throws a conflict DomainError if the tx hash is bound elsewhere meanwhile. */
  updateSession(id: string, patch: SessionPatch): Promise<void>;
  recordStatusChange(change: StatusChange): Promise<void>;
  appendEvent(event: OutboxEvent): Promise<void>;
}

export interface Organisation {
  readonly id: string;
  readonly name: string;
  readonly deleted: boolean;
  readonly underpaymentTolerancePercent: Decimal;
  readonly latePaymentWindowMinutes: number;
  /** Receiving wallet per network slug (lower-case addresses). */
  readonly wallets: Readonly<Record<string, string>>;
  readonly createdAt: Date;
}

export interface OrganisationStore {
  create(input: { id: string; name: string; wallets: Record<string, string> }): Promise<Organisation>;
  findById(id: string): Promise<Organisation | null>;
  list(): Promise<Organisation[]>;
  setWallet(organisationId: string, network: string, address: string): Promise<void>;
}

export interface ApiKeyRecord {
  readonly id: string;
  readonly organisationId: string;
  readonly publicKey: string;
  readonly secretCiphertext: string;
  readonly createdAt: Date;
  readonly expiresAt: Date | null;
  readonly revokedAt: Date | null;
  readonly lastUsedAt: Date | null;
}

export interface ApiKeyStore {
  create(input: { id: string; organisationId: string; publicKey: string; secretCiphertext: string; rotatedFromId?: string }): Promise<ApiKeyRecord>;
  findByPublicKey(publicKey: string): Promise<ApiKeyRecord | null>;
  listForOrganisation(organisationId: string): Promise<ApiKeyRecord[]>;
  /** Sets revoked_at (if not yet set); false when the key does not exist. */
  revoke(publicKey: string, at: Date): Promise<boolean>;
  expire(publicKey: string, at: Date): Promise<void>;
  touch(id: string, at: Date): Promise<void>;
  /** Any one stored key (the newest), to check the master key against; null when there is none. */
  sample(): Promise<ApiKeyRecord | null>;
}
