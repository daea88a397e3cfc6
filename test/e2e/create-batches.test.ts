import { afterAll, describe, expect, it } from 'vitest';
import { startTestKassaOn, type TestKassa } from '../support/kassa.js';
import type { TestDatabaseMode } from '../support/databases.js';
import { createMerchant } from '../factories/merchant.js';
import { checkoutRequest } from '../factories/checkout-request.js';
import { expectErrorBody, postCreate, writtenRows } from '../support/rest-kassa.js';

/**
 * Creates written in batches (src/db/sessions/create-batcher.ts, migration 20261128100000_create_in_batches): creates
 * sent at once share statements and transactions, and each is still whole and on its own: its own session,
 * items, quotes, network, history row, outbox event and unique amounts, and a create that cannot be written
 * takes no other with it.
 */

const started: TestKassa[] = [];
afterAll(async () => {
  for (const kassa of started) await kassa.close();
});

async function kassaOn(mode: TestDatabaseMode, env: Record<string, string> = {}): Promise<TestKassa> {
  const kassa = await startTestKassaOn(mode, env);
  started.push(kassa);
  return kassa;
}

/** One basket per index, all at the same price: their unique amounts must all differ. */
const basket = (i: number) => checkoutRequest({ user: { id: `customer-${i}`, email: `payer${i}@example.com` } });

describe.each(['postgres', 'embedded'] as const)('creates in batches on %s', (mode) => {
  it('parallel creates: each session whole, every unique amount distinct, fewer transactions than sessions', async () => {
    // 40 at once on PostgreSQL; 20 on the embedded database, whose one connection makes each check a queue.
    const n = mode === 'postgres' ? 40 : 20;
    const kassa = await kassaOn(mode);
    const merchant = await createMerchant(kassa.ctx);
    const answers = await Promise.all(Array.from({ length: n }, (_, i) => postCreate(kassa, merchant, basket(i))));
    expect(answers.map((answer) => answer.status)).toEqual(Array(n).fill(201));
    const ids = answers.map((answer) => answer.body.session_id as string);
    expect(new Set(ids).size).toBe(n);
    const quotes = (await kassa.ctx.store.sessions.findById(ids[0]!))!.quotes.length;
    expect(await writtenRows(kassa, merchant.organisationId)).toEqual({
      sessions: n,
      items: 2 * n,
      quotes: n * quotes,
      networks: n * 3,
      history: n,
      outbox: n,
      idempotencyKeys: 0,
    });
    // Same basket, same wallets: every asset's amounts all differ, and each answer shows what was stored.
    for (let position = 0; position < quotes; position++) {
      const amounts = answers.map((answer) => answer.body.crypto_options[position].amount as string);
      expect(new Set(amounts).size).toBe(n);
    }
    for (const answer of answers) {
      const stored = (await kassa.ctx.store.sessions.findById(answer.body.session_id))!;
      expect(answer.body.crypto_options.map((option: { amount: string }) => option.amount)).toEqual(
        stored.quotes.map((quote) => quote.amount.toFixed(8)),
      );
    }
    // Each event shows its session as the answer did.
    const events = await kassa.runtime.db.prisma.outboxEvent.findMany({
      where: { organisationId: merchant.organisationId },
    });
    for (const answer of answers) {
      const event = events.find((candidate) => candidate.sessionId === answer.body.session_id)!;
      expect(event.payload).toEqual(answer.body);
    }
    // Written together: sessions sharing a transaction id were written by one statement.
    const transactions = await kassa.runtime.db.prisma.$queryRaw<Array<{ count: bigint }>>`
      SELECT count(DISTINCT xmin::text) AS count FROM checkout_sessions WHERE organisation_id = ${merchant.organisationId}::uuid`;
    expect(Number(transactions[0]!.count)).toBeLessThan(n);
  });

  // The batcher is the same code on both databases; this one runs on PostgreSQL only (it costs 4 s on PGlite).
  it.runIf(mode === 'postgres')(
    'a create that cannot be written fails alone: the others made with it are written whole',
    async () => {
      const kassa = await kassaOn(mode);
      const merchant = await createMerchant(kassa.ctx);
      const taken = (await postCreate(kassa, merchant, basket(0))).body.session_id as string;
      // The write of the create for customer-poison reuses a session id that exists: its insert fails inside
      // whatever batch it went in.
      const store = kassa.ctx.store;
      const createSession = store.createSession;
      (store as { createSession: typeof createSession }).createSession = (write) =>
        createSession.call(
          store,
          write.session.user.id === 'customer-poison' ? { ...write, session: { ...write.session, id: taken } } : write,
        );
      try {
        const bodies = Array.from({ length: 20 }, (_, i) =>
          i === 7 ? checkoutRequest({ user: { id: 'customer-poison', email: 'p@example.com' } }) : basket(i + 1),
        );
        const answers = await Promise.all(bodies.map((body) => postCreate(kassa, merchant, body)));
        expectErrorBody(answers[7]!, 500);
        expect(answers.filter((_, i) => i !== 7).map((answer) => answer.status)).toEqual(Array(19).fill(201));
      } finally {
        (store as { createSession: typeof createSession }).createSession = createSession;
      }
      const rows = await writtenRows(kassa, merchant.organisationId);
      expect(rows).toMatchObject({ sessions: 20, items: 40, history: 20, outbox: 20 });
    },
  );
});
