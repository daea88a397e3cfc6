import { isTerminal, type CheckoutSession } from '../domain/checkout-session.js';
import { toPublicView } from '../domain/checkout-session.views.js';
import type { CheckoutSessionChanges } from '../db/checkout-session-changes.js';

/** setTimeout's longest delay; sessions live at most 7 days, so this is never reached in practice. */
const MAX_TIMER_MS = 2 ** 31 - 1;
/** Read just after expires_at, not just before it. */
const EXPIRY_MARGIN_MS = 50;

/**
 * The stream behind the `checkoutSessionUpdated` subscription: the session as
 * it is now, then the session again each time its public view changes.
 *
 * `read` is the same domain read the query uses (it settles expiry too). The
 * change feed only says "look again"; a read whose public view equals the last
 * one sent is dropped, so repeated or unrelated notifications send nothing.
 * Notifications that arrive during a read are coalesced into one more read.
 *
 * When an open session's `expires_at` comes, it is read once more: that read
 * settles the expiry (as any read does) and every subscriber, on every
 * instance, hears of it at once rather than at the next expiry sweep. (The
 * timer runs on the wall clock; the read itself decides by the domain clock.)
 *
 * Written as a plain AsyncIterator rather than an async generator, so that
 * `return()` (the client unsubscribing or disconnecting) ends it at once even
 * while it waits for the next change.
 */
export async function sessionUpdates(
  changes: CheckoutSessionChanges,
  sessionId: string,
  read: () => Promise<CheckoutSession>,
): Promise<AsyncIterableIterator<CheckoutSession>> {
  const queue: CheckoutSession[] = [];
  const waiting: Array<{ resolve: (result: IteratorResult<CheckoutSession>) => void; reject: (error: unknown) => void }> = [];
  let failure: unknown = null;
  let done = false;
  let lastSent = '';
  let reading = false;
  let again = false;
  let expiryTimer: NodeJS.Timeout | null = null;

  const watchExpiry = (session: CheckoutSession) => {
    if (expiryTimer || done || isTerminal(session.status)) return;
    const delay = session.expiresAt.getTime() - Date.now();
    // Past expires_at and still open: a transaction is in flight; the sweep settles its grace.
    if (delay < 0 || delay > MAX_TIMER_MS) return;
    expiryTimer = setTimeout(() => {
      expiryTimer = null;
      void refresh();
    }, delay + EXPIRY_MARGIN_MS);
    expiryTimer.unref();
  };

  const push = (session: CheckoutSession) => {
    watchExpiry(session);
    const fingerprint = JSON.stringify(toPublicView(session));
    if (fingerprint === lastSent) return;
    lastSent = fingerprint;
    const next = waiting.shift();
    if (next) next.resolve({ value: session, done: false });
    else queue.push(session);
  };

  const finish = () => {
    if (done) return;
    done = true;
    unwatch();
    if (expiryTimer) clearTimeout(expiryTimer);
    for (const waiter of waiting.splice(0)) waiter.resolve({ value: undefined, done: true });
  };

  const refresh = async () => {
    if (reading) {
      again = true;
      return;
    }
    reading = true;
    try {
      do {
        again = false;
        const session = await read();
        if (!done) push(session);
      } while (again && !done);
    } catch (error) {
      // A failed re-read (the database is gone, the session deleted) ends the stream with the error.
      if (done) return;
      const next = waiting.shift();
      if (next) next.reject(error);
      else failure = error;
      finish();
    } finally {
      reading = false;
    }
  };

  // Watch before the first read, so no change between the two is lost.
  const unwatch = changes.watch(sessionId, () => void refresh());
  try {
    push(await read());
  } catch (error) {
    finish();
    throw error;
  }

  const iterator: AsyncIterableIterator<CheckoutSession> = {
    next() {
      if (queue.length > 0) return Promise.resolve({ value: queue.shift()!, done: false });
      if (failure) {
        const error = failure;
        failure = null;
        return Promise.reject(error);
      }
      if (done) return Promise.resolve({ value: undefined, done: true });
      return new Promise((resolve, reject) => waiting.push({ resolve, reject }));
    },
    return() {
      finish();
      queue.length = 0;
      return Promise.resolve({ value: undefined, done: true });
    },
    throw(error) {
      finish();
      return Promise.reject(error);
    },
    [Symbol.asyncIterator]() {
      return iterator;
    },
  };
  return iterator;
}
