import { Prisma, type PrismaClient } from '../../generated/prisma/client.js';
import type {
  WebhookDeliveryRecord,
  WebhookDeliveryStatus,
  WebhookStore,
} from '../../domain/webhooks/webhook-ports.js';
import { sqlMilliseconds } from './webhook-rows.js';

type DeliveryStore = Pick<WebhookStore, 'listDeliveries' | 'findDelivery' | 'redeliver' | 'redeliverEvent'>;

interface DeliveryRow {
  id: string;
  endpoint_id: string;
  event_id: string;
  type: string | null;
  status: string;
  attempts: number;
  next_attempt_at: Date;
  give_up_at: Date;
  last_status: number | null;
  last_error: string | null;
  delivered_at: Date | null;
  created_at: Date;
}

/**
 * Deliveries as operators see them (one row per event and endpoint, attempts as their log) and manual redelivery; the
 * worker's queue is webhook-delivery-queue.store.ts.
 */
export function webhookDeliveryStore(prisma: PrismaClient): DeliveryStore {
  /** `whole`: with each attempt's kept answer (one delivery); lists leave the bodies of up to 64 KiB unread. */
  const readDeliveries = async (where: Prisma.Sql, limit: number, whole = false): Promise<WebhookDeliveryRecord[]> => {
    const rows = await prisma.$queryRaw<DeliveryRow[]>`
      SELECT d.id, d.endpoint_id, d.event_id, e.type, d.status, d.attempts, d.next_attempt_at, d.give_up_at,
             d.last_status, d.last_error, d.delivered_at, d.created_at
      FROM webhook_deliveries d LEFT JOIN outbox_events e ON e.id = d.event_id
      WHERE ${where}
      ORDER BY d.event_seq DESC, d.created_at DESC
      LIMIT ${limit}`;
    const ofRows = { deliveryId: { in: rows.map((row) => row.id) } };
    const attempts =
      rows.length === 0
        ? []
        : await prisma.webhookDeliveryAttempt.findMany({
            where: ofRows,
            orderBy: { id: 'asc' },
            omit: { responseBody: !whole, responseHeaders: !whole },
          });
    return rows.map((row) => ({
      id: row.id,
      endpointId: row.endpoint_id,
      eventId: row.event_id,
      eventType: row.type ?? 'unknown',
      status: row.status as WebhookDeliveryStatus,
      attempts: row.attempts,
      nextAttemptAt: row.next_attempt_at,
      giveUpAt: row.give_up_at,
      lastStatus: row.last_status,
      lastError: row.last_error,
      deliveredAt: row.delivered_at,
      createdAt: row.created_at,
      attemptLog: attempts
        .filter((attempt) => attempt.deliveryId === row.id)
        .map((attempt) => ({
          attempt: attempt.attempt,
          statusCode: attempt.statusCode,
          latencyMs: attempt.latencyMs,
          error: attempt.error,
          responseExcerpt: attempt.responseExcerpt,
          response:
            attempt.responseBody === undefined || attempt.responseBody === null
              ? null
              : {
                  body: attempt.responseBody,
                  size: attempt.responseSize ?? null,
                  truncated: attempt.responseTruncated ?? false,
                  headers: (attempt.responseHeaders ?? {}) as Record<string, string>,
                },
          responseSize: attempt.responseSize,
          responseTruncated: attempt.responseTruncated,
          createdAt: attempt.createdAt,
        })),
    }));
  };

  return {
    listDeliveries: (endpointId, limit) => readDeliveries(Prisma.sql`d.endpoint_id = ${endpointId}::uuid`, limit),

    async findDelivery(id) {
      return (await readDeliveries(Prisma.sql`d.id = ${id}::uuid`, 1, true))[0] ?? null;
    },

    // A redelivery takes the lease away from an attempt in flight: that attempt is still logged when it ends, but
    // no longer settles the delivery, so the delivery the merchant asked for is made after it (at least once).
    async redeliver(deliveryId, giveUpHours) {
      const giveUpAfter = sqlMilliseconds(giveUpHours * 3_600_000);
      await prisma.$executeRaw`
        UPDATE webhook_deliveries
        SET status = 'pending', next_attempt_at = now(), give_up_at = now() + ${giveUpAfter},
            locked_until = NULL, lease_token = NULL, updated_at = now()
        WHERE id = ${deliveryId}::uuid`;
    },

    async redeliverEvent(event, giveUpHours) {
      const giveUpAfter = sqlMilliseconds(giveUpHours * 3_600_000);
      const rows = await prisma.$queryRaw<Array<{ id: string }>>`
        INSERT INTO webhook_deliveries (id, endpoint_id, event_id, event_seq, give_up_at)
        SELECT gen_random_uuid(), ep.id, ${event.id}::uuid, ${event.seq}, now() + ${giveUpAfter}
        FROM webhook_endpoints ep
        WHERE ep.organisation_id = ${event.organisationId}::uuid AND ep.enabled
          AND (cardinality(ep.events) = 0 OR ${event.type} = ANY(ep.events))
        ON CONFLICT (endpoint_id, event_id) DO UPDATE
          SET status = 'pending', next_attempt_at = now(), give_up_at = EXCLUDED.give_up_at,
              locked_until = NULL, lease_token = NULL, updated_at = now()
        RETURNING id`;
      return rows.map((row) => row.id);
    },
  };
}
