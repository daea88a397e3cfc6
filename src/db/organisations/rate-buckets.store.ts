import { Prisma, type PrismaClient } from '../../generated/prisma/client.js';
import type { BucketTake, RateLimitBuckets } from '../../domain/organisations/request-guard-ports.js';
import { gcraFreeAt } from '../../domain/organisations/throttle.js';
import { COUNTER_FLUSH_MS, Housekeeping, localBudget } from './request-guard.store.js';

/** A row is deleted this long after its time passed (a full bucket), so instances' clocks may differ that much. */
const CLOCK_MARGIN_MS = 60_000;

interface BucketState {
  readonly take: BucketTake;
  /** The theoretical arrival time as the database last answered it (this instance's takes and everyone else's). */
  known: number;
  /** Tokens taken here and not written yet. */
  pending: number;
}

/**
 * Token buckets in `rate_limit_buckets`, shared by the instances like the counters (docs/decisions/0009): judged in
 * memory and flushed in batches while full enough, by the database at once near empty, so nobody is refused early.
 */
export class PrismaRateLimitBuckets implements RateLimitBuckets {
  private readonly housekeeping: Housekeeping;
  private readonly states = new Map<string, BucketState>();
  private flushing: Promise<void> | null = null;
  private timer: NodeJS.Timeout | null = null;
  /** The caller's clock at the last take: what a flush writes its takes at. */
  private lastNow = 0;

  constructor(private readonly prisma: PrismaClient) {
    this.housekeeping = new Housekeeping(async (now) => {
      const nowMs = now.getTime();
      for (const [key, state] of this.states) if (state.pending === 0 && state.known < nowMs) this.states.delete(key);
      // A row whose time has passed is a full bucket, as no row is: safe whatever another instance writes meanwhile
      // (a row it moved on is no longer matched; one deleted under its write is inserted again).
      await this.prisma.$executeRaw`
        DELETE FROM rate_limit_buckets WHERE theoretical_arrival_ms < ${nowMs - CLOCK_MARGIN_MS}::double precision`;
    });
  }

  takeInMemory(take: BucketTake, now: number): number | null | undefined {
    this.housekeeping.due(now);
    this.lastNow = now;
    const state = this.stateOf(take);
    const budget = localBudget(Math.round(take.burstMs / take.intervalMs));
    if (state.pending >= budget) return undefined;
    const next = Math.max(state.known, now) + (state.pending + 1) * take.intervalMs;
    if (next - now > take.burstMs - budget * take.intervalMs) return undefined;
    state.pending += 1;
    this.flushSoon();
    return null;
  }

  async take(take: BucketTake, now: number): Promise<number | null> {
    const inMemory = this.takeInMemory(take, now);
    if (inMemory !== undefined) return inMemory;
    const state = this.stateOf(take);
    const pending = state.pending;
    state.pending = 0;
    const { intervalMs } = take;
    try {
      // The takes made here first, then this one if the bucket has a token for it (SET sees the row before the write).
      const rows = await this.prisma.$queryRaw<Array<{ tat: number; refused: boolean }>>`
        INSERT INTO rate_limit_buckets AS b (key, theoretical_arrival_ms, refused)
        VALUES (${take.key}, ${now + (pending + 1) * intervalMs}::double precision, false)
        ON CONFLICT (key) DO UPDATE SET
          theoretical_arrival_ms = GREATEST(b.theoretical_arrival_ms, ${now}::double precision)
            + ${pending * intervalMs}::double precision
            + CASE WHEN GREATEST(b.theoretical_arrival_ms, ${now}::double precision)
                        + ${(pending + 1) * intervalMs}::double precision <= ${now + take.burstMs}::double precision
                   THEN ${intervalMs}::double precision ELSE 0 END,
          refused = GREATEST(b.theoretical_arrival_ms, ${now}::double precision)
                      + ${(pending + 1) * intervalMs}::double precision > ${now + take.burstMs}::double precision
        RETURNING theoretical_arrival_ms AS tat, refused`;
      const { tat, refused } = rows[0]!;
      state.known = Math.max(state.known, Number(tat));
      return refused ? gcraFreeAt(Number(tat), take) : null;
    } catch (error) {
      state.pending += pending;
      throw error;
    }
  }

  private stateOf(take: BucketTake): BucketState {
    let state = this.states.get(take.key);
    if (state === undefined) this.states.set(take.key, (state = { take, known: Number.NEGATIVE_INFINITY, pending: 0 }));
    return state;
  }

  private flushSoon(): void {
    if (this.timer) return;
    this.timer = setTimeout(() => {
      this.timer = null;
      // A failed write keeps its takes pending; the next one retries them.
      this.flush().catch(() => {});
    }, COUNTER_FLUSH_MS);
    this.timer.unref();
  }

  /** Writes every take made here and not written yet, and learns the buckets' times. */
  private async flush(): Promise<void> {
    while (this.flushing) await this.flushing;
    const batch = [...this.states.values()]
      .filter((state) => state.pending > 0)
      .map((state) => ({ state, count: state.pending }));
    if (batch.length === 0) return;
    for (const { state, count } of batch) state.pending -= count;
    this.flushing = this.write(batch, this.lastNow).finally(() => (this.flushing = null));
    await this.flushing;
  }

  private async write(batch: ReadonlyArray<{ state: BucketState; count: number }>, now: number): Promise<void> {
    try {
      const values = batch.map(
        ({ state, count }) =>
          Prisma.sql`(${state.take.key}, ${now + count * state.take.intervalMs}::double precision, false)`,
      );
      // EXCLUDED's time less `now` is the takes' own time.
      const rows = await this.prisma.$queryRaw<Array<{ key: string; tat: number }>>`
        INSERT INTO rate_limit_buckets AS b (key, theoretical_arrival_ms, refused)
        VALUES ${Prisma.join(values)}
        ON CONFLICT (key) DO UPDATE SET
          theoretical_arrival_ms = GREATEST(b.theoretical_arrival_ms, ${now}::double precision)
            + (EXCLUDED.theoretical_arrival_ms - ${now}::double precision),
          refused = false
        RETURNING key, theoretical_arrival_ms AS tat`;
      const tats = new Map(rows.map((row) => [row.key, Number(row.tat)]));
      for (const { state } of batch) state.known = Math.max(state.known, tats.get(state.take.key) ?? state.known);
    } catch (error) {
      for (const { state, count } of batch) state.pending += count;
      throw error;
    }
  }
}
