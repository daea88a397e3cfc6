import { randomUUID } from 'node:crypto';
import type { DomainContext } from '../../context.js';
import { signPayload } from '../../organisations/signatures.js';
import { activeSecrets } from '../../webhooks/webhook-secrets.js';
import { notFound } from '../../shared/errors.js';
import { isUuid } from '../../shared/uuid.js';
import {
  createWebhookEndpoint,
  getWebhookEndpoint,
  listWebhookEndpoints,
  rotateWebhookSecret,
  updateWebhookEndpoint,
} from '../../webhooks/webhook-endpoints.js';
import type {
  ReceiverResponse,
  WebhookAttemptRecord,
  WebhookDeliveryStatus,
  WebhookEndpointRecord,
} from '../../webhooks/webhook-ports.js';
import { toEventEnvelope } from '../../webhooks/webhook.views.js';
import { requirePermission } from '../roles.js';
import { roleIn, type Principal } from '../sign-in.js';

/** How many of each endpoint's deliveries the webhooks page shows, newest first. */
export const DELIVERIES_PER_ENDPOINT = 20;
/** The longest response excerpt shown (the attempt log keeps what the delivery worker stored). */
const EXCERPT_CHARS = 500;

export interface DashboardDelivery {
  readonly id: string;
  readonly eventType: string;
  readonly status: WebhookDeliveryStatus;
  readonly attempts: number;
  /** The HTTP status of the latest attempt; null when the receiver did not answer or nothing was attempted. */
  readonly httpStatus: number | null;
  readonly error: string | null;
  readonly responseExcerpt: string | null;
  readonly createdAt: Date;
  readonly deliveredAt: Date | null;
}

export interface DashboardWebhookEndpoint {
  readonly id: string;
  readonly url: string;
  readonly events: readonly string[];
  readonly enabled: boolean;
  readonly createdAt: Date;
  readonly deliveries: readonly DashboardDelivery[];
}

/** The organisation's endpoints (never a secret), each with its latest deliveries and what the receiver answered. */
export async function listDashboardWebhooks(
  ctx: DomainContext,
  principal: Principal,
  organisationId: string,
): Promise<DashboardWebhookEndpoint[]> {
  requirePermission(roleIn(principal, organisationId), 'read');
  const endpoints = await listWebhookEndpoints(ctx, organisationId);
  return Promise.all(
    endpoints.map(async (endpoint) => {
      const deliveries = await ctx.store.webhooks.listDeliveries(endpoint.id, DELIVERIES_PER_ENDPOINT);
      return {
        id: endpoint.id,
        url: endpoint.url,
        events: endpoint.events,
        enabled: endpoint.enabled,
        createdAt: endpoint.createdAt,
        deliveries: deliveries.map((delivery) => {
          const last = delivery.attemptLog.at(-1);
          return {
            id: delivery.id,
            eventType: delivery.eventType,
            status: delivery.status,
            attempts: delivery.attempts,
            httpStatus: last?.statusCode ?? null,
            error: last?.error ?? delivery.lastError,
            responseExcerpt: last?.responseExcerpt?.slice(0, EXCERPT_CHARS) ?? null,
            createdAt: delivery.createdAt,
            deliveredAt: delivery.deliveredAt,
          };
        }),
      };
    }),
  );
}

/**
 * Queues every failed delivery to the organisation's enabled endpoints again, with a fresh give-up time; the audit
 * entry is written in the same transaction.
 */
export async function redeliverFailedFromDashboard(
  ctx: DomainContext,
  principal: Principal,
  organisationId: string,
  address: string,
): Promise<string[]> {
  requirePermission(roleIn(principal, organisationId), 'redeliver_webhooks');
  return ctx.store.dashboard.transaction(async (tx) => {
    const ids = await tx.redeliverFailedWebhooks(organisationId, ctx.webhooks.giveUpHours);
    await tx.audit({
      organisationId,
      userId: principal.userId,
      action: 'webhook.failed_redelivered',
      details: { count: ids.length },
      address,
    });
    return ids;
  });
}

/** Who changed what, for the audit log: the change is made first, then written down (a second write). */
async function audit(
  ctx: DomainContext,
  principal: Principal,
  organisationId: string,
  address: string,
  action: string,
  details: Readonly<Record<string, string | number | boolean | null>>,
): Promise<void> {
  await ctx.store.dashboard.audit({ organisationId, userId: principal.userId, action, details, address });
}

/** An endpoint as the dashboard shows it after a change (never a secret but the one just issued). */
export interface DashboardEndpointChange {
  readonly endpoint: Omit<DashboardWebhookEndpoint, 'deliveries'>;
  /** Shown once: on add and on rotate. */
  readonly secret: string | null;
  readonly previousSecretExpiresAt: Date | null;
}

function changed(
  endpoint: WebhookEndpointRecord,
  secret: string | null = null,
  previousSecretExpiresAt: Date | null = null,
): DashboardEndpointChange {
  const { id, url, events, enabled, createdAt } = endpoint;
  return { endpoint: { id, url, events, enabled, createdAt }, secret, previousSecretExpiresAt };
}

