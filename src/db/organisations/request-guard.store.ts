import { Prisma, type PrismaClient } from '../../generated/prisma/client.js';
import type { RequestGuard } from '../../domain/context.js';
import type {
  CounterHit,
  RateLimitCounters,
  SignatureReplayCache,
} from '../../domain/organisations/request-guard-ports.js';
import { memoryBuckets, Throttle } from '../../domain/organisations/throttle.js';
import type { RequestGuardConfig } from '../../config/request-guard.js';
import type { Database } from '../database.js';
import { PrismaRateLimitBuckets } from './rate-buckets.store.js';

/** How often one instance deletes entries whose time has passed. */
const FORGET_INTERVAL_MS = 60_000;

/** Runs `forget` at most once per interval of the caller's clock, in the background. */
export class Housekeeping {
  private lastRunAt = Number.NEGATIVE_INFINITY;

  constructor(private readonly forget: (now: Date) => Promise<unknown>) {}

  /** `now`: the caller's clock, as a Date or epoch milliseconds. */
  due(now: Date | number): void {
    const nowMs = typeof now === 'number' ? now : now.getTime();
    // Tests move the clock both ways; either direction by the interval is due.
    if (Math.abs(nowMs - this.lastRunAt) < FORGET_INTERVAL_MS) return;
    this.lastRunAt = nowMs;
    // Not awaited: a request does not wait for housekeeping; a failure is retried next time.
    this.forget(new Date(nowMs)).catch(() => {
      this.lastRunAt = Number.NEGATIVE_INFINITY;
    });
  }
}

/**
 * The replay cache in `request_signatures`: the primary key (key, signature) makes the insert the check, so two
 * instances racing with one signature cannot both win.
 */
export class PrismaSignatureReplayCache implements SignatureReplayCache {
  private readonly housekeeping: Housekeeping;

  constructor(private readonly prisma: PrismaClient) {
    this.housekeeping = new Housekeeping(
      (now) => prisma.$executeRaw`DELETE FROM request_signatures WHERE expires_at < ${now}`,
    );
  }

  async remember(
    apiKeyId: string,
    signature: string,
    keepUntil: Date,
    now: Date,
    sessionId: string | null = null,
  ): Promise<boolean> {
    this.housekeeping.due(now);
    const inserted = await this.prisma.$executeRaw`
      INSERT INTO request_signatures (api_key_id, signature, expires_at, session_id)
      VALUES (${apiKeyId}::uuid, ${signature}, ${keepUntil}, ${sessionId}::uuid)
      ON CONFLICT DO NOTHING`;
    return inserted === 1;
  }

  async sessionMadeWith(apiKeyId: string, signature: string): Promise<string | null> {
    const rows = await this.prisma.$queryRaw<Array<{ session_id: string | null }>>`
      SELECT session_id::text FROM request_signatures
       WHERE api_key_id = ${apiKeyId}::uuid AND signature = ${signature}`;
    return rows[0]?.session_id ?? null;
  }
}

/** How often counts made in memory are added to the shared counters. */
export const COUNTER_FLUSH_MS = 200;

/**
 * The part of a limit an instance may count in memory before it must write: 1/20 of it
 * (0 below 20, so small limits are always counted in the database, exactly).
 */
export function localBudget(limit: number): number {
  return Math.floor(limit / 20);
}

interface SharedWindow {
  readonly key: string;
  readonly windowStart: number;
  readonly windowEnd: number;
  /** The shared count as the database last answered it (this instance's writes and everyone else's). */
  known: number;
  /** Hits counted here and not written yet. */
  pending: number;
}

/**
 * Counters in `rate_limit_counters`, shared by the instances: far from the limit a hit is counted in memory and flushed
 * in batches, near it written at once; never above the truth, so nobody is refused early (docs/decisions/0009).
 */
export class PrismaRateLimitCounters implements RateLimitCounters {
  private readonly housekeeping: Housekeeping;
  /** Each key's current window. */
  private readonly windows = new Map<string, SharedWindow>();
  /** Windows that ended with hits still to write. */
  private ended: SharedWindow[] = [];
  private flushing: Promise<void> | null = null;
  private timer: NodeJS.Timeout | null = null;

  constructor(private readonly prisma: PrismaClient) {
    this.housekeeping = new Housekeeping(async (now) => {
      for (const [key, window] of this.windows)
        if (window.windowEnd <= now.getTime() && window.pending === 0) this.windows.delete(key);
      await prisma.$executeRaw`DELETE FROM rate_limit_counters WHERE expires_at < ${now}`;
    });
  }

