import { type CheckoutSession } from './checkout-session.js';
import type { DomainContext } from '../context.js';
import { DomainError, invalid, notFound } from '../shared/errors.js';
import { applySessionEvent } from './session-events.js';
import { expiryMayBeDue, isExpiredAt } from './status-machine.js';
import { isUuid } from '../shared/uuid.js';
import { rateLimit } from '../organisations/throttle.js';
import type { BoundTransaction } from '../payments/chain-ports.js';

/** Rejects anything that is not a UUID before it reaches the database. */
export function checkSessionId(id: string): string {
  if (!isUuid(id)) throw invalid('id must be a UUID');
  return id.toLowerCase();
}

/**
 * Reads a session. Expiry is settled here too, so a read never shows an open status
 * after the session's time is up and nothing holds it open, even when the sweeper lags.
 */
export async function getCheckoutSession(ctx: DomainContext, id: string): Promise<CheckoutSession> {
  const sessionId = checkSessionId(id);
  const session = await ctx.store.sessions.findById(sessionId);
  if (!session) throw notFound(`Checkout session ${sessionId} not found`);
  const now = ctx.clock();
  if (!expiryMayBeDue(session, now)) return session;
  // Held open (a payment sent in time is confirming): nothing to write, so no row lock.
  if (
    !isExpiredAt(
      session,
      now,
      { inflightGraceMinutes: ctx.inflightGraceMinutes },
      await ctx.store.sessions.expiryHolds(session, ctx.inflightGraceMinutes),
    )
  ) {
    return session;
  }
  return settleExpiry(ctx, sessionId, now);
}

/**
 * A public read: each read of an unknown id counts against `unknown_sessions`, 429 past it; a session that exists is
 * never refused by it (docs/api/rest.md#rate-limits).
 */
export async function readCheckoutSession(
  ctx: DomainContext,
  id: string,
  clientAddress: string,
): Promise<CheckoutSession> {
  try {
    return await getCheckoutSession(ctx, id);
  } catch (error) {
    if (error instanceof DomainError && error.code === 'not_found')
      await rateLimit(ctx, ['unknown_sessions', clientAddress]);
    throw error;
  }
}

/**
 * Only a cached session whose time is not up, so the answer is getCheckoutSession's; undefined sends the caller down
 * the full path, which settles expiry (docs/decisions/0010-caches-and-lanes.md).
 */
export function cachedCheckoutSession(
  ctx: DomainContext,
  id: string,
  now: Date = ctx.clock(),
): CheckoutSession | undefined {
  if (!isUuid(id)) return undefined;
  const session = ctx.store.sessions.peek?.(id.toLowerCase());
  return session && !expiryMayBeDue(session, now) ? session : undefined;
}

/** Whether `session`, read from this instance's cache, is still what cachedCheckoutSession would answer at `now`. */
export function stillCached(ctx: DomainContext, session: CheckoutSession, now: Date): boolean {
  return ctx.store.sessions.peek?.(session.id) === session && !expiryMayBeDue(session, now);
}

/** Locks the session and applies the clock to it (with what holds it open); returns it as it is afterwards. */
export async function settleExpiry(ctx: DomainContext, sessionId: string, now: Date): Promise<CheckoutSession> {
  return ctx.store.transaction(async (tx) => {
    const locked = await tx.lockSession(sessionId);
    if (!locked) throw notFound(`Checkout session ${sessionId} not found`);
    if (!expiryMayBeDue(locked, now)) return locked;
    const holds = await tx.expiryHolds(locked, ctx.inflightGraceMinutes);
    return (await applySessionEvent(ctx, tx, locked, { kind: 'clock', holds }, now)).session;
  });
}

/** The transactions payers bound to a session, oldest first (docs/payment-rules.md, rule 3: a bind is a hint). */
export async function boundTransactionsOf(ctx: DomainContext, id: string): Promise<BoundTransaction[]> {
  return ctx.store.sessions.transactionsOf(checkSessionId(id));
}
