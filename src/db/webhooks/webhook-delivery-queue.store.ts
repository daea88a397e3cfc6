import { randomUUID } from 'node:crypto';
import type { PrismaClient } from '../../generated/prisma/client.js';
import type { ClaimedDelivery, WebhookStore } from '../../domain/webhooks/webhook-ports.js';
import { EVENT_COLUMNS, sqlMilliseconds, toEndpoint, toEvent, WEBHOOK_TRANSACTION_OPTIONS } from './webhook-rows.js';
import type { EventRow } from './webhook-rows.js';

type DeliveryQueue = Pick<WebhookStore, 'claimDue' | 'renewLease' | 'recordAttempt' | 'releaseClaims'>;
type LeasedRow = { id: string; event_id: string; attempts: number; position: bigint };
/** Claims take turns across instances (an advisory lock for the claim's transaction; src/db/migrate.ts has another). */
const CLAIM_LOCK_KEY = 7_411_902_552n;

/**
 * The delivery worker's queue: due deliveries leased per endpoint (one batch in flight per endpoint across instances),
 * each attempt logged and settled by the lease's holder only, the leases of attempts not made given back.
 */
export function webhookDeliveryQueue(prisma: PrismaClient): DeliveryQueue {
  return {
    claimDue(endpointLimit, perEndpoint, leaseMs, perOrganisation) {
      return prisma.$transaction(async (tx) => {
        // One claim at a time across instances, so each counts the endpoints in flight after the previous claim's
        // leases are committed, and two claiming at once cannot exceed an organisation's share.
        await tx.$executeRaw`SELECT pg_advisory_xact_lock(${CLAIM_LOCK_KEY})`;
        // Locking the endpoint row (SKIP LOCKED) keeps one batch in flight per endpoint; organisations take turns, none
        // past `perOrganisation`, so one merchant's silent endpoints cannot take every slot.
        const endpoints = await tx.$queryRaw<Array<{ id: string }>>`
          WITH due AS (
            SELECT ep.id, ep.organisation_id FROM webhook_endpoints ep
            WHERE ep.enabled AND EXISTS (
              SELECT 1 FROM webhook_deliveries d
              WHERE d.endpoint_id = ep.id AND d.status = 'pending' AND d.next_attempt_at <= now()
                AND (d.locked_until IS NULL OR d.locked_until < now()))
              -- Not one with a batch in flight (it would get nothing below, and take a slot of the LIMIT: found by a
              -- review, endpoints with a backlog over one batch crowded the others out of claims made while they ran).
              AND NOT EXISTS (
                SELECT 1 FROM webhook_deliveries l
                WHERE l.endpoint_id = ep.id AND l.status = 'pending' AND l.locked_until >= now())),
          busy AS (
            SELECT e.organisation_id, count(*)::int AS n FROM webhook_endpoints e
            WHERE e.organisation_id IN (SELECT organisation_id FROM due) AND EXISTS (
              SELECT 1 FROM webhook_deliveries l
              WHERE l.endpoint_id = e.id AND l.status = 'pending' AND l.locked_until >= now())
            GROUP BY e.organisation_id),
          turns AS (
            SELECT due.id, COALESCE(busy.n, 0)
                     + row_number() OVER (PARTITION BY due.organisation_id ORDER BY random()) AS turn
            FROM due LEFT JOIN busy ON busy.organisation_id = due.organisation_id)
          SELECT ep.id FROM webhook_endpoints ep JOIN turns t ON t.id = ep.id
          WHERE t.turn <= ${perOrganisation}
          ORDER BY t.turn, random()
          LIMIT ${endpointLimit}
          FOR UPDATE OF ep SKIP LOCKED`;
        const claimed: ClaimedDelivery[] = [];
        for (const { id: endpointId } of endpoints) {
          // A new statement sees whatever another instance committed before we got the endpoint lock.
          const token = randomUUID();
          const deliveries = await tx.$queryRaw<LeasedRow[]>`
            UPDATE webhook_deliveries d
            SET locked_until = now() + ${sqlMilliseconds(leaseMs)}, lease_token = ${token}::uuid,
                attempts = d.attempts + 1, updated_at = now()
            FROM (
              SELECT x.id, row_number() OVER (ORDER BY x.event_seq, x.created_at) AS position
              FROM (
                SELECT c.id, c.event_seq, c.created_at FROM webhook_deliveries c
                WHERE c.endpoint_id = ${endpointId}::uuid AND c.status = 'pending' AND c.next_attempt_at <= now()
                  AND (c.locked_until IS NULL OR c.locked_until < now())
                  AND NOT EXISTS (
                    SELECT 1 FROM webhook_deliveries l
                    WHERE l.endpoint_id = ${endpointId}::uuid AND l.status = 'pending' AND l.locked_until >= now())
                ORDER BY c.event_seq, c.created_at
                LIMIT ${perEndpoint}) x) due
            WHERE d.id = due.id
            RETURNING d.id, d.event_id, d.attempts, due.position`;
          if (deliveries.length === 0) continue;
          const endpoint = await tx.webhookEndpoint.findUnique({ where: { id: endpointId } });
          const events = await tx.$queryRaw<EventRow[]>`
            SELECT ${EVENT_COLUMNS} FROM outbox_events WHERE id = ANY(${deliveries.map((d) => d.event_id)}::uuid[])`;
          const eventById = new Map(events.map((event) => [event.id, event]));
          if (!endpoint) continue;
          for (const delivery of [...deliveries].sort((a, b) => Number(a.position - b.position))) {
            const event = eventById.get(delivery.event_id);
            if (!event) continue;
            const lease = { deliveryId: delivery.id, leaseToken: token, attempt: delivery.attempts };
            claimed.push({ ...lease, endpoint: toEndpoint(endpoint), event: toEvent(event) });
          }
        }
        return claimed;
      }, WEBHOOK_TRANSACTION_OPTIONS);
    },

    async renewLease(claims, leaseMs) {
      const [next] = claims;
      if (!next) return false;
      // A lease that lapsed and was taken over has another token: nothing of it is renewed, and the claim that took it
      // over (row locks) is either committed before this statement reads the rows or waits for it.
      const renewed = await prisma.$queryRaw<Array<{ id: string }>>`
        UPDATE webhook_deliveries SET locked_until = now() + ${sqlMilliseconds(leaseMs)}, updated_at = now()
        WHERE id = ANY(${claims.map((claim) => claim.deliveryId)}::uuid[]) AND lease_token = ${next.leaseToken}::uuid
          AND status = 'pending'
        RETURNING id::text AS id`;
      return renewed.some((row) => row.id === next.deliveryId);
    },

    async recordAttempt(claim, outcome) {
      const response = outcome.response ?? null;
      // One statement: the attempt's log row and the delivery's settlement commit together.
      // Only the holder of the lease settles the delivery; a lease that expired and was taken over is not ours.
      await prisma.$executeRaw`
        WITH logged AS (
          INSERT INTO webhook_delivery_attempts (delivery_id, attempt, status_code, latency_ms, error, response_excerpt,
                                                 response_body, response_size, response_truncated, response_headers)
          VALUES (${claim.deliveryId}::uuid, ${claim.attempt}, ${outcome.statusCode}, ${Math.round(outcome.latencyMs)},
                  ${outcome.error}, ${outcome.responseExcerpt}, ${response?.body ?? null}, ${response?.size ?? null},
                  ${response?.truncated ?? false}, ${response ? JSON.stringify(response.headers) : null}::jsonb)
        )
        UPDATE webhook_deliveries SET
          status = CASE WHEN ${outcome.ok} THEN 'succeeded' WHEN now() >= give_up_at THEN 'failed' ELSE 'pending' END,
          next_attempt_at = CASE WHEN ${outcome.ok} THEN next_attempt_at
                                 ELSE LEAST(now() + ${sqlMilliseconds(outcome.retryDelayMs)}, give_up_at) END,
          delivered_at = CASE WHEN ${outcome.ok} THEN now() ELSE delivered_at END,
          locked_until = NULL, lease_token = NULL,
          last_status = ${outcome.statusCode}, last_error = ${outcome.error}, updated_at = now()
        WHERE id = ${claim.deliveryId}::uuid AND lease_token = ${claim.leaseToken}::uuid`;
    },

    async releaseClaims(claims) {
      if (claims.length === 0) return;
      const leases = JSON.stringify(claims.map((c) => ({ id: c.deliveryId, token: c.leaseToken })));
      await prisma.$executeRaw`
        UPDATE webhook_deliveries d
        SET locked_until = NULL, lease_token = NULL, attempts = d.attempts - 1, updated_at = now()
        FROM jsonb_to_recordset(${leases}::jsonb) AS c(id uuid, token uuid)
        WHERE d.id = c.id AND d.lease_token = c.token AND d.status = 'pending'`;
    },
  };
}
