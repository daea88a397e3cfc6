import type { PrismaClient } from '../../generated/prisma/client.js';
import type { WebhookStore } from '../../domain/webhooks/webhook-ports.js';
import { sqlMilliseconds, WEBHOOK_TRANSACTION_OPTIONS } from './webhook-rows.js';

interface DispatchState {
  horizon_seq: bigint;
  gap_seq: bigint | null;
  gap_age_ms: number | null;
}

/**
 * Fan-out and the horizon under webhook_dispatch_state's one row (SKIP LOCKED); deliveries are made for every visible
 * event at once, so a hole in `seq` delays the feed, never a webhook (docs/api/webhooks.md#outbox-horizon).
 */
export function outboxFanOut(prisma: PrismaClient): WebhookStore['fanOut'] {
  return async (options) => {
    // Most passes find nothing new: one statement says so, without a transaction.
    const [news] = await prisma.$queryRaw<Array<{ any: boolean }>>`
      SELECT EXISTS (
        SELECT 1 FROM outbox_events WHERE seq > (SELECT horizon_seq FROM webhook_dispatch_state WHERE id = 1)) AS any`;
    if (!news?.any) return 0;
    return prisma.$transaction(async (tx) => {
      const [state] = await tx.$queryRaw<DispatchState[]>`
        SELECT horizon_seq, gap_seq,
               (extract(epoch FROM clock_timestamp() - gap_seen_at) * 1000)::double precision AS gap_age_ms
        FROM webhook_dispatch_state WHERE id = 1 FOR UPDATE SKIP LOCKED`;
      if (!state) return 0;
      const horizon = BigInt(state.horizon_seq);
      const visible = await tx.$queryRaw<Array<{ seq: bigint }>>`
        SELECT seq FROM outbox_events WHERE seq > ${horizon} ORDER BY seq LIMIT ${options.batch}`;
      const seqs = visible.map((row) => BigInt(row.seq));
      if (seqs.length === 0) return 0;
      const last = seqs[seqs.length - 1]!;
      const created = await tx.$executeRaw`
        INSERT INTO webhook_deliveries (id, endpoint_id, event_id, event_seq, give_up_at)
        SELECT gen_random_uuid(), ep.id, e.id, e.seq, now() + ${sqlMilliseconds(options.giveUpHours * 3_600_000)}
        FROM outbox_events e
        JOIN webhook_endpoints ep ON ep.organisation_id = e.organisation_id AND ep.enabled AND e.seq > ep.start_seq
          AND (cardinality(ep.events) = 0 OR e.type = ANY(ep.events))
        WHERE e.seq > ${horizon} AND e.seq <= ${last}
        ON CONFLICT (endpoint_id, event_id) DO NOTHING`;
      const { next, gapSeq, gapFresh } = advanceHorizon(horizon, seqs, state, options.gapSeconds);
      await tx.$executeRaw`
        UPDATE webhook_dispatch_state
        SET horizon_seq = ${next}, gap_seq = ${gapSeq},
            gap_seen_at = CASE WHEN ${gapSeq}::bigint IS NULL THEN NULL
                               WHEN ${gapFresh} THEN clock_timestamp() ELSE gap_seen_at END
        WHERE id = 1`;
      return created;
    }, WEBHOOK_TRANSACTION_OPTIONS);
  };
}

/**
 * Consecutive seqs move the horizon; the first hole stops it unless open for `gapSeconds`. Returns the hole it stopped
 * at (null when none) and whether it is new (its clock starts).
 */
function advanceHorizon(
  horizon: bigint,
  seqs: readonly bigint[],
  state: DispatchState,
  gapSeconds: number,
): { next: bigint; gapSeq: bigint | null; gapFresh: boolean } {
  let next = horizon;
  let gapSeq: bigint | null = state.gap_seq === null ? null : BigInt(state.gap_seq);
  let gapFresh = false;
  for (const seq of seqs) {
    if (seq === next + 1n) {
      next = seq;
      continue;
    }
    const seenLongEnough = state.gap_age_ms !== null && state.gap_age_ms >= gapSeconds * 1000;
    const oldEnough = gapSeq === next && seenLongEnough && !gapFresh;
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
  const holeOpen = next < seqs[seqs.length - 1]!;
  if (!holeOpen) gapSeq = null;
  return { next, gapSeq, gapFresh };
}
