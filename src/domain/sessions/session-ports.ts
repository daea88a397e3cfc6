import type { AssetTicker } from '../shared/assets.js';
import type { BoundTransaction } from '../payments/chain-ports.js';
import type { CheckoutSession, CheckoutSessionStatus, CryptoQuote } from './checkout-session.js';
import type { Decimal } from '../shared/money.js';
import type { AmountClaimRequest } from '../payments/payment-ports.js';
import type { CheckoutEventType } from '../shared/event-types.js';
import type { ExpiryHolds } from './status-machine.js';
import type { SessionReceiving } from '../organisations/deposit-addresses.js';

/**
 * Checkout sessions as storage keeps them: reads, the one-step create, and a use-case's changes in a transaction, so
 * a status change, its history row and its outbox event commit together.
 */

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
  /** The session was created in deposit mode (it keeps the mode): each network's wallet is an address of its own. */
  receivesAtDepositAddress(id: string): Promise<boolean>;
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
  readonly restAmount?: Decimal | null;
  readonly paymentsChangedAt?: Date | null;
  readonly boundTxCheckedAt?: Date;
  /** When the current quotes were made (re-pricing; their lifetime counts from it). */
  readonly quotedAt?: Date;
  readonly updatedAt: Date;
}

/** A new session as create writes it (Store.createSession). */
export interface NewSessionWrite {
  /**
   * The session with each quote at the step to claim first (`offsetSteps`, Store.offsetsToTry); a step
   * taken meanwhile is replaced by the smallest free one, and the outcome says which was claimed.
   */
  readonly session: CheckoutSession;
  /** Per quote position, the amount to make unique (`maxSteps` tries at most). */
  readonly claims: ReadonlyArray<AmountClaimRequest & { readonly position: number }>;
  readonly maxSteps: number;
  /** The history row's cause. */
  readonly cause: string;
  /** The `checkout_session.created` event, its payload showing the session as given. */
  readonly event: OutboxEvent;
  /**
   * Where quote `position`'s amount sits in the event's payload: set to the claimed amount (8 decimals) when that
   * is not the one tried.
   */
  readonly amountPath: (position: number) => readonly string[];
  /** The merchant's signature, recorded as used in the same write (docs/api/rest.md#signing-a-merchant-call). */
  readonly signature: { readonly apiKeyId: string; readonly signature: string; readonly keepUntil: Date } | null;
  readonly idempotency: { readonly key: string; readonly requestHash: string } | null;
  /** Counts one use of the payment link, only while it is active, not expired at `at` and below max_uses. */
  readonly linkUse: { readonly linkId: string; readonly at: Date } | null;
  /** The receiving mode the session keeps, and its deposit addresses' destinations; shared wallet when absent. */
  readonly receiving?: SessionReceiving;
}

export type NewSessionOutcome =
  /** Written; the claimed offset per quote position. */
  | { readonly kind: 'created'; readonly offsets: ReadonlyMap<number, number> }
  /** Nothing written: every unique amount of `ticker`'s price is held on one of its wallets (rule 4). */
  | { readonly kind: 'amounts_taken'; readonly ticker: AssetTicker }
  /** Nothing written: the signature was used before (a replayed request). */
  | { readonly kind: 'replayed_signature' }
  /** Nothing written: the Idempotency-Key was taken first (by a concurrent request too). */
  | { readonly kind: 'replay'; readonly record: IdempotencyRecord }
  /** Nothing written: the payment link takes no more payers (inactive, expired or used up). */
  | { readonly kind: 'link_unavailable' };

/** The session part of storage inside one transaction (TxStore, src/domain/ports.ts). */
export interface SessionTxStore {
  findIdempotencyKey(organisationId: string, key: string): Promise<IdempotencyRecord | null>;
  /** Reads the session and locks its row until the transaction ends. */
  lockSession(id: string): Promise<CheckoutSession | null>;
  updateSession(id: string, patch: SessionPatch): Promise<void>;
  recordStatusChange(change: StatusChange): Promise<void>;
  appendEvent(event: OutboxEvent): Promise<void>;
  /** What holds an open session past expires_at (payments in flight, a watched chain not scanned that far). */
  expiryHolds(session: CheckoutSession, graceMinutes: number): Promise<ExpiryHolds>;
  /**
   * A credited payment, a bound transaction known to the chain, or a network not yet scanned past the quote's end keeps
   * the quote (docs/payment-rules.md, rule 7).
   */
  requoteHeld(sessionId: string, now: Date, ttlMinutes: number, graceMinutes: number): Promise<boolean>;
  /** Replaces the session's quotes after its quote lifetime, recording each asset's old and new rate. */
  replaceQuotes(session: CheckoutSession, quotes: readonly CryptoQuote[], at: Date): Promise<void>;
}
