import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startTestKassa, type TestKassa } from '../support/kassa.js';
import { createMerchant, type TestMerchant } from '../factories/merchant.js';
import { MAX_UNVERIFIED_BINDS } from '../../src/domain/payments/bind-transaction.js';
import { checkoutRequest } from '../factories/checkout-request.js';
import { createApiKey } from '../../src/domain/organisations/api-keys.js';
import {
  controllableClock,
  createSession,
  expectErrorBody,
  isEmbedded,
  postBind,
  postCreate,
  writtenRows,
} from '../support/rest-kassa.js';

/**
 * docs/api/rest.md#create-rules-and-limits (Idempotency-Key) and #bind-rules under concurrency: many
 * requests at once over real HTTP, one outcome in the database.
 *
 * Embedded mode: pglite-socket 0.2.17 serialises
 * single protocol messages, not Parse/Bind/Execute/Sync batches, and pins a
 * connection only while PGlite is inside a transaction, so concurrent
 * statements outside a transaction clobber each other's unnamed prepared
 * statement (upstream: electric-sql/pglite#1046). Requests then fail with
 * 500 (`bind message supplies 2 parameters, but prepared statement "" requires 3`,
 * `portal "" does not exist`) or, worse, read another query's rows (a valid
 * key answered 401, an organisation with wallets answered 422). Kassa therefore
 * gives the embedded database a pool of one connection (src/db/database.ts),
 * and these tests prove parallel requests are correct in both modes.
 */

const time = controllableClock();
let kassa: TestKassa;
let merchant: TestMerchant;

beforeAll(async () => {
  kassa = await startTestKassa({ clock: time.clock });
  merchant = await createMerchant(kassa.ctx);
});
afterAll(() => kassa?.close());
afterEach(() => time.release());

const IDEMPOTENCY_CONFLICT = 'Idempotency-Key was already used with a different request body';
const BAD_KEY = ['Idempotency-Key must be 1 to 255 printable ASCII characters'];

