import { describe, expect, it, vi } from 'vitest';
import type { CheckoutSession } from '../../src/domain/sessions/checkout-session.js';
import type { ChangeFeed } from '../../src/db/change-feed/change-feed.js';
import { sessionUpdatesFeed } from '../../src/graphql/session-updates.js';

// The public view of these stand-in sessions is their status and bound hash.
vi.mock('../../src/domain/sessions/checkout-session.views.js', () => ({
  toPublicView: (session: { status: string; boundTxHash: string | null }) => ({
    status: session.status,
    bound_tx_hash: session.boundTxHash,
  }),
}));

/** A change feed the test drives by hand. */
function fakeChanges() {
  const watchers = new Map<string, Set<() => void>>();
  const changes: Pick<ChangeFeed, 'watch'> = {
    watch(id, onChange) {
      const set = watchers.get(id) ?? new Set();
      set.add(onChange);
      watchers.set(id, set);
      return () => {
        set.delete(onChange);
        if (set.size === 0) watchers.delete(id);
      };
    },
  };
  return { changes, watchers, change: (id: string) => watchers.get(id)?.forEach((notify) => notify()) };
}

/** A database the test can change; every read is counted per session and takes a few milliseconds. */
function fakeStore() {
  const rows = new Map<string, { status: string; boundTxHash: string | null }>();
  const reads = new Map<string, number>();
  const read = async (id: string): Promise<CheckoutSession> => {
    reads.set(id, (reads.get(id) ?? 0) + 1);
    await new Promise((resolve) => setTimeout(resolve, 5));
    const row = rows.get(id);
    if (!row) throw new Error(`Checkout session ${id} not found`);
    // Expired long ago as far as the timer goes: no expiry read is scheduled.
    return { id, ...row, expiresAt: new Date(0) } as unknown as CheckoutSession;
  };
  return { rows, reads, read };
}

const settle = () => new Promise((resolve) => setTimeout(resolve, 50));

describe('checkoutSessionUpdated fan-out', () => {
  it('reads a session once per change however many subscribe to it, and sends the result to each', async () => {
    const { changes, watchers, change } = fakeChanges();
    const store = fakeStore();
    store.rows.set('s1', { status: 'waiting_payment', boundTxHash: null });
    store.rows.set('s2', { status: 'waiting_payment', boundTxHash: null });
    const feed = sessionUpdatesFeed(changes, store.read);

    const streams = await Promise.all(Array.from({ length: 200 }, () => feed.subscribe('s1')));
    const other = await feed.subscribe('s2');
    // The joins coalesce: the first read, and one more for everyone who joined while it ran.
    expect(store.reads.get('s1')).toBeLessThanOrEqual(2);
    expect(watchers.get('s1')?.size).toBe(1);
    for (const stream of streams)
      expect((await stream.next()).value).toMatchObject({ status: 'waiting_payment', boundTxHash: null });

    store.reads.clear();
    store.rows.set('s1', { status: 'waiting_payment', boundTxHash: '0xabc' });
    change('s1');
    change('s1');
    const next = await Promise.all(streams.map((stream) => stream.next()));
    for (const { value } of next) expect(value).toMatchObject({ boundTxHash: '0xabc' });
    await settle();
    // Two notifications during one read: at most one more read, and nothing more sent (same view).
    expect(store.reads.get('s1')).toBeLessThanOrEqual(2);
    expect(store.reads.get('s2')).toBeUndefined();

    // An unchanged session sends nothing; the other session is untouched.
    change('s1');
    await settle();
    const pending = streams[0]!.next();
    const raced = await Promise.race([pending, settle().then(() => 'nothing')]);
    expect(raced).toBe('nothing');

    // Leaving: the watch stops with the last subscriber of the session.
    await Promise.all(streams.map((stream) => stream.return!()));
    expect(await pending).toEqual({ value: undefined, done: true });
    expect(watchers.has('s1')).toBe(false);
    expect(watchers.has('s2')).toBe(true);
    await other.return!();
    expect(watchers.size).toBe(0);
  });

  it('a subscriber who joins later gets the session as it is then, not an older read', async () => {
    const { changes } = fakeChanges();
    const store = fakeStore();
    store.rows.set('s1', { status: 'waiting_payment', boundTxHash: null });
    const feed = sessionUpdatesFeed(changes, store.read);
    const first = await feed.subscribe('s1');
    store.rows.set('s1', { status: 'paid', boundTxHash: '0xabc' });
    const late = await feed.subscribe('s1');
    expect((await late.next()).value).toMatchObject({ status: 'paid' });
    expect((await first.next()).value).toMatchObject({ status: 'waiting_payment' });
    // The read the late subscriber asked for reaches the first one too.
    expect((await first.next()).value).toMatchObject({ status: 'paid' });
    feed.close();
    expect(await first.next()).toEqual({ value: undefined, done: true });
  });

  it('refuses a subscription whose first read fails, and ends every stream when a re-read fails', async () => {
    const { changes, watchers, change } = fakeChanges();
    const store = fakeStore();
    const feed = sessionUpdatesFeed(changes, store.read);
    await expect(feed.subscribe('missing')).rejects.toThrow('Checkout session missing not found');
    expect(watchers.size).toBe(0);

    store.rows.set('s1', { status: 'waiting_payment', boundTxHash: null });
    const [one, two] = await Promise.all([feed.subscribe('s1'), feed.subscribe('s1')]);
    await one.next();
    await two.next();
    store.rows.delete('s1');
    change('s1');
    await expect(one.next()).rejects.toThrow('not found');
    await expect(two.next()).rejects.toThrow('not found');
    expect(watchers.size).toBe(0);
    // A new subscriber starts afresh.
    store.rows.set('s1', { status: 'paid', boundTxHash: null });
    expect((await (await feed.subscribe('s1')).next()).value).toMatchObject({ status: 'paid' });
  });
});
