import type { CheckoutSession, CheckoutSessionStatus, CryptoQuote } from './checkout-session.js';
import type { CheckoutEventType } from './event-types.js';
import type { ExpiryHolds, ReceivedTotals } from './status-machine.js';
import type { Decimal } from './money.js';
import type { AssetTicker } from './assets.js';
import type { Attribution, AttributionCandidates, ChainTransfer } from './payments.js';
import type { BoundTxEvidence } from './bound-transactions.js';
import type { WebhookStore } from './webhook-ports.js';
import type { StoredSecret } from './secret-box.js';
import type { PaymentLinkStore } from './payment-link.js';
import type { BrandingStore } from './branding.js';

/**
 * What the domain needs from storage. Implemented over Prisma in src/db; the
 * domain never sees the Prisma client.
 */
export interface Store {
  readonly sessions: SessionReader;
  readonly organisations: OrganisationStore;
  readonly apiKeys: ApiKeyStore;
  readonly webhooks: WebhookStore;
  /** Payment links (issue 12). */
  readonly paymentLinks: PaymentLinkStore;
  /** Organisations' logo and colour on the hosted pages (issue 12). */
  readonly branding: BrandingStore;
  /**
   * Writes a new session with everything that goes with it in one atomic step (README
   * "Benchmarks": one round trip): its Idempotency-Key, a payment link's use, its unique
   * amounts, its items, quotes, networks, history row and outbox event.
   */
  createSession(write: NewSessionWrite): Promise<NewSessionOutcome>;
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
   * Open sessions whose quotes were made `ttlMinutes` or more before `now`, with no
   * payment credited and no bound transaction known to the chain: due for re-pricing.
   */
  sessionsDueForRequote(now: Date, ttlMinutes: number, limit: number): Promise<Array<{ id: string; fiatCurrency: string }>>;
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
  /**
   * The session as this instance's cache holds it right now, without a read; undefined when it
   * is not cached (or the cache may not serve). A store without a cache leaves it out.
   */
  peek?(id: string): CheckoutSession | undefined;
  /** The transactions bound to the session, oldest first. */
  transactionsOf(id: string): Promise<BoundTransaction[]>;
  /** What holds the session open past expires_at, read without a lock. */
  expiryHolds(session: CheckoutSession, graceMinutes: number): Promise<ExpiryHolds>;
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
  readonly amountReceivedLate?: Decimal;
  readonly amountPending?: Decimal;
  readonly paymentsChangedAt?: Date | null;
  readonly boundTxCheckedAt?: Date;
  readonly updatedAt: Date;
}

/** A transaction a payer bound to a session: a hint, verified from its own receipt before anything is credited. */
export interface BoundTransaction {
  readonly id: string;
  readonly sessionId: string;
  readonly network: string;
  readonly chainId: string;
  readonly txHash: string;
  readonly cryptoCurrency: AssetTicker;
  readonly payerWalletAddress: string | null;
  readonly state: 'unverified' | 'verified' | 'rejected';
  readonly reason: string | null;
  /** When the chain first knew the transaction (pending or mined); null while it does not. */
  readonly seenOnChainAt: Date | null;
  readonly createdAt: Date;
}

/** One asset's amount to make unique among the open sessions on the same wallets. */
export interface AmountClaimRequest {
  readonly ticker: AssetTicker;
  readonly baseAmount: Decimal;
  readonly step: Decimal;
  /** The session's wallets on the networks that carry the asset. */
  readonly wallets: ReadonlyArray<{ readonly network: string; readonly walletAddress: string }>;
}

/** A session's confirmed and pending money in its asset on its chain. */
export interface PaymentTotals extends ReceivedTotals {
  /** Credited, seen on chain, not confirmed yet. */
  readonly pending: Decimal;
}

/** Who a transfer is credited to, and why. */
export interface Credit {
  readonly sessionId: string;
  readonly attribution: Attribution;
}

/** A new session as create writes it (Store.createSession). */
export interface NewSessionWrite {
  /** The session with its quotes at their base amounts; the claimed offsets are applied on write. */
  readonly session: CheckoutSession;
  /** Per quote position, the amount to make unique (UNIQUE_AMOUNT_MAX_STEPS tries at most). */
  readonly claims: ReadonlyArray<AmountClaimRequest & { readonly position: number }>;
  readonly maxSteps: number;
  /** The history row's cause. */
  readonly cause: string;
  /** The `checkout_session.created` event, its payload showing the base amounts. */
  readonly event: OutboxEvent;
  /** Where quote `position`'s amount sits in the event's payload: it is set to the claimed amount (8 decimals). */
  readonly amountPath: (position: number) => readonly string[];
  /** The merchant's signature, recorded as used in the same write (README "Signing a merchant call"). */
  readonly signature: { readonly apiKeyId: string; readonly signature: string; readonly keepUntil: Date } | null;
  readonly idempotency: { readonly key: string; readonly requestHash: string } | null;
  /** Counts one use of the payment link, only while it is active, not expired at `at` and below max_uses. */
  readonly linkUse: { readonly linkId: string; readonly at: Date } | null;
}

export type NewSessionOutcome =
  /** Written; the claimed offset per quote position (null: every amount was taken, the base amount stays). */
  | { readonly kind: 'created'; readonly offsets: ReadonlyMap<number, number | null> }
  /** Nothing written: the signature was used before (a replayed request). */
  | { readonly kind: 'replayed_signature' }
  /** Nothing written: the Idempotency-Key was taken first (by a concurrent request too). */
  | { readonly kind: 'replay'; readonly record: IdempotencyRecord }
  /** Nothing written: the payment link takes no more payers (inactive, expired or used up). */
  | { readonly kind: 'link_unavailable' };

