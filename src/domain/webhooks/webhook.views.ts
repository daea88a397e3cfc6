import { z } from 'zod';
import { merchantSessionViewSchema, type MerchantSessionView } from '../sessions/checkout-session.views.js';
import {
  CHECKOUT_EVENT_TYPES,
  EVENT_TYPES,
  FUNDS_COLLECTED,
  REFUND_EVENT_TYPES,
  WEBHOOK_EVENT_TYPES,
  type CheckoutEventType,
  type RefundEventType,
} from '../shared/event-types.js';
import { refundViewSchema, type RefundView } from '../refunds/refund.views.js';
import { fundsCollectedSchema, type FundsCollectedView } from '../organisations/deposit-collections.js';
import { dateTime, uuid } from '../shared/view-fields.js';
import type { StoredEvent, WebhookDeliveryRecord, WebhookEndpointRecord } from './webhook-ports.js';

/** The views of webhook endpoints and events: each zod schema is the one source of its shape. */

export const eventTypeSchema = z.enum(EVENT_TYPES).describe('The type of an event (docs/api/webhooks.md)');

/** Public JSON of an endpoint (never the secret). */
export const webhookEndpointViewSchema = z.strictObject({
  id: uuid,
  organisation_id: uuid,
  url: z.string(),
  events: z.array(z.enum(WEBHOOK_EVENT_TYPES)).describe('Empty = every type'),
  enabled: z.boolean(),
  previous_secret_expires_at: dateTime
    .nullable()
    .describe('While set, deliveries carry a second signature made with the previous secret'),
  created_at: dateTime,
  updated_at: dateTime,
});

/** The endpoint and its signing secret: the answers of create and rotate-secret only. */
export const webhookEndpointWithSecretSchema = webhookEndpointViewSchema
  .extend({
    secret: z
      .string()
      .regex(/^whsec_[0-9a-f]{64}$/)
      .describe('Shown only in this answer'),
  })
  .describe('The endpoint and its signing secret (create and rotate-secret only)');

/** A session's event: its merchant view when the event happened. */
const sessionEventSchema = z.strictObject({
  id: uuid.describe('Also sent as X-Service-Event-Id; deduplicate on it'),
  type: z.enum(CHECKOUT_EVENT_TYPES).describe('The type of a session event (docs/api/webhooks.md)'),
  created_at: dateTime,
  data: merchantSessionViewSchema.describe('The merchant view of the session when the event happened'),
});

/** The organisation's `funds.collected`: what a collect moved (docs/api/webhooks.md#funds-collected). */
const fundsCollectedEventSchema = z.strictObject({
  id: uuid.describe('Also sent as X-Service-Event-Id; deduplicate on it'),
  type: z.literal(FUNDS_COLLECTED),
  created_at: dateTime,
  data: fundsCollectedSchema,
});

/** A refund's event: the refund view after the change (docs/api/refunds.md#events). */
const refundEventSchema = z.strictObject({
  id: uuid.describe('Also sent as X-Service-Event-Id; deduplicate on it'),
  type: z.enum(REFUND_EVENT_TYPES).describe('The type of a refund event (docs/api/refunds.md#events)'),
  created_at: dateTime,
  data: refundViewSchema.describe('The refund when the event happened'),
});

/** The event as merchants receive it, in webhooks and in the feed; `type` tells what `data` is. */
export const eventEnvelopeSchema = z
  .discriminatedUnion('type', [sessionEventSchema, refundEventSchema, fundsCollectedEventSchema])
  .describe('The envelope of webhooks and of the feed');

/** A page of the events feed (GET /events). */
export const eventPageSchema = z.strictObject({
  data: z.array(eventEnvelopeSchema),
  next_cursor: z.string().nullable().describe('Pass as `after` for the next page'),
  has_more: z.boolean(),
});

export type WebhookEndpointView = z.infer<typeof webhookEndpointViewSchema>;
export type EventEnvelope = z.infer<typeof eventEnvelopeSchema>;
export type EventPage = z.infer<typeof eventPageSchema>;

export function toEventEnvelope(event: StoredEvent): EventEnvelope {
  // The outbox holds only what was written there: a type of the list and its view.
  const created_at = event.createdAt.toISOString();
  if (event.type === FUNDS_COLLECTED)
    return { id: event.id, type: FUNDS_COLLECTED, created_at, data: event.payload as FundsCollectedView };
  if ((REFUND_EVENT_TYPES as readonly string[]).includes(event.type))
    return { id: event.id, type: event.type as RefundEventType, created_at, data: event.payload as RefundView };
  const type = event.type as CheckoutEventType;
  return { id: event.id, type, created_at, data: event.payload as MerchantSessionView };
}

/** Public JSON of an endpoint (never the secret). */
export function toEndpointView(endpoint: WebhookEndpointRecord, now: Date = new Date()): WebhookEndpointView {
  const rotating = endpoint.previousSecretExpiresAt !== null && endpoint.previousSecretExpiresAt > now;
  return {
    id: endpoint.id,
    organisation_id: endpoint.organisationId,
    url: endpoint.url,
    events: [...endpoint.events] as WebhookEndpointView['events'],
    enabled: endpoint.enabled,
    previous_secret_expires_at: rotating ? endpoint.previousSecretExpiresAt!.toISOString() : null,
    created_at: endpoint.createdAt.toISOString(),
    updated_at: endpoint.updatedAt.toISOString(),
  };
}

/** A delivery and its attempts, as `kassa webhooks deliveries --json` prints them. */
export function toDeliveryView(delivery: WebhookDeliveryRecord) {
  return {
    id: delivery.id,
    endpoint_id: delivery.endpointId,
    event_id: delivery.eventId,
    event_type: delivery.eventType,
    status: delivery.status,
    attempts: delivery.attempts,
    next_attempt_at: delivery.status === 'pending' ? delivery.nextAttemptAt.toISOString() : null,
    give_up_at: delivery.giveUpAt.toISOString(),
    last_status: delivery.lastStatus,
    last_error: delivery.lastError,
    delivered_at: delivery.deliveredAt?.toISOString() ?? null,
    created_at: delivery.createdAt.toISOString(),
    attempt_log: delivery.attemptLog.map((attempt) => ({
      attempt: attempt.attempt,
      status_code: attempt.statusCode,
      latency_ms: attempt.latencyMs,
      error: attempt.error,
      response_excerpt: attempt.responseExcerpt,
      at: attempt.createdAt.toISOString(),
    })),
  };
}
