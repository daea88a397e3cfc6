import type { BrandingStore } from './organisations/branding-ports.js';
import type { BoundTransactionTxStore, ChainLedger } from './payments/chain-ports.js';
import type { CheckoutSession } from './sessions/checkout-session.js';
import type { ApiKeyStore, OrganisationStore } from './organisations/organisation-ports.js';
import type { PaymentLinkStore } from './payment-links/payment-link.js';
import type { AmountClaimRequest, PaymentTxStore } from './payments/payment-ports.js';
import type { NewSessionOutcome, NewSessionWrite, SessionReader, SessionTxStore } from './sessions/session-ports.js';
import type { WebhookStore } from './webhooks/webhook-ports.js';
import type { DashboardStore } from './dashboard/dashboard-ports.js';

/**
 * What the domain needs from storage, gathered in one object. Implemented over Prisma in
 * src/db (src/db/prisma-store.ts); the domain never sees the Prisma client. Each area's
 * ports live beside this file: sessions, payments, chains, organisations, branding, payment
 * links and webhooks.
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
  /**
   * Writes a new session with everything that goes with it in one atomic step
   * (docs/benchmarks.md: one round trip): its Idempotency-Key, a payment link's use, its unique
   * amounts, its items, quotes, networks, history row and outbox event.
   */
  createSession(write: NewSessionWrite): Promise<NewSessionOutcome>;
  /**
   * Per claim, in the claims' order, the step (below `maxSteps`) of its unique amount most likely
   * free: a guess from this instance's own past tries, made without a round trip (0 when it has
   * none), and handed out (the next create at the same price is given the step after it).
   * createSession claims it, or the smallest free step when it is taken.
   */
  offsetsToTry(claims: readonly AmountClaimRequest[], maxSteps: number): number[];
  /** Runs `work` in one database transaction; everything it writes commits or nothing does. */
  transaction<T>(work: (tx: TxStore) => Promise<T>): Promise<T>;
  /**
   * Locks up to `limit` open sessions that are past expiry (and past the in-flight grace when
   * a transaction was bound in time), each for this caller only (SKIP LOCKED, so several
   * instances can sweep at once), and runs `work` on each in the same transaction.
   * Returns how many it locked; what happens to them is `work`'s business.
   */
  lockSessionsDueForExpiry(
    now: Date,
    inflightGraceMinutes: number,
    limit: number,
    work: (tx: TxStore, session: CheckoutSession) => Promise<void>,
  ): Promise<number>;
  /**
   * Open sessions whose quotes were made `ttlMinutes` or more before `now`, with no
   * payment credited, no bound transaction known to the chain and every network they can
   * be paid on scanned past the end of the quote (or `graceMinutes` after it): due for re-pricing.
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
   * Frees the unique amounts released (docs/payment-rules.md, rule 4) that no unscanned transfer
   * can still be meant for: their session is closed and its networks are scanned past its close, or
   * `graceMinutes` passed since the release; an open session keeps what it gave up for `keepOpenMinutes` (the quote
   * lifetime; at most, and by default, `graceMinutes`) and until its networks are scanned past that time (rule 2).
   */
  purgeReleasedAmountClaims(now: Date, graceMinutes: number, keepOpenMinutes?: number): Promise<number>;
  /**
   * Locks up to `limit` sessions whose payments changed since they were last settled, each
   * for this caller only (SKIP LOCKED), and runs `work` on each in the same transaction.
   * Returns how many it locked; settling them is `work`'s business.
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
