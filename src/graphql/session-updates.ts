import { isTerminal, type CheckoutSession } from '../domain/sessions/checkout-session.js';
import { toPublicView } from '../domain/sessions/checkout-session.views.js';
import type { ChangeFeed } from '../db/change-feed/change-feed.js';

type SessionChanges = Pick<ChangeFeed, 'watch'>;

/** setTimeout's longest delay; sessions live at most 7 days, so this is never reached in practice. */
const MAX_TIMER_MS = 2 ** 31 - 1;
/** Read just after expires_at, not just before it. */
const EXPIRY_MARGIN_MS = 50;

/**
 * The `checkoutSessionUpdated` streams: one shared watch per session re-reads it on each change hint and at its expiry;
 * a subscriber gets only reads begun after it joined that differ from the last it was sent.
 */
export interface SessionUpdates {
  /**
   * Starts a stream once the session has been read; rejects with that read's error. The stream ends when the caller
   * returns it, or with the error of a failed re-read.
   */
  subscribe(sessionId: string): Promise<AsyncIterableIterator<CheckoutSession>>;
  /** Ends every stream; call before closing the change feed. */
  close(): void;
}

export function sessionUpdatesFeed(
  changes: SessionChanges,
  read: (sessionId: string) => Promise<CheckoutSession>,
): SessionUpdates {
  const watches = new Map<string, SessionWatch>();
  return {
    async subscribe(sessionId) {
      let watch = watches.get(sessionId);
      if (!watch) {
        const created: SessionWatch = new SessionWatch(changes, sessionId, read, () => {
          if (watches.get(sessionId) === created) watches.delete(sessionId);
        });
        watches.set(sessionId, created);
        watch = created;
      }
      const stream = new SubscriberStream((s) => watch.remove(s));
      watch.add(stream);
      await stream.started;
      return stream.iterator;
    },
    close() {
      for (const watch of [...watches.values()]) watch.closeAll();
    },
  };
}

/** The one watch of a session in this process, shared by all its subscribers. */
class SessionWatch {
  private readonly subscribers = new Set<SubscriberStream>();
  private readonly unwatch: () => void;
  private reading = false;
  private again = false;
  private stopped = false;
  private expiryTimer: NodeJS.Timeout | null = null;

  constructor(
    changes: SessionChanges,
    private readonly sessionId: string,
    private readonly read: (sessionId: string) => Promise<CheckoutSession>,
    private readonly onStop: () => void,
  ) {
    // Watch before the first read, so no change between the two is lost.
    this.unwatch = changes.watch(sessionId, () => void this.refresh());
  }

  add(subscriber: SubscriberStream) {
    this.subscribers.add(subscriber);
    void this.refresh();
  }

  remove(subscriber: SubscriberStream) {
    this.subscribers.delete(subscriber);
    if (this.subscribers.size === 0) this.stop();
  }

  closeAll() {
    for (const subscriber of [...this.subscribers]) subscriber.end();
    this.stop();
  }

  private stop() {
    if (this.stopped) return;
    this.stopped = true;
    this.unwatch();
    if (this.expiryTimer) clearTimeout(this.expiryTimer);
    this.expiryTimer = null;
    this.onStop();
  }

  private async refresh() {
    if (this.stopped) return;
    if (this.reading) {
      this.again = true;
      return;
    }
    this.reading = true;
    try {
      do {
        this.again = false;
        // Those who joined before this read started; later ones get the next read.
        const readers = [...this.subscribers];
        let session: CheckoutSession;
        try {
          session = await this.read(this.sessionId);
        } catch (error) {
          // A failed read (the database is gone, the session deleted) ends those streams with the error.
          for (const subscriber of readers) subscriber.fail(error);
          continue;
        }
        if (this.stopped) return;
        this.watchExpiry(session);
        // The public view, the money in flight and the row's last change (a bind, a verdict): what the payer's page
        // shows.
        const fingerprint = JSON.stringify([
          toPublicView(session),
          session.amountReceived,
          session.amountPending,
          session.updatedAt,
        ]);
        for (const subscriber of readers) subscriber.deliver(session, fingerprint);
      } while (this.again && !this.stopped);
    } finally {
      this.reading = false;
    }
  }

  private watchExpiry(session: CheckoutSession) {
    if (this.expiryTimer || this.stopped || isTerminal(session.status)) return;
    const delay = session.expiresAt.getTime() - Date.now();
    // Past expires_at and still open: a transaction is in flight; the sweep settles its grace.
    if (delay < 0 || delay > MAX_TIMER_MS) return;
    this.expiryTimer = setTimeout(() => {
      this.expiryTimer = null;
      void this.refresh();
    }, delay + EXPIRY_MARGIN_MS);
    this.expiryTimer.unref();
  }
}

/**
 * A plain AsyncIterator rather than an async generator, so that `return()` (unsubscribe, disconnect) ends it at once
 * even while it waits for the next change.
 */
class SubscriberStream {
  readonly started: Promise<void>;
  readonly iterator: AsyncIterableIterator<CheckoutSession>;
  private start!: { resolve: () => void; reject: (error: unknown) => void };
  private readonly queue: CheckoutSession[] = [];
  private readonly waiting: Array<{
    resolve: (result: IteratorResult<CheckoutSession>) => void;
    reject: (error: unknown) => void;
  }> = [];
  private failure: unknown = null;
  private done = false;
  private lastSent: string | null = null;

  constructor(private readonly leave: (stream: SubscriberStream) => void) {
    this.started = new Promise<void>((resolve, reject) => (this.start = { resolve, reject }));
    const iterator: AsyncIterableIterator<CheckoutSession> = {
      next: () => {
        if (this.queue.length > 0) return Promise.resolve({ value: this.queue.shift()!, done: false });
        if (this.failure) {
          const error = this.failure;
          this.failure = null;
          return Promise.reject(error);
        }
        if (this.done) return Promise.resolve({ value: undefined, done: true });
        return new Promise((resolve, reject) => this.waiting.push({ resolve, reject }));
      },
      return: () => {
        this.end();
        this.queue.length = 0;
        return Promise.resolve({ value: undefined, done: true });
      },
      throw: (error) => {
        this.end();
        return Promise.reject(error);
      },
      [Symbol.asyncIterator]: () => iterator,
    };
    this.iterator = iterator;
  }

  deliver(session: CheckoutSession, fingerprint: string) {
    if (this.done || fingerprint === this.lastSent) return;
    const first = this.lastSent === null;
    this.lastSent = fingerprint;
    const next = this.waiting.shift();
    if (next) next.resolve({ value: session, done: false });
    else this.queue.push(session);
    if (first) this.start.resolve();
  }

  fail(error: unknown) {
    if (this.done) return;
    if (this.lastSent === null) {
      // The first read failed: the subscription is refused with that error.
      this.start.reject(error);
      this.end();
      return;
    }
    const next = this.waiting.shift();
    if (next) next.reject(error);
    else this.failure = error;
    this.end();
  }

  end() {
    if (this.done) return;
    this.done = true;
    this.leave(this);
    for (const waiter of this.waiting.splice(0)) waiter.resolve({ value: undefined, done: true });
    // Ended before the first read (closing down): the subscription just completes.
    this.start.resolve();
  }
}
