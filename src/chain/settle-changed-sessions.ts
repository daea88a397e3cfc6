import type { DomainContext } from '../domain/context.js';
import { settleSessionPayments } from '../domain/payments/payments.js';
import type { Logger } from '../logging.js';

/** Sessions settled per transaction, and transactions settling at once (each takes its own batch: SKIP LOCKED). */
const SETTLE_BATCH = 25;
const SETTLE_WORKERS = 4;

/**
 * Settles every session whose payments changed; safe with several instances (SKIP LOCKED).
 * A settlement is a handful of short statements per session, so a backlog is worked off by
 * several transactions at once, on connections of their own, rather than one after another.
 * A failure is logged, not thrown: the sessions stay marked and the next pass takes them.
 */
export async function settleChangedSessions(ctx: DomainContext, logger: Logger): Promise<void> {
  const worker = async () => {
    for (;;) {
      const now = ctx.clock();
      const locked = await ctx.store.lockSessionsWithChangedPayments(SETTLE_BATCH, async (tx, session) => {
        await settleSessionPayments(ctx, tx, session, now);
      });
      if (locked < SETTLE_BATCH) return;
    }
  };
  const outcomes = await Promise.allSettled(Array.from({ length: SETTLE_WORKERS }, worker));
  const failed = outcomes.find((outcome): outcome is PromiseRejectedResult => outcome.status === 'rejected');
  if (failed) logger.error({ err: failed.reason }, 'settling payments failed');
}
