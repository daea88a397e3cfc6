import type { PrismaClient } from '../../generated/prisma/client.js';
import type { WebhookStore } from '../../domain/webhooks/webhook-ports.js';
import { eventFeedStore } from './event-feed.store.js';
import { outboxFanOut } from './outbox-horizon.store.js';
import { webhookDeliveryQueue } from './webhook-delivery-queue.store.js';
import { webhookDeliveryStore } from './webhook-delivery.store.js';
import { webhookEndpointStore } from './webhook-endpoint.store.js';

/**
 * The domain's WebhookStore over Prisma, one part per job: endpoints, the delivery log and redelivery, the events feed,
 * the outbox fan-out and horizon, and the delivery worker's queue.
 */
export function createWebhookStore(prisma: PrismaClient): WebhookStore {
  return {
    ...webhookEndpointStore(prisma),
    ...webhookDeliveryStore(prisma),
    ...eventFeedStore(prisma),
    fanOut: outboxFanOut(prisma),
    ...webhookDeliveryQueue(prisma),
  };
}
