import { randomUUID } from 'node:crypto';
import { Prisma, type PrismaClient } from '../generated/prisma/client.js';
import type {
  AttemptOutcome,
  ClaimedDelivery,
  StoredEvent,
  WebhookDeliveryRecord,
  WebhookDeliveryStatus,
  WebhookEndpointRecord,
  WebhookStore,
} from '../domain/webhook-ports.js';

type Tx = Prisma.TransactionClient;
type EndpointRow = Prisma.WebhookEndpointGetPayload<object>;

const TRANSACTION_OPTIONS = { maxWait: 20_000, timeout: 30_000 } as const;

function toEndpoint(row: EndpointRow): WebhookEndpointRecord {
  return {
    id: row.id,
    organisationId: row.organisationId,
    url: row.url,
    events: row.events,
    enabled: row.enabled,
    // Bound to this row: the AES-GCM additional data of both secrets.
    secretCiphertext: { sealed: row.secretCiphertext, row: { table: 'webhook_endpoints', id: row.id } },
    previousSecretCiphertext: row.previousSecretCiphertext === null ? null : { sealed: row.previousSecretCiphertext, row: { table: 'webhook_endpoints', id: row.id } },
    previousSecretExpiresAt: row.previousSecretExpiresAt,
    createdAt: row.createdAt,
    updatedAt: row.updatedAt,
  };
}

interface EventRow {
  id: string;
  seq: bigint;
  organisation_id: string;
  session_id: string | null;
  type: string;
  payload: unknown;
  created_at: Date;
}

function toEvent(row: EventRow): StoredEvent {
  return {
    id: row.id,
    seq: BigInt(row.seq),
    organisationId: row.organisation_id,
    sessionId: row.session_id,
    type: row.type,
    payload: row.payload,
    createdAt: row.created_at,
  };
}

const ms = (value: number) => Prisma.sql`(${value}::double precision * interval '1 millisecond')`;

/**
 * Webhook storage over Prisma. The queue is three tables: webhook_deliveries
 * (one row per event and endpoint), webhook_delivery_attempts (the log) and
 * webhook_dispatch_state (one row: the outbox horizon, see advanceHorizon).
 * Every step is a short transaction; HTTP calls happen between them, never
 * inside one (the embedded database has a single pooled connection).
 */
export class PrismaWebhookStore implements WebhookStore {
  constructor(private readonly prisma: PrismaClient) {}

  async createEndpoint(input: Parameters<WebhookStore['createEndpoint']>[0]): Promise<WebhookEndpointRecord> {
    return this.prisma.$transaction(async (tx) => {
      const startSeq = await maxSeq(tx);
      const row = await tx.webhookEndpoint.create({
        data: {
          id: input.id,
          organisationId: input.organisationId,
          url: input.url,
          events: [...input.events],
          enabled: input.enabled,
          secretCiphertext: input.secretCiphertext,
          startSeq,
        },
      });
      return toEndpoint(row);
    }, TRANSACTION_OPTIONS);
  }

  async findEndpoint(id: string): Promise<WebhookEndpointRecord | null> {
    const row = await this.prisma.webhookEndpoint.findUnique({ where: { id } });
    return row ? toEndpoint(row) : null;
  }

  async listEndpoints(organisationId: string): Promise<WebhookEndpointRecord[]> {
    const rows = await this.prisma.webhookEndpoint.findMany({ where: { organisationId }, orderBy: [{ createdAt: 'asc' }, { id: 'asc' }] });
    return rows.map(toEndpoint);
  }

  async updateEndpoint(id: string, patch: Parameters<WebhookStore['updateEndpoint']>[1]): Promise<WebhookEndpointRecord | null> {
    return this.prisma.$transaction(async (tx) => {
      const current = await tx.$queryRaw<Array<{ enabled: boolean }>>`SELECT enabled FROM webhook_endpoints WHERE id = ${id}::uuid FOR UPDATE`;
      if (current.length === 0) return null;
      // Re-enabled: deliver what happens from now on; what happened while disabled is in the events feed.
      const startSeq = patch.enabled === true && !current[0]!.enabled ? await maxSeq(tx) : undefined;
      const row = await tx.webhookEndpoint.update({
        where: { id },
        data: {
          ...(patch.url !== undefined ? { url: patch.url } : {}),
          ...(patch.events !== undefined ? { events: [...patch.events] } : {}),
          ...(patch.enabled !== undefined ? { enabled: patch.enabled } : {}),
          ...(patch.secretCiphertext !== undefined ? { secretCiphertext: patch.secretCiphertext } : {}),
          ...(patch.previousSecretCiphertext !== undefined ? { previousSecretCiphertext: patch.previousSecretCiphertext } : {}),
          ...(patch.previousSecretExpiresAt !== undefined ? { previousSecretExpiresAt: patch.previousSecretExpiresAt } : {}),
          ...(startSeq !== undefined ? { startSeq } : {}),
          updatedAt: new Date(),
        },
      });
      return toEndpoint(row);
    }, TRANSACTION_OPTIONS);
  }

