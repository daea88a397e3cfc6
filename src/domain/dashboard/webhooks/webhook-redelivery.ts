import type { DomainContext } from '../../context.js';
import { notFound } from '../../shared/errors.js';
import { isUuid } from '../../shared/uuid.js';
import { getWebhookEndpoint } from '../../webhooks/webhook-endpoints.js';
import { requirePermission } from '../roles.js';
import { roleIn, type Principal } from '../sign-in.js';

/**
 * Queues one delivery again, due at once with a fresh give-up time, as `kassa webhooks redeliver` does; another
 * organisation's delivery is not found (never forbidden).
 */
export async function redeliverFromDashboard(
  ctx: DomainContext,
  principal: Principal,
  organisationId: string,
  deliveryId: string,
  address: string,
): Promise<{ deliveryId: string; eventType: string }> {
  requirePermission(roleIn(principal, organisationId), 'redeliver_webhooks');
  const delivery = isUuid(deliveryId) ? await ctx.store.webhooks.findDelivery(deliveryId) : null;
  if (!delivery) throw notFound(`Webhook delivery ${deliveryId} not found`);
  try {
    await getWebhookEndpoint(ctx, organisationId, delivery.endpointId);
  } catch {
    throw notFound(`Webhook delivery ${deliveryId} not found`);
  }
  await ctx.store.webhooks.redeliver(delivery.id, ctx.webhooks.giveUpHours);
  await ctx.store.dashboard.audit({
    organisationId,
    userId: principal.userId,
    action: 'webhook.redelivered',
    details: { delivery_id: delivery.id, event_type: delivery.eventType },
    address,
  });
  return { deliveryId: delivery.id, eventType: delivery.eventType };
}
