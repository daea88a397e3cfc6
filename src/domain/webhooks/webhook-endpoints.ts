import { randomUUID } from 'node:crypto';
import type { DomainContext } from '../context.js';
import { conflict, invalid, notFound } from '../shared/errors.js';
import { sealSecret } from '../shared/secret-box.js';
import { isUuid } from '../shared/uuid.js';
import {
  checkWebhookEndpointInput,
  createWebhookEndpointSchema,
  updateWebhookEndpointSchema,
  type WebhookEndpointInput,
} from './webhook-endpoint.schema.js';
import type { WebhookDeliveryRecord, WebhookEndpointRecord } from './webhook-ports.js';
import { newWebhookSecret } from './webhook-secrets.js';

/**
 * The use-cases of webhook endpoints (docs/api/webhooks.md#webhooks) for REST and the CLI; input rules in
 * webhook-endpoint.schema.ts, views in webhook.views.ts.
 */

export interface IssuedWebhookSecret {
  readonly endpoint: WebhookEndpointRecord;
  /** Shown only now. */
  readonly secret: string;
}

async function requireOrganisation(ctx: DomainContext, organisationId: string): Promise<void> {
  if (!isUuid(organisationId)) throw notFound(`Organisation ${organisationId} not found`);
  const organisation = await ctx.store.organisations.findById(organisationId);
  if (!organisation || organisation.deleted) throw notFound(`Organisation ${organisationId} not found`);
}

/**
 * Webhook endpoints one organisation may have: every event fans out to each, and the delivery slots are shared by all
 * organisations.
 */
export const MAX_WEBHOOK_ENDPOINTS = 20;

export async function createWebhookEndpoint(
  ctx: DomainContext,
  organisationId: string,
  input: WebhookEndpointInput,
): Promise<IssuedWebhookSecret> {
  await requireOrganisation(ctx, organisationId);
  const checked = await checkWebhookEndpointInput(ctx, createWebhookEndpointSchema, input);
  const secret = newWebhookSecret();
  const id = randomUUID();
  const endpoint = await ctx.store.webhooks.createEndpoint(
    {
      id,
      organisationId,
      url: checked.url!,
      events: checked.events ?? [],
      enabled: checked.enabled ?? true,
      secretCiphertext: sealSecret(secret, ctx.masterKey, { table: 'webhook_endpoints', id }),
    },
    MAX_WEBHOOK_ENDPOINTS,
  );
  if (!endpoint)
    throw conflict(
      `An organisation may have at most ${MAX_WEBHOOK_ENDPOINTS} webhook endpoints; delete one it no longer ` +
        `needs first`,
    );
  return { endpoint, secret };
}

/** The organisation's endpoints; an unknown, deleted or malformed organisation id is "not found" (as for keys). */
export async function listWebhookEndpoints(
  ctx: DomainContext,
  organisationId: string,
): Promise<WebhookEndpointRecord[]> {
  await requireOrganisation(ctx, organisationId);
  return ctx.store.webhooks.listEndpoints(organisationId);
}

/** The endpoint, when it exists and (for a merchant call) belongs to the organisation; else 404. */
export async function getWebhookEndpoint(
  ctx: DomainContext,
  organisationId: string | null,
  id: string,
): Promise<WebhookEndpointRecord> {
  const endpoint = isUuid(id) ? await ctx.store.webhooks.findEndpoint(id) : null;
  if (!endpoint || (organisationId !== null && endpoint.organisationId !== organisationId)) {
    throw notFound(`Webhook endpoint ${id} not found`);
  }
  return endpoint;
}

export async function updateWebhookEndpoint(
  ctx: DomainContext,
  organisationId: string | null,
  id: string,
  input: WebhookEndpointInput,
): Promise<WebhookEndpointRecord> {
  await getWebhookEndpoint(ctx, organisationId, id);
  const checked = await checkWebhookEndpointInput(ctx, updateWebhookEndpointSchema, input);
  const updated = await ctx.store.webhooks.updateEndpoint(id, checked);
  if (!updated) throw notFound(`Webhook endpoint ${id} not found`);
  return updated;
}

export async function removeWebhookEndpoint(
  ctx: DomainContext,
  organisationId: string | null,
  id: string,
): Promise<void> {
  await getWebhookEndpoint(ctx, organisationId, id);
  if (!(await ctx.store.webhooks.deleteEndpoint(id))) throw notFound(`Webhook endpoint ${id} not found`);
}

/** Issues a new secret; the current one keeps signing (a second signature) for the configured overlap. */
export async function rotateWebhookSecret(
  ctx: DomainContext,
  organisationId: string | null,
  id: string,
): Promise<IssuedWebhookSecret & { previousSecretExpiresAt: Date }> {
  const current = await getWebhookEndpoint(ctx, organisationId, id);
  const secret = newWebhookSecret();
  const previousSecretExpiresAt = new Date(ctx.clock().getTime() + ctx.webhooks.secretOverlapHours * 3_600_000);
  const endpoint = await ctx.store.webhooks.updateEndpoint(id, {
    secretCiphertext: sealSecret(secret, ctx.masterKey, { table: 'webhook_endpoints', id: current.id }),
    // The secret stored when the row is locked goes on signing (same row, so its binding holds in the other column):
    // of two rotations at once, the later keeps the earlier's, which its caller was given, not the one both read.
    rotateSecret: true,
    previousSecretExpiresAt,
  });
  if (!endpoint) throw notFound(`Webhook endpoint ${id} not found`);
  return { endpoint, secret, previousSecretExpiresAt };
}

export async function listWebhookDeliveries(
  ctx: DomainContext,
  organisationId: string | null,
  endpointId: string,
  limit = 100,
): Promise<WebhookDeliveryRecord[]> {
  await getWebhookEndpoint(ctx, organisationId, endpointId);
  return ctx.store.webhooks.listDeliveries(endpointId, limit);
}

/**
 * Manual redelivery: a delivery id queues that delivery again; an event id queues the event for every enabled matching
 * endpoint of its organisation. Either way it is due at once with a fresh give-up time.
 */
export async function redeliverWebhook(
  ctx: DomainContext,
  id: string,
): Promise<{ kind: 'delivery' | 'event'; deliveryIds: string[] }> {
  if (!isUuid(id)) throw notFound(`No webhook delivery or event ${id}`);
  const delivery = await ctx.store.webhooks.findDelivery(id);
  if (delivery) {
    await ctx.store.webhooks.redeliver(delivery.id, ctx.webhooks.giveUpHours);
    return { kind: 'delivery', deliveryIds: [delivery.id] };
  }
  const event = await ctx.store.webhooks.findEvent(id);
  if (!event) throw notFound(`No webhook delivery or event ${id}`);
  const deliveryIds = await ctx.store.webhooks.redeliverEvent(event, ctx.webhooks.giveUpHours);
  if (deliveryIds.length === 0) {
    throw invalid([`No enabled webhook endpoint of organisation ${event.organisationId} subscribes to ${event.type}`]);
  }
  return { kind: 'event', deliveryIds };
}
