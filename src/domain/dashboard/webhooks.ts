import type { DomainContext } from '../context.js';
import { listWebhookEndpoints } from '../webhooks/webhook-endpoints.js';
import type { WebhookDeliveryStatus } from '../webhooks/webhook-ports.js';
import { requirePermission } from './roles.js';
import { roleIn, type Principal } from './sign-in.js';

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
 * "Redeliver every failed one" (role `redeliver_webhooks`): every failed delivery to the organisation's enabled
 * endpoints is queued again, due at once with a fresh give-up time, and the audit log says how many, in the same
 * transaction.
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
