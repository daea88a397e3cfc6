import type { AssetTicker } from '../shared/assets.js';
import type { Decimal } from '../shared/money.js';
import type { RefundEventType } from '../shared/event-types.js';
import type { CheckoutSessionStatus } from '../sessions/checkout-session.js';
import type { Refund, RefundStatus, RefundTransfer } from './refund.js';

/** What storage does for refunds (src/db/refunds/refund.store.ts); the rules are in this folder. */

/** Confirmed money a session received in one asset on one network: the payments that are the source of refunds. */
export interface ReceivedAsset {
  readonly network: string;
  readonly chainId: string;
  readonly asset: AssetTicker;
  /** Lower-case; null for the native coin. */
  readonly tokenAddress: string | null;
  readonly amount: Decimal;
  /** The lower-case addresses the payments came from (a claim_signed proof must name one). */
  readonly payers: readonly string[];
}

/** A session as refunds see it, read with its row locked (FOR UPDATE) so concurrent creates take turns. */
export interface RefundableSession {
  readonly id: string;
  readonly organisationId: string;
  readonly status: CheckoutSessionStatus;
  readonly overpaid: boolean;
  readonly fiatCurrency: string;
  /** The selected asset and its price (the session's total in it); null before one was selected. */
  readonly cryptoCurrency: AssetTicker | null;
  readonly totalAmountCrypto: Decimal | null;
  /** The chain the session was paid on (bound or credited); null before any. */
  readonly chainId: string | null;
  readonly received: readonly ReceivedAsset[];
  /** The session's refunds that hold an amount (HOLDING_STATUSES), whatever their asset. */
  readonly refunds: readonly Refund[];
}

/** The fields of a refund a status change or a sighting of its transfer writes. */
export interface RefundPatch {
  readonly status?: RefundStatus;
  readonly destination?: string;
  readonly destinationSource?: Refund['destinationSource'];
  readonly destinationAt?: Date;
  readonly proof?: Refund['proof'];
  readonly transfer?: Partial<RefundTransfer>;
  readonly failureReason?: string | null;
  readonly updatedAt: Date;
}

export interface RefundStatusChange {
  readonly refundId: string;
  readonly from: RefundStatus | null;
  readonly to: RefundStatus;
  readonly cause: string;
  readonly at: Date;
}

/** One outbox row of a refund event: written with the change it reports. */
export interface RefundEvent {
  readonly id: string;
  readonly organisationId: string;
  readonly sessionId: string;
  readonly type: RefundEventType;
  readonly payload: unknown;
  readonly createdAt: Date;
}

/** Storage inside one refund transaction. */
export interface RefundTx {
  /** Locks the session row (FOR UPDATE) and reads what refunds need of it; null when unknown. */
  lockSession(sessionId: string): Promise<RefundableSession | null>;
  /** Locks the refund row (FOR UPDATE) and reads it; null when unknown. */
  lockRefund(refundId: string): Promise<Refund | null>;
  findByIdempotencyKey(organisationId: string, key: string): Promise<Refund | null>;
  /** False when the organisation's Idempotency-Key was taken meanwhile (nothing written). */
  insertRefund(refund: Refund): Promise<boolean>;
  updateRefund(refundId: string, patch: RefundPatch): Promise<void>;
  recordStatusChange(change: RefundStatusChange): Promise<void>;
  appendEvent(event: RefundEvent): Promise<void>;
  /** Whether `address` (lower-case) is the organisation's: a wallet it has or had, or a session's deposit address. */
  isOwnAddress(organisationId: string, network: string, address: string): Promise<boolean>;
}

export interface RefundStore {
  /** Runs `work` in one database transaction; everything it writes commits or nothing does. */
  transaction<T>(work: (tx: RefundTx) => Promise<T>): Promise<T>;
  findById(refundId: string): Promise<Refund | null>;
  /** The session as refunds see it, without a lock; null when unknown. */
  findSession(sessionId: string): Promise<RefundableSession | null>;
  /** A session's refunds, oldest first. */
  listOfSession(sessionId: string): Promise<Refund[]>;
  /** A refund's status changes, oldest first. */
  historyOf(refundId: string): Promise<RefundStatusChange[]>;
  /** Refunds on `network` in `statuses`, oldest first (the chain watcher's work list). */
  listOnNetwork(network: string, statuses: readonly RefundStatus[]): Promise<Refund[]>;
  /**
   * Locks up to `limit` refunds awaiting a destination whose claim expired at `now` (SKIP LOCKED, so instances take
   * disjoint batches) and runs `work` on each in the same transaction; returns how many it locked.
   */
  lockDueForExpiry(now: Date, limit: number, work: (tx: RefundTx, refund: Refund) => Promise<void>): Promise<number>;
}