/** "Add an endpoint" (role `manage_webhooks`): the rules and the cap are the REST API's and the CLI's. */
export async function addWebhookFromDashboard(
  ctx: DomainContext,
  principal: Principal,
  organisationId: string,
  input: { url: string; events: readonly string[] },
  address: string,
): Promise<DashboardEndpointChange> {
  requirePermission(roleIn(principal, organisationId), 'manage_webhooks');
  const issued = await createWebhookEndpoint(ctx, organisationId, { url: input.url, events: [...input.events] });
  await audit(ctx, principal, organisationId, address, 'webhook_endpoint.added', {
    endpoint_id: issued.endpoint.id,
    url: issued.endpoint.url,
  });
  return changed(issued.endpoint, issued.secret);
}

/** Disable or enable an endpoint (role `manage_webhooks`); re-enabled, it receives events written from then on. */
export async function setWebhookEnabledFromDashboard(
  ctx: DomainContext,
  principal: Principal,
  organisationId: string,
  endpointId: string,
  enabled: boolean,
  address: string,
): Promise<DashboardEndpointChange> {
  requirePermission(roleIn(principal, organisationId), 'manage_webhooks');
  const endpoint = await updateWebhookEndpoint(ctx, organisationId, endpointId, { enabled });
  await audit(
    ctx,
    principal,
    organisationId,
    address,
    enabled ? 'webhook_endpoint.enabled' : 'webhook_endpoint.disabled',
    {
      endpoint_id: endpoint.id,
    },
  );
  return changed(endpoint);
}

/** A new signing secret, shown once; the old one keeps signing for the overlap (role `manage_webhooks`). */
export async function rotateWebhookSecretFromDashboard(
  ctx: DomainContext,
  principal: Principal,
  organisationId: string,
  endpointId: string,
  address: string,
): Promise<DashboardEndpointChange> {
  requirePermission(roleIn(principal, organisationId), 'manage_webhooks');
  const rotated = await rotateWebhookSecret(ctx, organisationId, endpointId);
  await audit(ctx, principal, organisationId, address, 'webhook_endpoint.secret_rotated', {
    endpoint_id: rotated.endpoint.id,
  });
  return changed(rotated.endpoint, rotated.secret, rotated.previousSecretExpiresAt);
}

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

function responseOf(
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

/** One signed POST to a webhook endpoint under the delivery worker's rules (src/webhooks/http-post.ts). */
export type WebhookPost = (
  url: string,
  body: string,
  headers: Record<string, string>,
) => Promise<{
  statusCode: number | null;
  error: string | null;
  responseExcerpt: string | null;
  response?: ReceiverResponse | null;
  latencyMs: number;
}>;

/** The type of the test event; never in the outbox, the events feed or an endpoint's filter. */
export const TEST_EVENT_TYPE = 'kassa.test';

export interface WebhookTestResult extends DashboardResponse {
  readonly requestBody: string;
  readonly httpStatus: number | null;
  readonly latencyMs: number;
  readonly error: string | null;
}

/**
 * One POST at once of an event of type kassa.test naming the endpoint, signed as deliveries are; its answer is
 * returned and nothing is stored or retried. `organisationId` null: any organisation's endpoint (the CLI).
 */
export async function sendWebhookTestEvent(
  ctx: DomainContext,
  organisationId: string | null,
  endpointId: string,
  post: WebhookPost,
): Promise<WebhookTestResult> {
  const endpoint = await getWebhookEndpoint(ctx, organisationId, endpointId);
  const now = ctx.clock();
  const id = randomUUID();
  const requestBody = JSON.stringify({
    id,
    type: TEST_EVENT_TYPE,
    created_at: now.toISOString(),
    data: { endpoint_id: endpoint.id, organisation_id: endpoint.organisationId },
  });
  const timestamp = String(now.getTime());
  const signatures = activeSecrets(ctx, endpoint, now).map((secret) => signPayload(secret, timestamp, requestBody));
  const result = await post(endpoint.url, requestBody, {
    'X-Service-Event-Id': id,
    'X-Service-Timestamp': timestamp,
    'X-Service-Signature': signatures.join(','),
  });
  return {
    requestBody,
    httpStatus: result.statusCode,
    latencyMs: Math.round(result.latencyMs),
    error: result.error,
    ...responseOf(result.responseExcerpt, result.response),
  };
}

/** "Send a test event" in the dashboard (role `manage_webhooks`), audited with what the endpoint answered. */
export async function sendTestEventFromDashboard(
  ctx: DomainContext,
  principal: Principal,
  organisationId: string,
  endpointId: string,
  post: WebhookPost,
  address: string,
): Promise<WebhookTestResult> {
  requirePermission(roleIn(principal, organisationId), 'manage_webhooks');
  const result = await sendWebhookTestEvent(ctx, organisationId, endpointId, post);
  await audit(ctx, principal, organisationId, address, 'webhook_endpoint.test_sent', {
    endpoint_id: endpointId,
    http_status: result.httpStatus,
  });
  return result;
}
