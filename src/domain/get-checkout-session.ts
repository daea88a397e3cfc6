import { isTerminal, type CheckoutSession } from './checkout-session.js';
import type { DomainContext } from './context.js';
import { invalid, notFound } from './errors.js';
import { applySessionEvent } from './session-events.js';
import { isExpiredAt } from './status-machine.js';
import { isUuid } from './uuid.js';

/** Rejects anything that is not a UUID before it reaches the database. */
export function checkSessionId(id: string): string {
  if (!isUuid(id)) throw invalid('id must be a UUID');
  return id.toLowerCase();
}

/**
 * Reads a session. Expiry is settled here too, so a read never shows an open
 * status after the session's time is up, even when the sweeper lags.
 */
export async function getCheckoutSession(ctx: DomainContext, id: string): Promise<CheckoutSession> {
  const sessionId = checkSessionId(id);
  const session = await ctx.store.sessions.findById(sessionId);
  if (!session) throw notFound(`Checkout session ${sessionId} not found`);
  const now = ctx.clock();
  if (isTerminal(session.status) || !isExpiredAt(session, now, { inflightGraceMinutes: ctx.inflightGraceMinutes })) return session;
  return settleExpiry(ctx, sessionId, now);
}

/** Locks the session and applies the clock to it; returns it as it is afterwards. */
export async function settleExpiry(ctx: DomainContext, sessionId: string, now: Date): Promise<CheckoutSession> {
  return ctx.store.transaction(async (tx) => {
    const locked = await tx.lockSession(sessionId);
    if (!locked) throw notFound(`Checkout session ${sessionId} not found`);
    return (await applySessionEvent(ctx, tx, locked, { kind: 'clock' }, now)).session;
  });
}
