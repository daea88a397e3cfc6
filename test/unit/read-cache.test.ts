import { describe, expect, it } from 'vitest';
import type { ChangeFeed } from '../../src/db/change-feed/change-feed.js';
import { ReadCache } from '../../src/db/sessions/read-cache.js';

/** src/db/sessions/read-cache.ts: what it keeps and, above all, what it must never put back. */

function feed(live = true): ChangeFeed & { live: boolean } {
  return { live, subscribe: () => () => {}, onReset: () => () => {}, watch: () => () => {}, close: async () => {} };
}

/** A load the test finishes by hand, counting how often it ran. */
function loads<V>() {
  const pending: Array<{ resolve: (value: V | null) => void; reject: (error: Error) => void }> = [];
  let count = 0;
  return {
    load: () => {
      count += 1;
      return new Promise<V | null>((resolve, reject) => pending.push({ resolve, reject }));
    },
    finish: (value: V | null) => pending.shift()!.resolve(value),
    fail: (error: Error) => pending.shift()!.reject(error),
    get count() {
      return count;
    },
  };
}

const immediate =
  <V>(value: V) =>
  async () =>
    value;

describe('ReadCache', () => {
  it('serves a second read from memory', async () => {
    const cache = new ReadCache<string>({ capacity: 10, ttlMs: 60_000, feed: feed() });
    let count = 0;
    const load = async () => `v${++count}`;
    expect(await cache.read('k', load)).toBe('v1');
    expect(await cache.read('k', load)).toBe('v1');
    expect(count).toBe(1);
  });

  it('never keeps a row read before an invalidation that came while the read was in flight', async () => {
    const cache = new ReadCache<string>({ capacity: 10, ttlMs: 60_000, feed: feed() });
    const slow = loads<string>();
    const inFlight = cache.read('k', slow.load);
    cache.invalidate('k');
    slow.finish('old');
    expect(await inFlight).toBe('old');
    expect(await cache.read('k', immediate('new'))).toBe('new');
    expect(await cache.read('k', immediate('newer'))).toBe('new');
  });

  it('never keeps a row read before a clear (a reset of the feed) that came while the read was in flight', async () => {
    const cache = new ReadCache<string>({ capacity: 10, ttlMs: 60_000, feed: feed() });
    const slow = loads<string>();
    const inFlight = cache.read('k', slow.load);
    cache.clear();
    slow.finish('old');
    await inFlight;
    expect(await cache.read('k', immediate('new'))).toBe('new');
  });

  it('an invalidation of another key does not stop a read being kept', async () => {
    const cache = new ReadCache<string>({ capacity: 10, ttlMs: 60_000, feed: feed() });
    const slow = loads<string>();
    const inFlight = cache.read('k', slow.load);
    cache.invalidate('other');
    slow.finish('v');
    await inFlight;
    expect(await cache.read('k', immediate('unused'))).toBe('v');
  });

  it('reads of one key that arrive while it is being read share that read: one load, however many ask', async () => {
    const cache = new ReadCache<string>({ capacity: 10, ttlMs: 60_000, feed: feed() });
    const slow = loads<string>();
    const reads = Array.from({ length: 5 }, () => cache.read('k', slow.load));
    expect(slow.count).toBe(1);
    slow.finish('v');
    expect(await Promise.all(reads)).toEqual(['v', 'v', 'v', 'v', 'v']);
    expect(await cache.read('k', immediate('unused'))).toBe('v');
  });

  it('a read that joined one an invalidation then overtook reads again: it never takes the old row', async () => {
    const cache = new ReadCache<string>({ capacity: 10, ttlMs: 60_000, feed: feed() });
    const slow = loads<string>();
    const first = cache.read('k', slow.load);
    const joined = cache.read('k', slow.load);
    cache.invalidate('k');
    slow.finish('old');
    expect(await first).toBe('old');
    await Promise.resolve();
    expect(slow.count).toBe(2);
    slow.finish('new');
    expect(await joined).toBe('new');
  });

  it('a read that arrives after an invalidation does not join a read that started before it', async () => {
    const cache = new ReadCache<string>({ capacity: 10, ttlMs: 60_000, feed: feed() });
    const slow = loads<string>();
    const before = cache.read('k', slow.load);
    cache.invalidate('k');
    const after = cache.read('k', slow.load);
    expect(slow.count).toBe(2);
    slow.finish('old');
    slow.finish('new');
    expect(await before).toBe('old');
    expect(await after).toBe('new');
    expect(await cache.read('k', immediate('unused'))).toBe('new');
  });

  it('a shared read that fails or finds nothing is not shared: each read that joined it reads for itself', async () => {
    const cache = new ReadCache<string>({ capacity: 10, ttlMs: 60_000, feed: feed() });
    const slow = loads<string>();
    const failing = cache.read('k', slow.load);
    const joined = cache.read('k', slow.load);
    slow.fail(new Error('connection lost'));
    await expect(failing).rejects.toThrow('connection lost');
    await Promise.resolve();
    expect(slow.count).toBe(2);
    const missing = cache.read('k', slow.load);
    slow.finish(null);
    expect(await joined).toBeNull();
    await Promise.resolve();
    expect(slow.count).toBe(3);
    slow.finish('there');
    expect(await missing).toBe('there');
  });

  it('serves nothing and keeps nothing while the feed is not live', async () => {
    const source = feed(false);
    const cache = new ReadCache<string>({ capacity: 10, ttlMs: 60_000, feed: source });
    expect(await cache.read('k', immediate('a'))).toBe('a');
    expect(await cache.read('k', immediate('b'))).toBe('b');
    expect(cache.size).toBe(0);
    source.live = true;
    expect(await cache.read('k', immediate('c'))).toBe('c');
    source.live = false;
    expect(await cache.read('k', immediate('d'))).toBe('d');
  });

  it('keeps at most its capacity, dropping the least recently used', async () => {
    const cache = new ReadCache<string>({ capacity: 2, ttlMs: 60_000, feed: feed() });
    await cache.read('a', immediate('a1'));
    await cache.read('b', immediate('b1'));
    await cache.read('a', immediate('unused'));
    await cache.read('c', immediate('c1'));
    expect(cache.size).toBe(2);
    expect(await cache.read('a', immediate('a2'))).toBe('a1');
    expect(await cache.read('b', immediate('b2'))).toBe('b2');
  });

  it('reads again after its time to live, and does not keep misses', async () => {
    let now = 0;
    const cache = new ReadCache<string>({ capacity: 10, ttlMs: 1000, feed: feed(), now: () => now });
    expect(await cache.read('gone', immediate<string | null>(null))).toBeNull();
    expect(await cache.read('gone', immediate('there'))).toBe('there');
    now = 999;
    expect(await cache.read('gone', immediate('unused'))).toBe('there');
    now = 1000;
    expect(await cache.read('gone', immediate('fresh'))).toBe('fresh');
  });

  it('capacity 0 turns it off', async () => {
    const cache = new ReadCache<string>({ capacity: 0, ttlMs: 60_000, feed: feed() });
    expect(await cache.read('k', immediate('a'))).toBe('a');
    expect(await cache.read('k', immediate('b'))).toBe('b');
  });
});
