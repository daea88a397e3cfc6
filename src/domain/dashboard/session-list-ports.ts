import type { CheckoutSessionStatus } from '../sessions/checkout-session.js';
import type { Decimal } from '../shared/money.js';
import type { AssetTicker } from '../shared/assets.js';

/** The filters of the dashboard's sessions list (docs/dashboard.md#sessions-list); every one optional. */
export interface SessionFilter {
  readonly statuses?: readonly CheckoutSessionStatus[];
  /** The asset the payer chose. */
  readonly asset?: AssetTicker;
  /** A network slug a payment or a bound transaction of the session is on. */
  readonly network?: string;
  readonly createdFrom?: Date;
  /** Exclusive. */
  readonly createdBefore?: Date;
  readonly fiatCurrency?: string;
  readonly fiatMin?: Decimal;
  readonly fiatMax?: Decimal;
  /** The payer's e-mail address (case-insensitive) or the merchant's user id for them, exactly. */
  readonly payer?: string;
  /** A transaction bound to the session or paying it. */
  readonly txHash?: string;
  readonly paymentLinkId?: string;
  /** A wallet that paid the session, bound a transaction to it or was named by the payer (any case). */
  readonly payerWallet?: string;
  /** `key=value`: the metadata holds that top-level string; any other text: found in the metadata (any case). */
  readonly metadata?: string;
}

/** Where a page starts: after the session (created_at, id) the last page ended with, newest first. */
export interface SessionCursor {
  readonly createdAt: Date;
  readonly id: string;
}

/** A row of the dashboard's sessions list. */
export interface SessionListRow {
  readonly id: string;
  /** As reads show it: an open session past its expiry with nothing bound shows `expired` before the sweep. */
  readonly status: CheckoutSessionStatus;
  readonly fiatCurrency: string;
  readonly totalAmountFiat: Decimal;
  readonly cryptoCurrency: string | null;
  readonly totalAmountCrypto: Decimal | null;
  readonly amountReceived: Decimal;
  readonly payerEmail: string | null;
  readonly payerId: string;
  readonly paymentLinkId: string | null;
  readonly boundTxHash: string | null;
  readonly createdAt: Date;
  readonly expiresAt: Date;
}

export interface SessionItemRow {
  readonly name: string;
  readonly quantity: number;
  readonly unitPrice: Decimal;
  readonly totalPrice: Decimal;
}

export interface SessionQuoteRow {
  readonly ticker: string;
  readonly unitPriceFiat: Decimal;
  readonly amount: Decimal;
  readonly rateSource: string;
  readonly ratedAt: Date;
}

export type TimelineKind =
  'created' | 'status_changed' | 'quote_changed' | 'bind' | 'transfer' | 'webhook_attempt' | 'refund';

/** One moment of a session's story; the fields that do not apply to its kind are null. */
export interface TimelineEntry {
  readonly at: Date;
  readonly kind: TimelineKind;
  /** status_changed: the statuses and the cause. */
  readonly fromStatus: string | null;
  readonly toStatus: string | null;
  readonly cause: string | null;
  /** bind, transfer: the transaction and its network; quote_changed, transfer: the asset. */
  readonly txHash: string | null;
  readonly network: string | null;
  readonly asset: string | null;
  /** transfer: the amount; quote_changed: the new amount (oldAmount the one before). */
  readonly amount: Decimal | null;
  readonly oldAmount: Decimal | null;
  /** bind: unverified, verified or rejected; transfer: seen, confirmed or reversed; webhook_attempt: the delivery's. */
  readonly outcome: string | null;
  /** bind: why it was rejected. webhook_attempt: the error, if the receiver did not answer. */
  readonly reason: string | null;
  /** transfer: the block, its confirmations, whether it came after expiry, and why it counts for this session. */
  readonly blockNumber: string | null;
  readonly confirmations: number | null;
  readonly late: boolean | null;
  readonly attribution: string | null;
  /** webhook_attempt: the event, the endpoint, the attempt's number and the HTTP status answered. */
  readonly eventType: string | null;
  readonly endpointUrl: string | null;
  readonly attempt: number | null;
  readonly httpStatus: number | null;
  /** webhook_attempt: the delivery, to send again. */
  readonly deliveryId: string | null;
  /** refund: a refund's status change (fromStatus, toStatus, cause; its asset, network, amount, transaction). */
  readonly refundId: string | null;
}

export interface SessionStory extends SessionListRow {
  readonly items: readonly SessionItemRow[];
  readonly quotes: readonly SessionQuoteRow[];
  /** The merchant's metadata as JSON text. */
  readonly metadata: string;
  /** Oldest first. */
  readonly timeline: readonly TimelineEntry[];
}

export interface DashboardSessionReader {
  /** Up to `limit` of the organisation's sessions matching `filter`, newest first, after `after`. */
  list(
    organisationId: string,
    filter: SessionFilter,
    limit: number,
    after: SessionCursor | null,
    now: Date,
  ): Promise<SessionListRow[]>;
  /**
   * The payments counted for these sessions of the organisation (on the chain: none reversed), each with the rate
   * of its asset in the session's quote when its block was made.
   */
  payments(organisationId: string, sessionIds: readonly string[]): Promise<SessionPaymentRow[]>;
  /** Those of these sessions that are the organisation's. */
  ofOrganisation(organisationId: string, sessionIds: readonly string[]): Promise<string[]>;
  /** The session if it is the organisation's; null otherwise. */
  story(organisationId: string, sessionId: string, now: Date): Promise<SessionStory | null>;
}

/** One payment counted for a session (docs/dashboard.md#payments-csv). */
export interface SessionPaymentRow {
  readonly sessionId: string;
  readonly blockTime: Date;
  readonly blockNumber: bigint;
  readonly logIndex: number;
  readonly txHash: string;
  readonly network: string;
  readonly asset: string;
  readonly amount: Decimal;
  /** seen or confirmed. */
  readonly state: string;
  readonly fiatCurrency: string;
  /** The asset's price in the session's quote in force at the block's time; null when it has no quote of it. */
  readonly rate: Decimal | null;
}