describe('Idempotency-Key', () => {
  it('20 parallel creates with one key → twenty 201 with one session, written once', async () => {
    const shop = await createMerchant(kassa.ctx);
    const body = checkoutRequest({ metadata: { order: 'parallel-1' } });
    const responses = await Promise.all(
      Array.from({ length: 20 }, () => postCreate(kassa, shop, body, { idempotencyKey: 'order-parallel-1' })),
    );
    expect(responses.map((r) => r.status)).toEqual(Array(20).fill(201));
    const ids = new Set(responses.map((r) => r.body.session_id));
    expect(ids.size).toBe(1);
    // One request created it; the nineteen others were answered with it.
    expect(responses.filter((r) => r.headers['idempotent-replayed'] === 'true')).toHaveLength(19);
    for (const response of responses) expect(response.body).toEqual(responses[0]!.body);
    expect(await writtenRows(kassa, shop.organisationId)).toEqual({
      sessions: 1,
      items: 2,
      quotes: 6,
      networks: 3,
      history: 1,
      outbox: 1,
      idempotencyKeys: 1,
    });
  });

  it('10 parallel creates with different keys → ten sessions', async () => {
    const shop = await createMerchant(kassa.ctx);
    const responses = await Promise.all(
      Array.from({ length: 10 }, (_, i) =>
        postCreate(kassa, shop, checkoutRequest(), { idempotencyKey: `distinct-${i}` }),
      ),
    );
    expect(responses.map((r) => r.status)).toEqual(Array(10).fill(201));
    expect(new Set(responses.map((r) => r.body.session_id)).size).toBe(10);
    expect((await writtenRows(kassa, shop.organisationId)).sessions).toBe(10);
  });

  it('a replay answers 201 with the same session, marked Idempotent-Replayed', async () => {
    const first = await postCreate(kassa, merchant, checkoutRequest(), { idempotencyKey: 'order-replay' });
    const again = await postCreate(kassa, merchant, checkoutRequest(), { idempotencyKey: 'order-replay' });
    expect(first.status).toBe(201);
    expect(first.headers['idempotent-replayed']).toBeUndefined();
    expect(again.status).toBe(201);
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(again.body).toEqual(first.body);
  });

  it('the same request spelled differently (key order, number format, currency case) is the same request', async () => {
    const first = await createSession(kassa, merchant, checkoutRequest(), { idempotencyKey: 'order-spelling' });
    const respelled =
      '{"currency":"usd","items":[{"unit_price":12.50,"quantity":2,"name":"Coffee beans"},' +
      '{"name":"Grinder","unit_price":8.0e1,"quantity":1}],"user":{"email":"payer@example.com","id":"customer-1"}}';
    const again = await postCreate(kassa, merchant, respelled, { idempotencyKey: 'order-spelling' });
    expect(again.status).toBe(201);
    expect(again.body.session_id).toBe(first.session_id);
  });

  it('the same key with a different body → 409, and nothing is written', async () => {
    const shop = await createMerchant(kassa.ctx);
    await createSession(kassa, shop, checkoutRequest(), { idempotencyKey: 'order-conflict' });
    const before = await writtenRows(kassa, shop.organisationId);
    for (const different of [
      checkoutRequest({ currency: 'EUR' }),
      checkoutRequest({ metadata: { note: 'changed' } }),
      checkoutRequest({ expires_in_minutes: 61 }),
      checkoutRequest({
        items: [
          { name: 'Coffee beans', quantity: 3, unit_price: 12.5 },
          { name: 'Grinder', quantity: 1, unit_price: 80 },
        ],
      }),
    ]) {
      expectErrorBody(
        await postCreate(kassa, shop, different, { idempotencyKey: 'order-conflict' }),
        409,
        IDEMPOTENCY_CONFLICT,
      );
    }
    expect(await writtenRows(kassa, shop.organisationId)).toEqual(before);
  });

  it('is scoped to the organisation: two organisations, one key, two sessions', async () => {
    const first = await createMerchant(kassa.ctx);
    const second = await createMerchant(kassa.ctx);
    const a = await createSession(kassa, first, checkoutRequest(), { idempotencyKey: 'shared-key' });
    const b = await createSession(kassa, second, checkoutRequest(), { idempotencyKey: 'shared-key' });
    expect(a.session_id).not.toBe(b.session_id);
    expect([a.organisation_id, b.organisation_id]).toEqual([first.organisationId, second.organisationId]);
    // And another organisation's different body under that key is no conflict.
    const c = await postCreate(kassa, await createMerchant(kassa.ctx), checkoutRequest({ currency: 'GBP' }), {
      idempotencyKey: 'shared-key',
    });
    expect(c.status).toBe(201);
  });

  it('is scoped to the organisation, not the API key: a second key of the organisation replays', async () => {
    const shop = await createMerchant(kassa.ctx);
    const secondKey = await createApiKey(kassa.ctx, shop.organisationId);
    const a = await createSession(kassa, shop, checkoutRequest(), { idempotencyKey: 'org-wide' });
    const b = await postCreate(kassa, secondKey, checkoutRequest(), { idempotencyKey: 'org-wide' });
    expect(b.status).toBe(201);
    expect(b.body.session_id).toBe(a.session_id);
  });

  // Known defect, see the report: the replay path of src/domain/sessions/create-checkout-session.ts reads the
  // session without settling expiry, so it shows an open status after expires_at.
  it('a replay after the session expired answers its settled status (expired)', async () => {
    const shop = await createMerchant(kassa.ctx);
    const start = Date.now();
    time.freeze(start);
    const first = await createSession(kassa, shop, checkoutRequest({ expires_in_minutes: 5 }), {
      idempotencyKey: 'order-expired',
    });
    expect(first.status).toBe('waiting_payment');
    time.freeze(start + 6 * 60_000);
    const replay = await postCreate(kassa, shop, checkoutRequest({ expires_in_minutes: 5 }), {
      idempotencyKey: 'order-expired',
    });
    expect(replay.status).toBe(201);
    expect(replay.body.session_id).toBe(first.session_id);
    expect(replay.body.status).toBe('expired');
  });

  it.each([
    ['empty', ''],
    ['256 characters', 'k'.repeat(256)],
    ['a tab inside', 'order\t1'],
  ])('an invalid key (%s) → 400', async (_what, key) => {
    expectErrorBody(await postCreate(kassa, merchant, checkoutRequest(), { idempotencyKey: key }), 400, BAD_KEY);
  });

  it('255 printable characters (spaces inside allowed) is a valid key', async () => {
    const key = `${'k'.repeat(126)} ${'~'.repeat(128)}`;
    expect(key).toHaveLength(255);
    const first = await createSession(kassa, merchant, checkoutRequest(), { idempotencyKey: key });
    const again = await postCreate(kassa, merchant, checkoutRequest(), { idempotencyKey: key });
    expect(again.body.session_id).toBe(first.session_id);
  });

  it('an invalid key on an unsigned call is still a 401', async () => {
    const response = await kassa.http
      .post('/checkout-sessions')
      .set('Idempotency-Key', '')
      .set('Content-Type', 'application/json')
      .send('{}');
    expect(response.status).toBe(401);
  });
});

