import type { DomainContext } from '../context.js';
import { SIGN_IN_WINDOW_MINUTES } from './sign-in.js';
import { WHOLE_RESPONSE_KEEP_DAYS } from './webhooks/webhook-deliveries.js';

/** How long a used or expired one-time link is kept (to answer it as used rather than unknown for a while). */
export const LINK_KEEP_HOURS = 24;

/**
 * Deletes old failed sign-ins, ended sessions, expired challenges and links, clears webhook answers kept whole past
 * 30 days (docs/dashboard.md#signing-in); the audit log stays. Idempotent, so safe with several instances.
 */
export async function purgeDashboardRecords(ctx: DomainContext): Promise<number> {
  const now = ctx.clock();
  return ctx.store.dashboard.purge({
    failuresBefore: new Date(now.getTime() - SIGN_IN_WINDOW_MINUTES * 60_000),
    sessionsExpiredBefore: now,
    linksBefore: new Date(now.getTime() - LINK_KEEP_HOURS * 3_600_000),
    webhookResponsesBefore: new Date(now.getTime() - WHOLE_RESPONSE_KEEP_DAYS * 86_400_000),
  });
}