  hitInMemory(hits: readonly CounterHit[], now: number): number[] | undefined {
    this.housekeeping.due(now);
    for (const hit of hits) {
      const window = this.windowOf(hit);
      const budget = localBudget(hit.limit);
      if (window.pending >= budget || window.known + window.pending + 1 > hit.limit - budget) return undefined;
    }
    const counts = hits.map((hit) => {
      const window = this.windows.get(hit.key)!;
      window.pending += 1;
      return window.known + window.pending;
    });
    this.flushSoon();
    return counts;
  }

  async hit(hits: readonly CounterHit[], now: number): Promise<number[]> {
    const counts = this.hitInMemory(hits, now);
    if (counts !== undefined) return counts;
    const windows = hits.map((hit) => this.windowOf(hit));
    for (const window of windows) window.pending += 1;
    await this.flush();
    return windows.map((window) => window.known + window.pending);
  }

  private windowOf(hit: CounterHit): SharedWindow {
    let window = this.windows.get(hit.key);
    if (window?.windowStart === hit.windowStart) return window;
    if (window !== undefined && window.pending > 0) this.ended.push(window);
    window = { key: hit.key, windowStart: hit.windowStart, windowEnd: hit.windowEnd, known: 0, pending: 0 };
    this.windows.set(hit.key, window);
    return window;
  }

  private flushSoon(): void {
    if (this.timer) return;
    this.timer = setTimeout(() => {
      this.timer = null;
      // A failed write keeps its hits pending; the next one retries them.
      this.flush().catch(() => {});
    }, COUNTER_FLUSH_MS);
    this.timer.unref();
  }

  /** Writes every pending hit (after any write already under way) and learns the shared counts. */
  private async flush(): Promise<void> {
    while (this.flushing) await this.flushing;
    const ended = this.ended;
    this.ended = [];
    const batch = [...ended, ...this.windows.values()]
      .filter((window) => window.pending > 0)
      .map((window) => ({ window, count: window.pending }));
    if (batch.length === 0) return;
    for (const { window, count } of batch) window.pending -= count;
    this.flushing = this.write(batch).finally(() => (this.flushing = null));
    await this.flushing;
  }

  private async write(batch: ReadonlyArray<{ window: SharedWindow; count: number }>): Promise<void> {
    try {
      const values = batch.map(
        ({ window, count }) =>
          Prisma.sql`(${window.key}, ${new Date(window.windowStart)}, ${count}, ${new Date(window.windowEnd)})`,
      );
      const rows = await this.prisma.$queryRaw<Array<{ key: string; window_start: Date; hits: number }>>`
        INSERT INTO rate_limit_counters (key, window_start, hits, expires_at)
        VALUES ${Prisma.join(values)}
        ON CONFLICT (key, window_start) DO UPDATE SET hits = rate_limit_counters.hits + EXCLUDED.hits
        RETURNING key, window_start, hits`;
      const counts = new Map(
        rows.map((row) => [`${row.key}\n${new Date(row.window_start).getTime()}`, Number(row.hits)]),
      );
      for (const { window } of batch) window.known = counts.get(`${window.key}\n${window.windowStart}`) ?? window.known;
    } catch (error) {
      for (const { window, count } of batch) {
        window.pending += count;
        // A window that ended meanwhile is written with the next flush.
        if (this.windows.get(window.key) !== window) this.ended.push(window);
      }
      throw error;
    }
  }
}

/**
 * Counters in this process's memory, for the embedded database: one process
 * owns it, and its single connection is kept for real work.
 */
export class MemoryRateLimitCounters implements RateLimitCounters {
  private readonly windows = new Map<string, { start: number; end: number; hits: number }>();
  private readonly housekeeping = new Housekeeping(async (now) => {
    for (const [key, window] of this.windows) if (window.end <= now.getTime()) this.windows.delete(key);
  });

  hitInMemory(hits: readonly CounterHit[], now: number): number[] {
    this.housekeeping.due(now);
    return hits.map(({ key, windowStart, windowEnd }) => {
      const window = this.windows.get(key);
      if (window && window.start === windowStart) return ++window.hits;
      this.windows.set(key, { start: windowStart, end: windowEnd, hits: 1 });
      return 1;
    });
  }

  async hit(hits: readonly CounterHit[], now: number): Promise<number[]> {
    return this.hitInMemory(hits, now);
  }
}

/** The request guards of one process over its database (docs/api/rest.md#signing-a-merchant-call, #rate-limits). */
export function openRequestGuard(db: Database, config: RequestGuardConfig): RequestGuard {
  const shared = db.kind === 'postgresql';
  const counters = shared ? new PrismaRateLimitCounters(db.prisma) : new MemoryRateLimitCounters();
  const buckets = shared ? new PrismaRateLimitBuckets(db.prisma) : memoryBuckets();
  return {
    signatures: new PrismaSignatureReplayCache(db.prisma),
    throttle: new Throttle(counters, config.rateLimits, buckets),
    trustProxy: config.trustProxy,
  };
}
