import type { ChangeFeed } from '../change-feed/change-feed.js';

export interface ReadCacheOptions {
  /** At most this many entries, least recently used dropped first; 0 turns the cache off. */
  readonly capacity: number;
  /** An entry is read again after this long even if no change was announced (a safety net). */
  readonly ttlMs: number;
  /** Serves only while this feed hears every change. */
  readonly feed: ChangeFeed;
  /** The clock entries age by (wall time, not the domain's clock: tests move that one). */
  readonly now?: () => number;
}

interface Loading<V> {
  readonly startedAt: number;
  readonly result: Promise<V | null>;
}

/**
 * A bounded read-through cache that never serves an entry a change was announced for (docs/decisions/0010): every
 * invalidation is stamped with a tick, and a read keeps its result only if nothing about its key was stamped since.
 */
export class ReadCache<V> {
  private readonly entries = new Map<string, { value: V; storedAt: number }>();
  private readonly invalidatedAt = new Map<string, number>();
  private readonly readsInFlight = new Map<number, number>();
  /** The read under way for each key being read, and the tick it began at. */
  private readonly loading = new Map<string, Loading<V>>();
  private tick = 0;
  private clearedAt = 0;
  private nextRead = 0;
  private readonly now: () => number;

  constructor(private readonly options: ReadCacheOptions) {
    this.now = options.now ?? Date.now;
  }

  /**
   * The cached value, or `load`'s (kept when nothing changed meanwhile; misses are not). A read of a key already being
   * read joins it, taking its value only when that value could have been kept.
   */
  async read(key: string, load: () => Promise<V | null>): Promise<V | null> {
    if (this.options.capacity === 0 || !this.options.feed.live) return load();
    const hit = this.entries.get(key);
    if (hit && this.now() - hit.storedAt < this.options.ttlMs) {
      // Least recently used first: a hit moves to the end.
      this.entries.delete(key);
      this.entries.set(key, hit);
      return hit.value;
    }
    const loading = this.loading.get(key);
    if (loading !== undefined && this.unchangedSince(key, loading.startedAt)) {
      const shared = await this.join(key, loading);
      if (shared !== undefined) return shared;
    }
    const read = this.nextRead++;
    const startedAt = this.tick;
    this.readsInFlight.set(read, startedAt);
    const result = this.loadAndKeep(key, load, read, startedAt);
    this.loading.set(key, { startedAt, result });
    try {
      return await result;
    } finally {
      if (this.loading.get(key)?.result === result) this.loading.delete(key);
    }
  }

  private async loadAndKeep(
    key: string,
    load: () => Promise<V | null>,
    read: number,
    startedAt: number,
  ): Promise<V | null> {
    try {
      const value = await load();
      if (value !== null && this.unchangedSince(key, startedAt)) this.store(key, value);
      return value;
    } finally {
      this.readsInFlight.delete(read);
    }
  }

  /**
   * The value of a read already under way, when it ends unchanged (see read); undefined to read anew. While it
   * waits it counts as a read that began when that one did, so the stamps it is judged by are kept.
   */
  private async join(key: string, loading: Loading<V>): Promise<V | undefined> {
    const read = this.nextRead++;
    this.readsInFlight.set(read, loading.startedAt);
    try {
      const value = await loading.result;
      return value !== null && this.unchangedSince(key, loading.startedAt) ? value : undefined;
    } catch {
      return undefined;
    } finally {
      this.readsInFlight.delete(read);
    }
  }

  /** Whether nothing about `key` was invalidated (nor all cleared) after tick `startedAt`, with the feed live. */
  private unchangedSince(key: string, startedAt: number): boolean {
    return this.options.feed.live && this.clearedAt <= startedAt && (this.invalidatedAt.get(key) ?? -1) <= startedAt;
  }

  /** The entry as it is, without a read; undefined when not cached (or not to be served). */
  peek(key: string): V | undefined {
    if (this.options.capacity === 0 || !this.options.feed.live) return undefined;
    const hit = this.entries.get(key);
    return hit && this.now() - hit.storedAt < this.options.ttlMs ? hit.value : undefined;
  }

  /** Replaces a cached entry with what this process just wrote (never adds one). */
  update(key: string, change: (value: V) => V): void {
    const hit = this.entries.get(key);
    if (hit) this.entries.set(key, { value: change(hit.value), storedAt: hit.storedAt });
  }

  invalidate(key: string): void {
    this.tick += 1;
    this.entries.delete(key);
    if (this.readsInFlight.size === 0) {
      // Nobody can be holding an older read of anything: no stamp needs keeping.
      this.invalidatedAt.clear();
      return;
    }
    this.invalidatedAt.set(key, this.tick);
    if (this.invalidatedAt.size > 1024) this.forgetStampsOlderThanReads();
  }

  clear(): void {
    this.tick += 1;
    this.clearedAt = this.tick;
    this.entries.clear();
    this.invalidatedAt.clear();
  }

  get size(): number {
    return this.entries.size;
  }

  private store(key: string, value: V): void {
    this.entries.delete(key);
    this.entries.set(key, { value, storedAt: this.now() });
    if (this.entries.size > this.options.capacity) this.entries.delete(this.entries.keys().next().value!);
  }

  private forgetStampsOlderThanReads(): void {
    const oldestRead = Math.min(...this.readsInFlight.values());
    for (const [key, stamp] of this.invalidatedAt) if (stamp <= oldestRead) this.invalidatedAt.delete(key);
  }
}
