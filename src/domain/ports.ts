import type { CheckoutSession, CheckoutSessionStatus } from './checkout-session.js';
import type { CheckoutEventType } from './status-machine.js';
import type { Decimal } from './money.js';
import type { AssetTicker } from './assets.js';
import type { Attribution, AttributionCandidates, ChainTransfer } from './payments.js';
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
  /**
   * Runs `settle` on up to `limit` sessions whose payments changed since they
   * were last settled, each locked for this caller only (SKIP LOCKED).
   */
  settleChangedPayments(limit: number, settle: (tx: TxStore, session: CheckoutSession) => Promise<void>): Promise<number>;
  readonly chain: ChainLedger;
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
  readonly amountReceived?: Decimal;
  readonly paymentsChangedAt?: Date | null;
  readonly boundTxCheckedAt?: Date;
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
  /** Confirmed, not reversed payments attributed to the session in `asset` on `chainId`, summed. */
  confirmedReceived(sessionId: string, asset: AssetTicker, chainId: string): Promise<Decimal>;
  /**
   * Gives payments of `txHash` on `chainId` that nobody was credited with to the
   * session (a bind that arrives after the watcher saw the transfer).
   */
  attachPaymentsOfTransaction(sessionId: string, txHash: string, chainId: string, at: Date): Promise<number>;
  /**
   * Gives the session the unattributed transfers its (now proven) payer wallet sent to
   * its wallet on its chain since the session was created.
   */
  attachPayerWalletPayments(session: CheckoutSession, at: Date): Promise<number>;
  /** The session a transaction's transfers were already credited to on `chainId`, if any. */
  sessionCreditedWith(txHash: string, chainId: string): Promise<string | null>;
}

/** A payment row, as operators see it. */
export interface PaymentRecord extends ChainTransfer {
  readonly id: string;
  readonly state: 'seen' | 'confirmed' | 'reversed';
  readonly confirmations: number;
  readonly sessionId: string | null;
  readonly attribution: Attribution | null;
  readonly late: boolean;
  readonly createdAt: Date;
}

/** A range of blocks scanned on one network, to be recorded at once. */
export interface ScannedRange {
  readonly network: string;
  readonly chainId: string;
  /** The cursor the scan started from; the write is refused if another scanner moved it meanwhile. */
  readonly fromBlock: bigint;
  readonly toBlock: bigint;
  readonly toBlockHash: string;
  readonly transfers: readonly ChainTransfer[];
  /** Decimals per lower-case token address (and `native`), for exact-amount matching. */
  readonly decimals: Readonly<Record<string, number>>;
}

/**
 * Storage for the chain watcher: per-network cursors with a leader lease,
 * block hashes for reorg detection, and payments.
 */
export interface ChainLedger {
  /**
   * Takes or renews the lease on scanning `network` for `instanceId`. Returns
   * the block to scan next, or null when another live instance leads.
   */
  leaseNetwork(network: string, chainId: string, instanceId: string, leaseSeconds: number, startBlock: bigint): Promise<bigint | null>;
  releaseNetwork(network: string, instanceId: string): Promise<void>;
  /** Receiving wallets to watch: of open sessions and of sessions inside their late-payment window. */
  watchedWallets(network: string, now: Date): Promise<string[]>;
  /** The newest recorded block hashes, newest first. */
  recordedBlocks(network: string, limit: number): Promise<Array<{ number: bigint; hash: string }>>;
  /**
   * Records a scanned range in one transaction: payments (attributed by
   * `attribute`), the range end's block hash, and the cursor. False when the
   * cursor is no longer at `fromBlock` or the lease was lost (nothing written).
   */
  recordRange(
    range: ScannedRange,
    instanceId: string,
    attribute: (candidates: AttributionCandidates) => { sessionId: string; attribution: Attribution } | null,
    now: Date,
  ): Promise<boolean>;
  /** Undoes everything from `fromBlock` up on `network` (a reorganisation): payments reversed, cursor rewound. */
  rollBack(network: string, fromBlock: bigint, now: Date): Promise<number>;
  /** Payments seen up to `throughBlock` and not yet confirmed, oldest first. */
  paymentsAwaitingConfirmation(network: string, throughBlock: bigint): Promise<Array<{ id: string; blockNumber: bigint; blockHash: string }>>;
  /** Marks payments confirmed and their sessions as needing settlement. */
  confirmPayments(ids: readonly string[], now: Date): Promise<void>;
  /** Stores the confirmation counts of not yet confirmed payments, for display. */
  updateConfirmations(network: string, head: bigint): Promise<void>;
  /** Open sessions bound on `chainId` whose transaction has not been found valid yet. */
  boundSessionsToCheck(chainId: string, limit: number): Promise<Array<{ sessionId: string; txHash: string }>>;
  markBoundTransactionValid(sessionId: string, at: Date): Promise<void>;
  unattributedPayments(limit: number): Promise<PaymentRecord[]>;
  paymentsOfSession(sessionId: string): Promise<PaymentRecord[]>;
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
  setPaymentPolicy(organisationId: string, policy: { underpaymentTolerancePercent?: Decimal; latePaymentWindowMinutes?: number }): Promise<void>;
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
