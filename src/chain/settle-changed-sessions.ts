import type { DomainContext } from '../domain/context.js';
import { settleSessionPayments } from '../domain/payments/payments.js';
import type { Logger } from '../logging.js';

/** Sessions settled per transaction, and transactions settling at once (each takes its own batch: SKIP LOCKED). */
const SETTLE_BATCH = 25;
const SETTLE_WORKERS = 4;

/**
 * Settles sessions whose payments changed (SKIP LOCKED: safe with several instances), several transactions at once to
 * work off a backlog. A failure is logged, not thrown: the sessions stay marked for the next pass.
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
