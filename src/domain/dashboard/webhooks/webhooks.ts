import type { DomainContext } from '../../context.js';
import {
  createWebhookEndpoint,
  listWebhookEndpoints,
  rotateWebhookSecret,
  updateWebhookEndpoint,
} from '../../webhooks/webhook-endpoints.js';
import type { WebhookDeliveryStatus, WebhookEndpointRecord } from '../../webhooks/webhook-ports.js';
import { requirePermission } from '../roles.js';
import { roleIn, type Principal } from '../sign-in.js';
import { sendWebhookTestEvent, type WebhookPost, type WebhookTestResult } from './webhook-test-event.js';

// The merchant GraphQL API takes every dashboard webhook action from this module.
export { readDeliveryFromDashboard, type DashboardResponse } from './webhook-deliveries.js';
export type { WebhookPost } from './webhook-test-event.js';

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
