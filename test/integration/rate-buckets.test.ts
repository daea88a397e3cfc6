import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PrismaRateLimitBuckets } from '../../src/db/organisations/rate-buckets.store.js';
import type { BucketTake } from '../../src/domain/organisations/request-guard-ports.js';
import { startTestKassa, type TestKassa } from '../support/kassa.js';
import { isEmbedded } from '../support/rest-kassa.js';

/**
 * The token buckets of rate_limit_buckets (src/db/organisations/rate-buckets.store.ts) on a real PostgreSQL, as two instances
 * use them: two stores over one database.
 */
let kassa: TestKassa;
beforeAll(async () => {
  kassa = await startTestKassa();
});
afterAll(() => kassa?.close());

const T0 = Date.UTC(2026, 11, 5, 10, 0, 0);
let keys = 0;
/** A bucket of `size`, one token back per second. */
const bucket = (size: number): BucketTake => ({ key: `test:${++keys}`, intervalMs: 1_000, burstMs: size * 1_000 });

describe.skipIf(isEmbedded)('rate_limit_buckets', () => {
  it('two instances near empty share one bucket exactly; a refusal takes nothing and says when a token is back', async () => {
    const [first, second] = [
      new PrismaRateLimitBuckets(kassa.runtime.db.prisma),
      new PrismaRateLimitBuckets(kassa.runtime.db.prisma),
    ];
    const take = bucket(10);
    const answers: Array<number | null> = [];
    for (let i = 0; i < 12; i++) answers.push(await (i % 2 === 0 ? first : second).take(take, T0));
    expect(answers.slice(0, 10)).toEqual(Array(10).fill(null));
    expect(answers.slice(10)).toEqual([T0 + 1_000, T0 + 1_000]);
    // One token back a second later, on either instance; then empty again.
    expect(await second.take(take, T0 + 1_000)).toBeNull();
    expect(await first.take(take, T0 + 1_000)).toBe(T0 + 2_000);
  });

  it('far from empty an instance takes in memory and writes a moment later; the other then sees them', async () => {
    const [first, second] = [
      new PrismaRateLimitBuckets(kassa.runtime.db.prisma),
      new PrismaRateLimitBuckets(kassa.runtime.db.prisma),
    ];
    const take = bucket(100);
    // 100 / 20 = 5 in memory before a write.
    for (let i = 0; i < 5; i++) expect(first.takeInMemory(take, T0)).toBeNull();
    expect(first.takeInMemory(take, T0)).toBeUndefined();
    const row = () => kassa.runtime.db.prisma.rateLimitBucket.findUnique({ where: { key: take.key } });
    const deadline = Date.now() + 5_000;
    while ((await row()) === null) {
      expect(Date.now()).toBeLessThan(deadline);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    expect((await row())!.theoreticalArrivalMs).toBe(T0 + 5_000);
    // The other instance's first write adds its own take to the five.
    for (let i = 0; i < 95; i++) await second.take(take, T0);
    expect(await second.take(take, T0)).toBe(T0 + 1_000);
    // The first still believes the bucket far from empty: it may let its budget (5) through, then writes and is refused.
    const late: Array<number | null> = [];
    for (let i = 0; i < 6; i++) late.push(await first.take(take, T0));
    expect(late).toEqual([...Array(5).fill(null), T0 + 6_000]);
  });

  it('any instance deletes rows whose time passed a minute ago; a bucket moved on meanwhile is kept', async () => {
    const prisma = kassa.runtime.db.prisma;
    const [old, fresh] = [bucket(10), bucket(10)];
    await prisma.rateLimitBucket.createMany({
      data: [
        { key: old.key, theoreticalArrivalMs: T0 - 61_000 },
        { key: fresh.key, theoreticalArrivalMs: T0 + 5_000 },
      ],
    });
    // A new store's first take is due for housekeeping.
    const store = new PrismaRateLimitBuckets(prisma);
    expect(await store.take(bucket(10), T0)).toBeNull();
    const deadline = Date.now() + 5_000;
    while ((await prisma.rateLimitBucket.findUnique({ where: { key: old.key } })) !== null) {
      expect(Date.now()).toBeLessThan(deadline);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    expect((await prisma.rateLimitBucket.findUnique({ where: { key: fresh.key } }))!.theoreticalArrivalMs).toBe(
      T0 + 5_000,
    );
    // A deleted bucket is full again.
    for (let i = 0; i < 10; i++) expect(await store.take(old, T0)).toBeNull();
    expect(await store.take(old, T0)).toBe(T0 + 1_000);
  });
});