describe('unique amounts (docs/payment-rules.md, rule 4)', () => {
  const usdt = (view: Record<string, any>) =>
    view.crypto_options.find((option: { ticker: string }) => option.ticker === 'USDT').amount as string;

  it('20 parallel creates of one basket on one wallet → 20 different amounts, each claimed once', async () => {
    const shop = await createMerchant(kassa.ctx);
    const views = await Promise.all(Array.from({ length: 20 }, () => createSession(kassa, shop, checkoutRequest())));
    expect(new Set(views.map(usdt)).size).toBe(20);
    const claims = await kassa.runtime.db.prisma.paymentAmountClaim.findMany({
      where: { walletAddress: shop.wallet, asset: 'USDT' },
    });
    expect(claims.length).toBe(20 * 3);
    expect(new Set(claims.map((claim) => `${claim.network}:${claim.amount.toFixed(8)}`)).size).toBe(claims.length);
  });

  it.skipIf(isEmbedded)(
    'two instances creating one basket at once (each guessing from its own last step) still hand out different amounts',
    async () => {
      const second = await startTestKassa({ database: kassa.database });
      try {
        const shop = await createMerchant(kassa.ctx);
        const views = await Promise.all(
          Array.from({ length: 20 }, (_, i) => createSession(i % 2 ? second : kassa, shop, checkoutRequest())),
        );
        expect(new Set(views.map(usdt)).size).toBe(20);
        // A restarted instance (no guesses) finds the free amounts in the database.
        const third = await startTestKassa({ database: kassa.database });
        try {
          const more = await Promise.all(
            Array.from({ length: 5 }, () => createSession(third, shop, checkoutRequest())),
          );
          expect(new Set([...views, ...more].map(usdt)).size).toBe(25);
        } finally {
          await third.close();
        }
      } finally {
        await second.close();
      }
    },
  );

  it('KASSA_UNIQUE_AMOUNT_STEPS=3: five parallel creates of one basket → three 201 with different amounts, two 409', async () => {
    const small = await startTestKassa({ env: { KASSA_UNIQUE_AMOUNT_STEPS: '3' } });
    try {
      const shop = await createMerchant(small.ctx);
      const answers = await Promise.all(Array.from({ length: 5 }, () => postCreate(small, shop, checkoutRequest())));
      const created = answers.filter((answer) => answer.status === 201);
      expect(created).toHaveLength(3);
      expect(new Set(created.map((answer) => usdt(answer.body))).size).toBe(3);
      for (const refused of answers.filter((answer) => answer.status !== 201)) {
        expectErrorBody(refused, 409);
        expect(refused.body.message).toContain('(3 amounts a price, KASSA_UNIQUE_AMOUNT_STEPS)');
        expect(refused.body.message).toContain('ask the operator to raise KASSA_UNIQUE_AMOUNT_STEPS');
      }
    } finally {
      await small.close();
    }
  });
});

