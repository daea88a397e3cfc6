/**
 * The one list of event types (docs/api/webhooks.md): what the outbox records, webhooks deliver, the feed returns,
 * and OpenAPI and the TypeScript client name.
 */
export const CHECKOUT_EVENT_TYPES = [
  'checkout_session.created',
  'checkout_session.tx_bound',
  'checkout_session.partially_paid',
  'checkout_session.paid',
  'checkout_session.expired',
  'checkout_session.failed',
  'checkout_session.late_payment',
  /**
   * A chain reorganisation removed payments the session had been credited with, or an exact payment in another asset
   * superseded a partial session's bound parts (docs/decisions/0024).
   */
  'checkout_session.payment_reversed',
  /** The quote outlived KASSA_QUOTE_TTL_MINUTES and the session was re-priced. */
  'checkout_session.quote_updated',
] as const;

export type CheckoutEventType = (typeof CHECKOUT_EVENT_TYPES)[number];

/** A collect moved money from deposit addresses to the organisation's wallet (docs/api/webhooks.md#funds-collected). */
export const FUNDS_COLLECTED = 'funds.collected';

/** A refund's changes (docs/api/refunds.md#events): each carries the refund view. */
export const REFUND_EVENT_TYPES = [
  'refund.created',
  'refund.destination_submitted',
  'refund.sent',
  'refund.confirmed',
  'refund.failed',
  'refund.cancelled',
  'refund.expired',
] as const;

export type RefundEventType = (typeof REFUND_EVENT_TYPES)[number];

/** Every event type: the sessions', the refunds' and the organisation's own. */
export const EVENT_TYPES = [...CHECKOUT_EVENT_TYPES, ...REFUND_EVENT_TYPES, FUNDS_COLLECTED] as const;
export type EventType = (typeof EVENT_TYPES)[number];

/** The types a webhook endpoint's filter may name: every type (an empty filter means all of them). */
export type WebhookEventType = EventType;

export const WEBHOOK_EVENT_TYPES: readonly WebhookEventType[] = EVENT_TYPES;
