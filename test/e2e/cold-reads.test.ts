import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { readSession } from '../../src/db/sessions/checkout-session.read.js';
import {
  SessionReads,
  boundTransactionsRead,
  readSessionForRead,
} from '../../src/db/sessions/session-read-function.js';
import { boundTransactions } from '../../src/db/payments/bound-transaction.store.js';
import { Decimal } from '../../src/domain/shared/money.js';
import { PAGE_DOCUMENT_DATA } from '../../src/graphql/page-documents.js';
import { checkoutRequest, PAYER, txHash } from '../factories/checkout-request.js';
import { createMerchant, type TestMerchant } from '../factories/merchant.js';
import { startTestKassa, type TestKassa } from '../support/kassa.js';
import { controllableClock, createSession, isEmbedded } from '../support/rest-kassa.js';

/**
 * Issue 37: a session nobody has read yet is read in one statement (kassa_read_session, with its bound transactions)
 * and answered before Express (REST GET) or without Apollo (a GraphQL query Apollo already answered for another
 * session): the same answers, byte for byte and header for header, as the route and Apollo give. Instance B, on the
 * same database, answers each comparison through Express or Apollo, as a first request of its kind.
 */

/** Both instances' clock: frozen while answers given at different moments are compared (the time left ticks). */
const time = controllableClock();
let a: TestKassa;
let b: TestKassa | null = null;
let merchant: TestMerchant;
beforeAll(async () => {
  a = await startTestKassa({ clock: time.clock });
  if (!isEmbedded) b = await startTestKassa({ database: a.database, clock: time.clock });
  merchant = await createMerchant(a.ctx);
  // Sessions are cached, and answers kept, only while the instance hears every change.
  while (!a.runtime.changes.live || b?.runtime.changes.live === false)
    await new Promise((resolve) => setTimeout(resolve, 20));
});
afterAll(async () => {
  await b?.close();
  await a?.close();
});
afterEach(() => time.release());

/** An answer's headers but those that differ on every request (Date, X-Request-Id). */
const comparable = (headers: Record<string, string>) => {
  const { date: _date, 'x-request-id': _id, ...rest } = headers;
  return rest;
};

/** A session with every optional part filled: items with a product, metadata, a bound transaction, amounts, a payer. */
async function richSession(kassa: TestKassa, hash = txHash(Math.floor(Math.random() * 1e9))): Promise<string> {
  const created = await createSession(
    kassa,
    merchant,
    checkoutRequest({
      currency: 'EUR',
      items: [
        { name: 'Tea', quantity: 3, unit_price: 2.5, product_id: 'tea-1' },
        { name: 'Cake', quantity: 1, unit_price: 4.12345678 },
      ],
      metadata: { order: 'A-17', nested: { n: 1 } },
      user: { id: 'customer-9', email: 'payer@example.com', username: 'payer' },
    }),
  );
  const id = created.session_id as string;
  const bound = await kassa.http
    .post(`/checkout-sessions/${id}/bind-tx`)
    .send({ tx_hash: hash, chain_id: '31337', crypto_currency: 'USDT', payer_wallet_address: PAYER });
  expect(bound.status).toBe(200);
  await kassa.ctx.store.transaction((tx) =>
    tx.updateSession(id, {
      amountPending: new Decimal('0.000000000000000123'),
      restAmount: new Decimal('1.23456789'),
      updatedAt: new Date(),
    }),
  );
  return id;
}

describe('a session read in one statement (kassa_read_session)', () => {
  it('is the session readSession reads, field for field, with its bound transactions', async () => {
    const id = await richSession(a);
    const { statement, prisma } = a.runtime.db;
    const session = await readSessionForRead(statement, id);
    expect(session).toEqual(await readSession(prisma, id));
    expect(session!.restAmount?.toFixed()).toBe('1.23456789');
    expect(session!.amountPending.toFixed()).toBe('0.000000000000000123');
    expect(boundTransactionsRead(session!)).toEqual(
      await boundTransactions.ofSession(prisma as unknown as Parameters<typeof boundTransactions.ofSession>[0], id),
    );
    expect(boundTransactionsRead(session!)).toHaveLength(1);
    // Unbound, no items beyond one, no metadata: the same too.
    const plain = (await createSession(a, merchant, checkoutRequest())).session_id as string;
    expect(await readSessionForRead(statement, plain)).toEqual(await readSession(prisma, plain));
    expect(await readSessionForRead(statement, '00000000-0000-4000-8000-000000000000')).toBeNull();
  });

  it('read in a batch (SessionReads), each session is the one read alone, bound transactions included', async () => {
    const { statement } = a.runtime.db;
    const ids = [
      await richSession(a),
      (await createSession(a, merchant, checkoutRequest())).session_id as string,
      '00000000-0000-4000-8000-000000000000',
      await richSession(a),
    ];
    const reads = new SessionReads(statement, 1);
    const batched = await Promise.all(ids.map((id) => reads.read(id)));
    // The four were asked in one turn: one statement.
    expect(reads.sent).toEqual({ statements: 1, calls: 4 });
    for (const [index, session] of batched.entries()) {
      const alone = await readSessionForRead(statement, ids[index]!);
      expect(session).toEqual(alone);
      if (alone) expect(boundTransactionsRead(session!)).toEqual(boundTransactionsRead(alone));
    }
    expect(batched[2]).toBeNull();
    expect(boundTransactionsRead(batched[3]!)).toHaveLength(1);
  });
});