  async deleteEndpoint(id: string): Promise<boolean> {
    const { count } = await this.prisma.webhookEndpoint.deleteMany({ where: { id } });
    return count > 0;
  }

  async listDeliveries(endpointId: string, limit: number): Promise<WebhookDeliveryRecord[]> {
    return this.readDeliveries(Prisma.sql`d.endpoint_id = ${endpointId}::uuid`, limit);
  }

  async findDelivery(id: string): Promise<WebhookDeliveryRecord | null> {
    return (await this.readDeliveries(Prisma.sql`d.id = ${id}::uuid`, 1))[0] ?? null;
  }

  private async readDeliveries(where: Prisma.Sql, limit: number): Promise<WebhookDeliveryRecord[]> {
    const rows = await this.prisma.$queryRaw<
      Array<{
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
      }>
    >`
      SELECT d.id, d.endpoint_id, d.event_id, e.type, d.status, d.attempts, d.next_attempt_at, d.give_up_at,
             d.last_status, d.last_error, d.delivered_at, d.created_at
      FROM webhook_deliveries d LEFT JOIN outbox_events e ON e.id = d.event_id
      WHERE ${where}
      ORDER BY d.event_seq DESC, d.created_at DESC
      LIMIT ${limit}`;
    const attempts =
      rows.length === 0
        ? []
        : await this.prisma.webhookDeliveryAttempt.findMany({ where: { deliveryId: { in: rows.map((row) => row.id) } }, orderBy: { id: 'asc' } });
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
          createdAt: attempt.createdAt,
        })),
    }));
  }

  async findEvent(id: string): Promise<StoredEvent | null> {
    const rows = await this.prisma.$queryRaw<EventRow[]>`
      SELECT id, seq, organisation_id, session_id, type, payload, created_at FROM outbox_events WHERE id = ${id}::uuid`;
    return rows[0] ? toEvent(rows[0]) : null;
  }

  async redeliver(deliveryId: string, giveUpHours: number): Promise<void> {
    await this.prisma.$executeRaw`
      UPDATE webhook_deliveries
      SET status = 'pending', next_attempt_at = now(), give_up_at = now() + ${ms(giveUpHours * 3_600_000)}, updated_at = now()
      WHERE id = ${deliveryId}::uuid`;
  }

  async redeliverEvent(event: StoredEvent, giveUpHours: number): Promise<string[]> {
    const rows = await this.prisma.$queryRaw<Array<{ id: string }>>`
      INSERT INTO webhook_deliveries (id, endpoint_id, event_id, event_seq, give_up_at)
      SELECT gen_random_uuid(), ep.id, ${event.id}::uuid, ${event.seq}, now() + ${ms(giveUpHours * 3_600_000)}
      FROM webhook_endpoints ep
      WHERE ep.organisation_id = ${event.organisationId}::uuid AND ep.enabled
        AND (cardinality(ep.events) = 0 OR ${event.type} = ANY(ep.events))
      ON CONFLICT (endpoint_id, event_id) DO UPDATE
        SET status = 'pending', next_attempt_at = now(), give_up_at = EXCLUDED.give_up_at, updated_at = now()
      RETURNING id`;
    return rows.map((row) => row.id);
  }

  async listEvents(query: Parameters<WebhookStore['listEvents']>[0]): Promise<StoredEvent[]> {
    // The feed must never step over an event that commits later: it reads only up to the horizon.
    await this.fanOut({ gapSeconds: query.gapSeconds, giveUpHours: 72, batch: 1000 });
    const [state] = await this.prisma.$queryRaw<Array<{ horizon_seq: bigint }>>`SELECT horizon_seq FROM webhook_dispatch_state WHERE id = 1`;
    const horizon = state?.horizon_seq ?? 0n;
    const bySession = query.sessionId ? Prisma.sql`AND session_id = ${query.sessionId}::uuid` : Prisma.empty;
    const rows = await this.prisma.$queryRaw<EventRow[]>`
      SELECT id, seq, organisation_id, session_id, type, payload, created_at FROM outbox_events
      WHERE organisation_id = ${query.organisationId}::uuid AND seq > ${query.afterSeq} AND seq <= ${horizon} ${bySession}
      ORDER BY seq
      LIMIT ${query.limit}`;
    return rows.map(toEvent);
  }

  /**
   * Fan-out and the horizon, under the one state row (SKIP LOCKED: one instance
   * at a time, the others carry on). Outbox `seq` comes from a sequence, so a
   * transaction still in flight can commit an event whose seq is below events
   * already visible. The horizon is the highest seq below which the outbox is
   * final: it advances over consecutive seqs only. A hole means an in-flight or
   * rolled-back transaction; once the same hole has been seen for `gapSeconds`
   * (longer than any transaction may run: Prisma's limit is 30 s) it is taken as
   * rolled back and stepped over. Deliveries are created for every visible event
   * above the horizon at once (ON CONFLICT DO NOTHING makes the rescans
   * harmless), so a hole delays the feed, never a webhook.
   */
  async fanOut(options: { gapSeconds: number; giveUpHours: number; batch: number }): Promise<number> {
    // Most passes find nothing new: one statement says so, without a transaction.
    const [news] = await this.prisma.$queryRaw<Array<{ any: boolean }>>`
      SELECT EXISTS (SELECT 1 FROM outbox_events WHERE seq > (SELECT horizon_seq FROM webhook_dispatch_state WHERE id = 1)) AS any`;
    if (!news?.any) return 0;
    return this.prisma.$transaction(async (tx) => {
      const [state] = await tx.$queryRaw<Array<{ horizon_seq: bigint; gap_seq: bigint | null; gap_age_ms: number | null }>>`
        SELECT horizon_seq, gap_seq, (extract(epoch FROM clock_timestamp() - gap_seen_at) * 1000)::double precision AS gap_age_ms
        FROM webhook_dispatch_state WHERE id = 1 FOR UPDATE SKIP LOCKED`;
      if (!state) return 0;
      const horizon = BigInt(state.horizon_seq);
      const seqs = (
        await tx.$queryRaw<Array<{ seq: bigint }>>`SELECT seq FROM outbox_events WHERE seq > ${horizon} ORDER BY seq LIMIT ${options.batch}`
      ).map((row) => BigInt(row.seq));
      if (seqs.length === 0) return 0;
      const last = seqs[seqs.length - 1]!;
      const created = await tx.$executeRaw`
        INSERT INTO webhook_deliveries (id, endpoint_id, event_id, event_seq, give_up_at)
        SELECT gen_random_uuid(), ep.id, e.id, e.seq, now() + ${ms(options.giveUpHours * 3_600_000)}
        FROM outbox_events e
        JOIN webhook_endpoints ep ON ep.organisation_id = e.organisation_id AND ep.enabled AND e.seq > ep.start_seq
          AND (cardinality(ep.events) = 0 OR e.type = ANY(ep.events))
        WHERE e.seq > ${horizon} AND e.seq <= ${last}
        ON CONFLICT (endpoint_id, event_id) DO NOTHING`;

      let next = horizon;
      let gapSeq: bigint | null = state.gap_seq === null ? null : BigInt(state.gap_seq);
      let gapFresh = false;
      for (const seq of seqs) {
        if (seq === next + 1n) {
          next = seq;
          continue;
        }
        const oldEnough = gapSeq === next && state.gap_age_ms !== null && state.gap_age_ms >= options.gapSeconds * 1000 && !gapFresh;
        if (oldEnough) {
          next = seq;
          gapSeq = null;
          continue;
        }
        if (gapSeq !== next) {
          gapSeq = next;
          gapFresh = true;
        }
        break;
      }
      const holeOpen = next < last;
      if (!holeOpen) gapSeq = null;
      await tx.$executeRaw`
        UPDATE webhook_dispatch_state
        SET horizon_seq = ${next}, gap_seq = ${gapSeq},
            gap_seen_at = CASE WHEN ${gapSeq}::bigint IS NULL THEN NULL WHEN ${gapFresh} THEN clock_timestamp() ELSE gap_seen_at END
        WHERE id = 1`;
      return created;
    }, TRANSACTION_OPTIONS);
  }

  async claimDue(endpointLimit: number, perEndpoint: number, leaseMs: number): Promise<ClaimedDelivery[]> {
    return this.prisma.$transaction(async (tx) => {
      // Locking the endpoint row (SKIP LOCKED) makes "one batch in flight per endpoint" hold across instances.
      const endpoints = await tx.$queryRaw<Array<{ id: string }>>`
        SELECT ep.id FROM webhook_endpoints ep
        WHERE ep.enabled AND EXISTS (
          SELECT 1 FROM webhook_deliveries d
          WHERE d.endpoint_id = ep.id AND d.status = 'pending' AND d.next_attempt_at <= now()
            AND (d.locked_until IS NULL OR d.locked_until < now()))
        ORDER BY random()
        LIMIT ${endpointLimit}
        FOR UPDATE OF ep SKIP LOCKED`;
      const claimed: ClaimedDelivery[] = [];
      for (const { id: endpointId } of endpoints) {
        // A new statement sees whatever another instance committed before we got the endpoint lock.
        const token = randomUUID();
        const deliveries = await tx.$queryRaw<Array<{ id: string; event_id: string; attempts: number; position: bigint }>>`
          UPDATE webhook_deliveries d
          SET locked_until = now() + ${ms(leaseMs)} * due.position, lease_token = ${token}::uuid, attempts = d.attempts + 1, updated_at = now()
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
          SELECT id, seq, organisation_id, session_id, type, payload, created_at FROM outbox_events WHERE id::text = ANY(${deliveries.map((d) => d.event_id)})`;
        const eventById = new Map(events.map((event) => [event.id, event]));
        if (!endpoint) continue;
        for (const delivery of [...deliveries].sort((a, b) => Number(a.position - b.position))) {
          const event = eventById.get(delivery.event_id);
          if (event) claimed.push({ deliveryId: delivery.id, leaseToken: token, attempt: delivery.attempts, endpoint: toEndpoint(endpoint), event: toEvent(event) });
        }
      }
      return claimed;
    }, TRANSACTION_OPTIONS);
  }

  async recordAttempt(claim: ClaimedDelivery, outcome: AttemptOutcome): Promise<void> {
    // One statement: the attempt's log row and the delivery's settlement commit together.
    // Only the holder of the lease settles the delivery; a lease that expired and was taken over is not ours.
    await this.prisma.$executeRaw`
      WITH logged AS (
        INSERT INTO webhook_delivery_attempts (delivery_id, attempt, status_code, latency_ms, error, response_excerpt)
        VALUES (${claim.deliveryId}::uuid, ${claim.attempt}, ${outcome.statusCode}, ${Math.round(outcome.latencyMs)}, ${outcome.error}, ${outcome.responseExcerpt})
      )
      UPDATE webhook_deliveries SET
        status = CASE WHEN ${outcome.ok} THEN 'succeeded' WHEN now() >= give_up_at THEN 'failed' ELSE 'pending' END,
        next_attempt_at = CASE WHEN ${outcome.ok} THEN next_attempt_at ELSE LEAST(now() + ${ms(outcome.retryDelayMs)}, give_up_at) END,
        delivered_at = CASE WHEN ${outcome.ok} THEN now() ELSE delivered_at END,
        locked_until = NULL, lease_token = NULL,
        last_status = ${outcome.statusCode}, last_error = ${outcome.error}, updated_at = now()
      WHERE id = ${claim.deliveryId}::uuid AND lease_token = ${claim.leaseToken}::uuid`;
  }

  async releaseClaims(claims: readonly ClaimedDelivery[]): Promise<void> {
    if (claims.length === 0) return;
    await this.prisma.$executeRaw`
      UPDATE webhook_deliveries d SET locked_until = NULL, lease_token = NULL, attempts = d.attempts - 1, updated_at = now()
      FROM jsonb_to_recordset(${JSON.stringify(claims.map((c) => ({ id: c.deliveryId, token: c.leaseToken })))}::jsonb) AS c(id uuid, token uuid)
      WHERE d.id = c.id AND d.lease_token = c.token AND d.status = 'pending'`;
  }
}

async function maxSeq(tx: Tx): Promise<bigint> {
  const [row] = await tx.$queryRaw<Array<{ max: bigint | null }>>`SELECT max(seq) AS max FROM outbox_events`;
  return row?.max === null || row?.max === undefined ? 0n : BigInt(row.max);
}
