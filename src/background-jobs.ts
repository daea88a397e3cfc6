import type { Config } from './config.js';
import type { DomainContext } from './domain/context.js';
import { expireDueSessions, purgeIdempotencyKeys } from './domain/sessions/expire-sessions.js';
import { requoteDueSessions } from './domain/sessions/requote-sessions.js';
import { purgeDashboardRecords } from './domain/dashboard/purge.js';
import type { Logger } from './logging.js';
import type { Metrics } from './metrics.js';
import { runWebhookRound } from './webhooks/dispatcher.js';
import { expireDueRefunds, REFUND_EXPIRY_BATCH } from './domain/refunds/refund-transitions.js';

export interface BackgroundJobs {
  stop(): Promise<void>;
}

/**
 * Periodic work of a running instance; every job is safe with several instances on one database
 * (SKIP LOCKED row locks, idempotent deletes), so no leader election is needed.
 */
export function startBackgroundJobs(
  ctx: DomainContext,
  config: Config,
  logger: Logger,
  metrics?: Metrics,
): BackgroundJobs {
  const running = new Set<Promise<unknown>>();
  // Tells a webhook round in progress to claim nothing more and hand back what it has not attempted (stop()).
  const stopping = new AbortController();
  const timers = [
    every(config.expirySweepSeconds * 1000, 'expiry sweep', async () => {
      // Drain in batches so a backlog clears within one tick.
      while ((await expireDueSessions(ctx)) === 100);
    }),
    every(config.expirySweepSeconds * 1000, 'refund claim expiry', async () => {
      while ((await expireDueRefunds(ctx)) === REFUND_EXPIRY_BATCH);
    }),
    every(config.payments.requoteSweepSeconds * 1000, 'quote renewal', async () => {
      while ((await requoteDueSessions(ctx)) === 100);
    }),
    every(config.webhooks.pollMs, 'webhook delivery', () => runWebhookRound(ctx, logger, stopping.signal)),
    every(3_600_000, 'idempotency key purge', () => purgeIdempotencyKeys(ctx, config.idempotencyTtlHours)),
    every(3_600_000, 'dashboard purge', () => purgeDashboardRecords(ctx)),
  ];

  function every(ms: number, name: string, job: () => Promise<unknown>): NodeJS.Timeout {
    let busy = false;
    const timer = setInterval(() => {
      if (busy) return;
      busy = true;
      const run = job()
        .then(() => metrics?.jobRuns.inc({ job: name, outcome: 'ok' }))
        .catch((error) => {
          metrics?.jobRuns.inc({ job: name, outcome: 'error' });
          logger.error({ err: error, job: name }, 'background job failed');
        })
        .finally(() => {
          busy = false;
          running.delete(run);
        });
      running.add(run);
    }, ms);
    timer.unref();
    return timer;
  }

  return {
    async stop() {
      timers.forEach(clearInterval);
      stopping.abort();
      await Promise.allSettled([...running]);
    },
  };
}
