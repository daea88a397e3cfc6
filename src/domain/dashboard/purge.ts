import type { DomainContext } from '../context.js';
import { SIGN_IN_WINDOW_MINUTES } from './sign-in.js';

/** How long a used or expired one-time link is kept (to answer it as used rather than unknown for a while). */
export const LINK_KEEP_HOURS = 24;

/**
 * Deletes failed sign-ins past the throttle's window, ended sessions and links used or expired a day ago; the audit
 * log is kept. Idempotent deletes, so safe with several instances.
 */
export async function purgeDashboardRecords(ctx: DomainContext): Promise<number> {
  const now = ctx.clock();
  return ctx.store.dashboard.purge({
    failuresBefore: new Date(now.getTime() - SIGN_IN_WINDOW_MINUTES * 60_000),
    sessionsExpiredBefore: now,
    linksBefore: new Date(now.getTime() - LINK_KEEP_HOURS * 3_600_000),
  });
}
