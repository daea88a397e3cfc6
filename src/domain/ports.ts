import type { BrandingStore } from './organisations/branding-ports.js';
import type { BoundTransactionTxStore, ChainLedger } from './payments/chain-ports.js';
import type { CheckoutSession } from './sessions/checkout-session.js';
import type { ApiKeyStore, OrganisationStore } from './organisations/organisation-ports.js';
import type { PaymentLinkStore } from './payment-links/payment-link.js';
import type { AmountClaimRequest, PaymentTxStore } from './payments/payment-ports.js';
import type { NewSessionOutcome, NewSessionWrite, SessionReader, SessionTxStore } from './sessions/session-ports.js';
import type { WebhookStore } from './webhooks/webhook-ports.js';
import type { DashboardStore } from './dashboard/dashboard-ports.js';
import type { RefundStore } from './refunds/refund-ports.js';

/**
 * What the domain needs from storage, in one object, implemented over Prisma in src/db (the domain never sees the
 * client); each area's ports live beside this file.
 */
export interface Store {
  readonly sessions: SessionReader;
  readonly organisations: OrganisationStore;
  readonly apiKeys: ApiKeyStore;
  readonly webhooks: WebhookStore;
  /** Payment links (docs/hosted-pages.md#payment-links). */
  readonly paymentLinks: PaymentLinkStore;
  /** Organisations' logo and colour on the hosted pages (docs/hosted-pages.md#branding-and-languages). */
  readonly branding: BrandingStore;
  /** Dashboard accounts, sessions and audit log (docs/dashboard.md). */
  readonly dashboard: DashboardStore;
  /** Refunds of sessions (docs/api/refunds.md). */
  readonly refunds: RefundStore;
  /**
   * Writes a new session with everything that goes with it (key, link use, unique amounts, items, quotes, history,
   * outbox event) in one atomic step and one round trip (docs/benchmarks.md).
   */
  createSession(write: NewSessionWrite): Promise<NewSessionOutcome>;
  /**
   * Per claim, the step (below `maxSteps`) of its unique amount most likely free, guessed from this instance's past
   * tries without a round trip; createSession claims it, or the smallest free step when it is taken.
   */
  offsetsToTry(claims: readonly AmountClaimRequest[], maxSteps: number): number[];
  /** Runs `work` in one database transaction; everything it writes commits or nothing does. */
  transaction<T>(work: (tx: TxStore) => Promise<T>): Promise<T>;
  /**
   * Locks up to `limit` open sessions past expiry (and past the in-flight grace of a bind in time) with SKIP LOCKED, so
   * instances sweep at once, and runs `work` on each in the same transaction; returns how many it locked.
   */
  lockSessionsDueForExpiry(
    now: Date,
    inflightGraceMinutes: number,
    limit: number,
    work: (tx: TxStore, session: CheckoutSession) => Promise<void>,
  ): Promise<number>;
  /**
   * Open sessions due for re-pricing: quoted `ttlMinutes` or more before `now`, nothing credited, no bound transaction
   * on chain, and every network scanned past the quote's end (or `graceMinutes` after it).
   */
  sessionsDueForRequote(
    now: Date,
    ttlMinutes: number,
    graceMinutes: number,
    limit: number,
    /**
     * The assets with a fresh rate, by fiat currency: a due session one of whose quoted assets has none in its
     * currency is left out (it keeps its quote until rates come back) and does not take a place in `limit`.
     */
    priced: ReadonlyMap<string, readonly string[]>,
  ): Promise<Array<{ id: string; fiatCurrency: string }>>;
  /** The fiat currencies of the sessions due for re-pricing (as sessionsDueForRequote finds them, rates aside). */
  currenciesDueForRequote(now: Date, ttlMinutes: number, graceMinutes: number): Promise<string[]>;
  /**
   * Frees released amounts no transfer can still be meant for (docs/payment-rules.md#2-who-a-scanned-transfer-pays);
   * an open session keeps them for `keepOpenMinutes` and until its networks are scanned past that.
   */
  purgeReleasedAmountClaims(now: Date, graceMinutes: number, keepOpenMinutes?: number): Promise<number>;
  /**
   * Locks up to `limit` sessions whose payments changed since last settled (SKIP LOCKED) and runs `work` on each in the
   * same transaction; returns how many it locked.
   */
  lockSessionsWithChangedPayments(
    limit: number,
    work: (tx: TxStore, session: CheckoutSession) => Promise<void>,
  ): Promise<number>;
  readonly chain: ChainLedger;
  /** Forgets idempotency keys created before `before`. */
  deleteIdempotencyKeysBefore(before: Date): Promise<number>;
}

/** Storage inside one transaction, every area's part of it. Never mix with the outer Store while it is open. */
export interface TxStore extends SessionTxStore, PaymentTxStore, BoundTransactionTxStore {}