/** Storage inside one transaction. Never mix with the outer Store while it is open. */
export interface TxStore {
  findIdempotencyKey(organisationId: string, key: string): Promise<IdempotencyRecord | null>;
  /** Reads the session and locks its row until the transaction ends. */
  lockSession(id: string): Promise<CheckoutSession | null>;
  updateSession(id: string, patch: SessionPatch): Promise<void>;
  recordStatusChange(change: StatusChange): Promise<void>;
  appendEvent(event: OutboxEvent): Promise<void>;

  /** What holds an open session past expires_at (payments in flight, a watched chain not scanned that far). */
  expiryHolds(session: CheckoutSession, graceMinutes: number): Promise<ExpiryHolds>;
  /** Confirmed money in `asset` on `chainId` split at expires_at, and what is credited but not confirmed. */
  paymentTotals(session: CheckoutSession, asset: AssetTicker, chainId: string): Promise<PaymentTotals>;

  /**
   * Claims, per asset, the first of `baseAmount + k × step` (0 ≤ k < maxSteps) that no other
   * open session holds on any of the wallets. Returns k per ticker, or null when all are taken.
   */
  claimUniqueAmounts(sessionId: string, requests: readonly AmountClaimRequest[], maxSteps: number): Promise<Map<AssetTicker, number | null>>;
  /** Gives up the session's amount claims, except the one for (`keep.asset`, `keep.network`) if given. */
  releaseAmountClaims(sessionId: string, keep?: { asset: AssetTicker; network: string }): Promise<void>;
  /**
   * The open session whose unique amount `transfer` is exactly, if it may be paid by it:
   * created before the block (less the clock skew), asset and chain not locked to others.
   */
  exactAmountOwner(transfer: ChainTransfer): Promise<string | null>;

  /**
   * Records transfers as seen (or finds them recorded) and credits each to its `Credit`
   * unless it is already credited. Returns, per transfer, the session it is now credited to.
   * Every session credited here is marked for settlement.
   */
  creditTransfers(transfers: readonly ChainTransfer[], credits: ReadonlyArray<Credit | null>, at: Date): Promise<Array<string | null>>;
  /**
   * Selects `asset` on `chainId` for a session with none yet: the required amount is the quote
   * that was valid at `firstSeenAt` (a re-pricing after the payment was first seen does not apply).
   * Gives up the session's other amount claims. Returns the required amount.
   */
  lockAsset(sessionId: string, asset: AssetTicker, network: string, chainId: string, firstSeenAt: Date, at: Date): Promise<Decimal>;
  /** The session a transaction's transfers are credited to on `chainId`, if any (not reversed). */
  sessionCreditedWith(txHash: string, chainId: string): Promise<string | null>;

  transactionsOfSession(sessionId: string): Promise<BoundTransaction[]>;
  /** Sessions other than `sessionId` holding `txHash` on `chainId` as a bound transaction not rejected. */
  otherSessionsBinding(txHash: string, chainId: string, sessionId: string): Promise<BoundTransaction[]>;
  insertBoundTransaction(bound: BoundTransaction): Promise<void>;
  updateBoundTransaction(id: string, patch: { state?: BoundTransaction['state']; reason?: string; seenOnChainAt?: Date; checkedAt: Date }): Promise<void>;

  /** Whether any payment is credited to the session, or a transaction bound to it is known to the chain (not rejected). */
  paymentActivity(sessionId: string): Promise<boolean>;
  /** Replaces the session's quotes after its quote lifetime, recording each asset's old and new rate. */
  replaceQuotes(session: CheckoutSession, quotes: readonly CryptoQuote[], at: Date): Promise<void>;
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
    attribute: (candidates: AttributionCandidates) => Credit | null,
    now: Date,
  ): Promise<boolean>;
  /**
   * Records that the leader `instanceId` has scanned through `head`, read at `at`: every
   * block mined before `at` is scanned (expiry waits for that, README "Payment rules").
   */
  markCaughtUp(network: string, instanceId: string, head: bigint, at: Date): Promise<void>;
  /** Undoes everything from `fromBlock` up on `network` (a reorganisation): payments reversed, cursor rewound. */
  rollBack(network: string, fromBlock: bigint, now: Date): Promise<number>;
  /** Payments seen up to `throughBlock` and not yet confirmed, oldest first. */
  paymentsAwaitingConfirmation(network: string, throughBlock: bigint): Promise<Array<{ id: string; blockNumber: bigint; blockHash: string }>>;
  /** Marks payments confirmed and their sessions as needing settlement. */
  confirmPayments(ids: readonly string[], now: Date): Promise<void>;
  /** Stores the confirmation counts of not yet confirmed payments, for display. */
  updateConfirmations(network: string, head: bigint): Promise<void>;
  /** Bound transactions on `chainId` not judged yet, of open sessions, oldest first. */
  boundTransactionsToCheck(chainId: string, limit: number): Promise<BoundTransaction[]>;
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
  /** Throws the conflict of `walletTaken` when another organisation holds the wallet on that network. */
  setWallet(organisationId: string, network: string, address: string): Promise<void>;
  /** The organisation whose receiving wallet `address` is on `network`, if any. */
  walletOwner(network: string, address: string): Promise<string | null>;
  setPaymentPolicy(organisationId: string, policy: { underpaymentTolerancePercent?: Decimal; latePaymentWindowMinutes?: number }): Promise<void>;
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

/** Asks a network about one transaction (the bind use-case verifies at once what is already mined). */
export interface ChainReader {
  /** What `network` says about `txHash` now; null when it cannot be asked (no RPC URL, or no answer in time). */
  evidence(network: string, txHash: string): Promise<BoundTxEvidence | null>;
}