describe.skipIf(isEmbedded)('a cold REST GET, answered before Express', () => {
  it("is the route's own answer: a session, an unknown id, a malformed one", async () => {
    const id = await richSession(a);
    // B through Express (a query string keeps a GET off the lane), A on the lane; neither has read the session.
    const cases = [id, '00000000-0000-4000-8000-00000000abcd', '------------------------------------'];
    for (const target of cases) {
      const viaExpress = await b!.http.get(`/checkout-sessions/${target}?via=express`);
      const viaLane = await a.http.get(`/checkout-sessions/${target}`);
      expect(viaLane.status).toBe(viaExpress.status);
      expect(viaLane.text).toBe(viaExpress.text);
      expect(comparable(viaLane.headers)).toEqual(comparable(viaExpress.headers));
    }
  });
});

/**
 * Asks `ask` (a query of one new session) until Apollo's answer was kept, so its shape was learned: an answer read
 * while the change feed still brings news of the session (its create) is not kept.
 */
async function learn(ask: () => Promise<{ status: number }>): Promise<void> {
  await expect
    .poll(async () => {
      const hits = a.cachedQueries.hits;
      const kept = a.cachedQueries.size;
      expect((await ask()).status).toBe(200);
      return a.cachedQueries.size > kept || a.cachedQueries.hits > hits;
    })
    .toBe(true);
}

const pageQuery = (name: 'CheckoutPoll' | 'CheckoutSession') => (id: string) =>
  `/graphql?${new URLSearchParams({ documentId: PAGE_DOCUMENT_DATA[name].id, variables: JSON.stringify({ id }) })}`;
const TEXT_QUERY =
  'query Pay($id: ID!) { checkoutSession(id: $id) { sessionId status expiresAt secondsUntilExpiry totalAmountFiat ' +
  'cryptoOptions { ticker amount unitPriceFiat } paymentOptions { network ticker amount baseUnits uri } ' +
  'transactions { txHash state reason } items { name quantity unitPrice totalPrice } amountDue } }';

describe.skipIf(isEmbedded)('a cold GraphQL query, answered without Apollo once Apollo answered its shape', () => {
  const shapes = [
    { name: "the page's poll by documentId", get: pageQuery('CheckoutPoll') },
    { name: "the page's session by documentId", get: pageQuery('CheckoutSession') },
    {
      name: 'a query by text over GET',
      get: (id: string) => `/graphql?${new URLSearchParams({ query: TEXT_QUERY, variables: JSON.stringify({ id }) })}`,
      headers: { 'Apollo-Require-Preflight': 'true' },
    },
  ];
  for (const shape of shapes) {
    it(`is Apollo's own answer, byte for byte and header for header: ${shape.name}`, async () => {
      const ask = (kassa: TestKassa, id: string) => kassa.http.get(shape.get(id)).set(shape.headers ?? {});
      await learn(async () => ask(a, (await createSession(a, merchant, checkoutRequest())).session_id as string));
      const cold = a.cachedQueries.coldHits;
      const id = await richSession(a);
      time.freeze(Date.now());
      const withoutApollo = await ask(a, id);
      expect(a.cachedQueries.coldHits).toBe(cold + 1);
      const fromApollo = await ask(b!, id);
      expect(withoutApollo.status).toBe(200);
      expect(withoutApollo.text).toBe(fromApollo.text);
      expect(comparable(withoutApollo.headers)).toEqual(comparable(fromApollo.headers));
      expect(withoutApollo.body.data.checkoutSession.transactions).toHaveLength(1);
      // Asked again: served again without Apollo (from the kept answer, or made again while news of the session's
      // last change was still on its way when it was first read).
      const served = a.cachedQueries.hits + a.cachedQueries.coldHits;
      expect((await ask(a, id)).text).toBe(withoutApollo.text);
      expect(a.cachedQueries.hits + a.cachedQueries.coldHits).toBe(served + 1);
    });
  }

  it('goes on to Apollo for an unknown session, and over POST by text', async () => {
    const ask = (kassa: TestKassa, id: string) =>
      kassa.http
        .post('/graphql')
        .set('Content-Type', 'application/json')
        .send(JSON.stringify({ query: TEXT_QUERY, variables: { id } }));
    await learn(async () => ask(a, (await createSession(a, merchant, checkoutRequest())).session_id as string));
    const cold = a.cachedQueries.coldHits;
    const unknown = '00000000-0000-4000-8000-00000000beef';
    const refused = await ask(a, unknown);
    expect(refused.body.errors[0].extensions.code).toBe('NOT_FOUND');
    expect(refused.text).toBe((await ask(b!, unknown)).text);
    expect(a.cachedQueries.coldHits).toBe(cold);
    const id = await richSession(a);
    time.freeze(Date.now());
    const withoutApollo = await ask(a, id);
    expect(a.cachedQueries.coldHits).toBe(cold + 1);
    expect(withoutApollo.text).toBe((await ask(b!, id)).text);
  });
});
