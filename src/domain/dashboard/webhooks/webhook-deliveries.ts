import type { DomainContext } from '../../context.js';
import { notFound } from '../../shared/errors.js';
import { isUuid } from '../../shared/uuid.js';
import type { ReceiverResponse, WebhookAttemptRecord, WebhookDeliveryStatus } from '../../webhooks/webhook-ports.js';
import { toEventEnvelope } from '../../webhooks/webhook.views.js';
import { requirePermission } from '../roles.js';
import { roleIn, type Principal } from '../sign-in.js';

/** How long a receiver's whole answer and headers are kept; the first 1,024 bytes stay (docs/dashboard.md#webhooks). */
export const WHOLE_RESPONSE_KEEP_DAYS = 30;
/** The start of an answer kept for good (src/webhooks/http-post.ts cuts it there). */
const EXCERPT_BYTES = 1024;

/** What the page shows of a receiver's answer: the whole of it as kept, whether that is all of it, its headers. */
export interface DashboardResponse {
  /** The body as kept: whole up to 64 KiB, or its first 1,024 bytes for an attempt whose answer was cleared. */
  readonly response: string | null;
  readonly responseTruncated: boolean;
  /** The whole answer's size in bytes, when known. */
  readonly responseSize: number | null;
  /** Null when not kept (no answer, or cleared). */
  readonly responseHeaders: Readonly<Record<string, string>> | null;
}

export interface DashboardDeliveryAttempt extends DashboardResponse {
  readonly attempt: number;
  readonly httpStatus: number | null;
  readonly latencyMs: number;
  readonly error: string | null;
  readonly at: Date;
}

export function responseOf(
  excerpt: string | null,
  kept: ReceiverResponse | null | undefined,
  known: { responseSize?: number | null; responseTruncated?: boolean } = {},
): DashboardResponse {
  if (kept)
    return {
      response: kept.body,
      responseTruncated: kept.truncated,
      responseSize: kept.size,
      responseHeaders: kept.headers,
    };
  // Only the excerpt (cleared, or from before whole answers were kept): cut when it fills its 1,024 bytes.
  const bytes = excerpt === null ? 0 : Buffer.byteLength(excerpt);
  const cut = known.responseTruncated === true || bytes >= EXCERPT_BYTES;
  return {
    response: excerpt,
    responseTruncated: cut,
    responseSize: known.responseSize ?? (excerpt === null || cut ? null : bytes),
    responseHeaders: null,
  };
}

const attemptView = (attempt: WebhookAttemptRecord): DashboardDeliveryAttempt => ({
  attempt: attempt.attempt,
  httpStatus: attempt.statusCode,
  latencyMs: attempt.latencyMs,
  error: attempt.error,
  ...responseOf(attempt.responseExcerpt, attempt.response, attempt),
  at: attempt.createdAt,
});

export interface DashboardDeliveryDetail {
  readonly id: string;
  readonly endpointId: string;
  readonly eventType: string;
  readonly status: WebhookDeliveryStatus;
  /** The JSON body every attempt sent (the event's envelope), as the delivery worker sends it. */
  readonly requestBody: string;
  readonly attempts: readonly DashboardDeliveryAttempt[];
}

/** One delivery of the organisation with the body it sends and every attempt's answer (role `read`). */
export async function readDeliveryFromDashboard(
  ctx: DomainContext,
  principal: Principal,
  organisationId: string,
  deliveryId: string,
): Promise<DashboardDeliveryDetail> {
  requirePermission(roleIn(principal, organisationId), 'read');
  const missing = () => notFound(`Webhook delivery ${deliveryId} not found`);
  const delivery = isUuid(deliveryId) ? await ctx.store.webhooks.findDelivery(deliveryId) : null;
  if (!delivery) throw missing();
  const endpoint = await ctx.store.webhooks.findEndpoint(delivery.endpointId);
  if (!endpoint || endpoint.organisationId !== organisationId) throw missing();
  const event = await ctx.store.webhooks.findEvent(delivery.eventId);
  if (!event) throw missing();
  return {
    id: delivery.id,
    endpointId: delivery.endpointId,
    eventType: delivery.eventType,
    status: delivery.status,
    requestBody: JSON.stringify(toEventEnvelope(event)),
    attempts: delivery.attemptLog.map(attemptView),
  };
}
