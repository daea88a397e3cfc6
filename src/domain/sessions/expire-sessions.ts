import type { DomainContext } from '../context.js';
import { applySessionEvent } from './session-events.js';

/**
 * Expires open sessions whose time is up and that nothing holds open; safe with several instances, as each locks
 * the rows it takes with SKIP LOCKED. Returns how many it examined.
 */
export async function expireDueSessions(ctx: DomainContext, batchSize = 100): Promise<number> {
  const now = ctx.clock();
  return ctx.store.lockSessionsDueForExpiry(now, ctx.inflightGraceMinutes, batchSize, async (tx, session) => {
    const holds = await tx.expiryHolds(session, ctx.inflightGraceMinutes);
    await applySessionEvent(ctx, tx, session, { kind: 'clock', holds }, now);
  });
}

/** Forgets idempotency keys older than the retention (at least 24 h, docs/api/rest.md#create-rules-and-limits). */
export async function purgeIdempotencyKeys(ctx: DomainContext, retentionHours: number): Promise<number> {
  return ctx.store.deleteIdempotencyKeysBefore(new Date(ctx.clock().getTime() - retentionHours * 3_600_000));
}
