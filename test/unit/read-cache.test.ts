import { describe, expect, it } from 'vitest';
import type { ChangeFeed } from '../../src/db/change-feed.js';
import { ReadCache } from '../../src/db/read-cache.js';

/** src/db/read-cache.ts: what it keeps and, above all, what it must never put back. */

function feed(live = true): ChangeFeed & { live: boolean } {
  return { live, subscribe: () => () => {}, onReset: () => () => {}, watch: () => () => {}, close: async () => {} };
}

/** A load the test finishes by hand, counting how often it ran. */
function loads<V>() {
  const pending: Array<(value: V | null) => void> = [];
  let count = 0;
  return {
    load: () => {
      count += 1;
      return new Promise<V | null>((resolve) => pending.push(resolve));
    },
    finish: (value: V | null) => pending.shift()!(value),
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
