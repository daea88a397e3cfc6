import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { randomUUID } from 'node:crypto';
import type { PrismaClient } from '../../src/generated/prisma/client.js';
import { createPrismaStore } from '../../src/db/prisma-store.js';
import { createMerchant } from '../factories/merchant.js';
import { startTestKassa, type TestKassa } from '../support/kassa.js';

/**
 * Unknown ids answered from memory (src/db/recent-misses.ts): a store over the real database whose Prisma client
 * counts the statements it sends, so "no round trip" is what the database saw.
 */
let kassa: TestKassa;
beforeAll(async () => {
  kassa = await startTestKassa();
});
afterAll(() => kassa?.close());

/** The store over a client that counts every model call and raw query it makes. */
function countingStore() {
  const prisma = kassa.runtime.db.prisma;
  const counted = { calls: 0 };
  const counting = (target: object): object =>
    new Proxy(target, {
      get(object, property) {
        const value = Reflect.get(object, property, object) as unknown;
        if (typeof value === 'function')
          return (...args: unknown[]) => {
            counted.calls += 1;
            return (value as (...a: unknown[]) => unknown).apply(object, args);
          };
        if (property === 'apiKey') return counting(value as object);
        return value;
      },
    });
  const statement = kassa.runtime.db.statement;
  const countedStatement: typeof statement = (...args) => {
    counted.calls += 1;
    return statement(...args);
  };
  const store = createPrismaStore({ prisma: counting(prisma) as PrismaClient, statement: countedStatement });
  return { store, counted };
}

describe('API keys', () => {
  it('an unknown public key is looked up once, then answered unknown from memory; a known key still found', async () => {
    const { store, counted } = countingStore();
    const unknown = `pk_${'0'.repeat(32)}`;
    expect(await store.apiKeys.findByPublicKey(unknown)).toBeNull();
    expect(counted.calls).toBe(1);
    for (let i = 0; i < 5; i++) expect(await store.apiKeys.findByPublicKey(unknown)).toBeNull();
    expect(counted.calls).toBe(1);
    const merchant = await createMerchant(kassa.ctx);
    expect((await store.apiKeys.findByPublicKey(merchant.apiKey))?.organisationId).toBe(merchant.organisationId);
  });

  it('a key this store creates is found at once, even if its public key was asked for before', async () => {
    const { store } = countingStore();
    const merchant = await createMerchant(kassa.ctx);
    const publicKey = `pk_${randomUUID().replaceAll('-', '')}`;
    expect(await store.apiKeys.findByPublicKey(publicKey)).toBeNull();
    const row = await kassa.runtime.db.prisma.apiKey.findFirstOrThrow({ where: { publicKey: merchant.apiKey } });
    await store.apiKeys.create({
      id: randomUUID(),
      organisationId: merchant.organisationId,
      publicKey,
      secretCiphertext: row.secretCiphertext,
    });
    expect((await store.apiKeys.findByPublicKey(publicKey))?.publicKey).toBe(publicKey);
  });
});

describe('checkout sessions', () => {
  it('an unknown session id is read once, then answered unknown from memory for a few seconds', async () => {
    const { store, counted } = countingStore();
    const unknown = randomUUID();
    expect(await store.sessions.findById(unknown)).toBeNull();
    const afterFirst = counted.calls;
    expect(afterFirst).toBeGreaterThan(0);
    for (let i = 0; i < 5; i++) expect(await store.sessions.findById(unknown)).toBeNull();
    expect(counted.calls).toBe(afterFirst);
  });
});