describe('bind races (transactions unknown to the chain: a bind is a hint, docs/payment-rules.md, rule 3)', () => {
  it('20 parallel binds of one unknown transaction to 20 sessions → all accepted, none locks its session', async () => {
    const sessions: string[] = [];
    for (let i = 0; i < 20; i += 1) sessions.push((await createSession(kassa, merchant, checkoutRequest())).session_id);
    const tx = `0x${'5eed'.repeat(16)}`;
    const responses = await Promise.all(
      sessions.map((id) => postBind(kassa, id, { tx_hash: tx, chain_id: '1', crypto_currency: 'ETH' })),
    );

    expect(responses.map((r) => r.status)).toEqual(Array(20).fill(200));
    for (const response of responses)
      expect(response.body).toMatchObject({ bound_tx_hash: tx, idempotent: false, crypto_currency: 'ETH' });
    const prisma = kassa.runtime.db.prisma;
    expect(
      await prisma.checkoutSession.count({
        where: { id: { in: sessions }, OR: [{ boundTxHash: { not: null } }, { cryptoCurrency: { not: null } }] },
      }),
    ).toBe(0);
    expect(await prisma.checkoutSessionTransaction.count({ where: { txHash: tx } })).toBe(20);
    expect(
      await prisma.outboxEvent.count({ where: { type: 'checkout_session.tx_bound', sessionId: { in: sessions } } }),
    ).toBe(0);
  });

  it(`20 parallel binds of different transactions to one session → ${MAX_UNVERIFIED_BINDS} accepted, the rest 409 until they are checked`, async () => {
    const { session_id: id } = await createSession(kassa, merchant, checkoutRequest());
    const hashes = Array.from({ length: 20 }, (_, i) => `0x${(i + 1).toString(16).padStart(64, 'd')}`);
    const responses = await Promise.all(
      hashes.map((tx) => postBind(kassa, id, { tx_hash: tx, chain_id: '56', crypto_currency: 'BNB' })),
    );

    expect(responses.filter((r) => r.status === 200)).toHaveLength(MAX_UNVERIFIED_BINDS);
    const lost = responses.filter((r) => r.status !== 200);
    expect(lost).toHaveLength(20 - MAX_UNVERIFIED_BINDS);
    for (const response of lost) {
      expectErrorBody(
        response,
        409,
        `Checkout session already holds ${MAX_UNVERIFIED_BINDS} transactions that are not verified yet; wait until they are checked`,
      );
    }
    expect(await kassa.runtime.db.prisma.checkoutSessionTransaction.count({ where: { sessionId: id } })).toBe(
      MAX_UNVERIFIED_BINDS,
    );
    expect((await kassa.http.get(`/checkout-sessions/${id}`)).body).toMatchObject({
      bound_tx_hash: null,
      crypto_currency: null,
    });
  });

  it('20 parallel binds of the same transaction to one session → one first bind, nineteen idempotent', async () => {
    const { session_id: id } = await createSession(kassa, merchant, checkoutRequest());
    const tx = `0x${'1de0'.repeat(16)}`;
    const responses = await Promise.all(
      Array.from({ length: 20 }, () => postBind(kassa, id, { tx_hash: tx, chain_id: '1', crypto_currency: 'USDT' })),
    );
    expect(responses.map((r) => r.status)).toEqual(Array(20).fill(200));
    expect(responses.filter((r) => r.body.idempotent === false)).toHaveLength(1);
    expect(
      await kassa.runtime.db.prisma.checkoutSessionTransaction.count({ where: { sessionId: id, txHash: tx } }),
    ).toBe(1);
  });
});

describe('expiry races', () => {
  it('20 parallel reads of a session past expiry → all expired, one history row, one event', async () => {
    const start = Date.now();
    time.freeze(start);
    const { session_id: id } = await createSession(kassa, merchant, checkoutRequest({ expires_in_minutes: 5 }));
    time.freeze(start + 6 * 60_000);
    const responses = await Promise.all(Array.from({ length: 20 }, () => kassa.http.get(`/checkout-sessions/${id}`)));
    expect(responses.map((r) => [r.status, r.body.status])).toEqual(Array(20).fill([200, 'expired']));
    const prisma = kassa.runtime.db.prisma;
    expect(await prisma.checkoutSessionStatusChange.count({ where: { sessionId: id, toStatus: 'expired' } })).toBe(1);
    expect(await prisma.outboxEvent.count({ where: { sessionId: id, type: 'checkout_session.expired' } })).toBe(1);
  });
});
