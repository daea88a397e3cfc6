import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { checkoutRequest, PAYER, txHash } from '../factories/checkout-request.js';
import { createMerchant, type TestMerchant } from '../factories/merchant.js';
import { startTestKassa, type TestKassa } from '../support/kassa.js';
import { controllableClock, createSession, isEmbedded } from '../support/rest-kassa.js';

/**
 * The cold lane's writer (src/graphql/cold-queries.ts) against Apollo on shapes beyond the page's: aliases, a repeated
 * time left, `__typename` at each level, every payment option field, a session paid in a selected asset. Instance B,
 * on the same database, answers each through Apollo; A without it, once Apollo answered the shape for another session.
 */

const time = controllableClock();
let a: TestKassa;
let b: TestKassa;
let merchant: TestMerchant;
beforeAll(async () => {
  a = await startTestKassa({ clock: time.clock });
  b = await startTestKassa({ database: a.database, clock: time.clock });
  merchant = await createMerchant(a.ctx);
  while (!a.runtime.changes.live || !b.runtime.changes.live) await new Promise((resolve) => setTimeout(resolve, 20));
});
afterAll(async () => {
  await b?.close();
  await a?.close();
});
afterEach(() => time.release());

const comparable = (headers: Record<string, string>) => {
  const { date: _date, 'x-request-id': _id, ...rest } = headers;
  return rest;
};

const ask = (kassa: TestKassa, query: string, id: string) =>
  kassa.http
    .get(`/graphql?${new URLSearchParams({ query, variables: JSON.stringify({ id }) })}`)
    .set('Apollo-Require-Preflight', 'true');

/** Asks until Apollo's answer for a new session was kept, so the shape was learned. */
async function learn(query: string): Promise<void> {
  await expect
    .poll(async () => {
      const id = (await createSession(a, merchant, checkoutRequest())).session_id as string;
      const kept = a.cachedQueries.size;
      expect((await ask(a, query, id)).status).toBe(200);
      return a.cachedQueries.size > kept;
    })
    .toBe(true);
}

/** A session paid in a selected asset: USDT bound on the local chain, so its options and amounts are the rest's. */
async function boundSession(): Promise<string> {
  const id = (await createSession(a, merchant, checkoutRequest())).session_id as string;
  const bound = await a.http.post(`/checkout-sessions/${id}/bind-tx`).send({
    tx_hash: txHash(Math.floor(Math.random() * 1e9)),
    chain_id: '31337',
    crypto_currency: 'USDT',
    payer_wallet_address: PAYER,
  });
  expect(bound.status).toBe(200);
  return id;
}

const SHAPES = [
  {
    name: 'aliases, a repeated time left and __typename at each level',
    query:
      'query Q($id: ID!) { s: checkoutSession(id: $id) { __typename left: secondsUntilExpiry id: sessionId ' +
      'secondsUntilExpiry state: status due: amountDue paymentOptions { __typename n: network ticker amount } ' +
      'again: secondsUntilExpiry transactions { __typename state txHash } } }',
  },
  {
    name: 'every payment option field, crypto options and items',
    query:
      'query Q($id: ID!) { checkoutSession(id: $id) { paymentOptions { network chainId ticker native contractAddress ' +
      'decimals walletAddress amount baseUnits uri } cryptoOptions { ticker id unitPriceFiat amount } ' +
      'items { name quantity unitPrice totalPrice } identityOptions supportedNetworks walletAddress expiresAt ' +
      'totalAmountFiat fiatCurrency overpaid pendingCoversDue paymentDetected amountPending amountReceived } }',
  },
];

describe.skipIf(isEmbedded)('a cold GraphQL query of another shape, answered without Apollo', () => {
  for (const shape of SHAPES) {
    it(`is Apollo's own answer, byte for byte: ${shape.name}`, async () => {
      await learn(shape.query);
      for (const id of [await boundSession(), (await createSession(a, merchant, checkoutRequest())).session_id]) {
        const cold = a.cachedQueries.coldHits;
        time.freeze(Date.now());
        const withoutApollo = await ask(a, shape.query, id as string);
        expect(a.cachedQueries.coldHits).toBe(cold + 1);
        const fromApollo = await ask(b, shape.query, id as string);
        expect(withoutApollo.status).toBe(200);
        expect(withoutApollo.text).toBe(fromApollo.text);
        expect(comparable(withoutApollo.headers)).toEqual(comparable(fromApollo.headers));
        time.release();
      }
    });
  }

  it('leaves a field with a resolver of its own to Apollo (the merchant)', async () => {
    const query = 'query Q($id: ID!) { checkoutSession(id: $id) { status merchant { name } } }';
    await learn(query);
    const cold = a.cachedQueries.coldHits;
    const id = (await createSession(a, merchant, checkoutRequest())).session_id as string;
    const answered = await ask(a, query, id);
    expect(a.cachedQueries.coldHits).toBe(cold);
    expect(answered.text).toBe((await ask(b, query, id)).text);
  });
});
