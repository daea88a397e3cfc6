import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startTestKassa, type TestKassa } from '../support/kassa.js';
import { createMerchant, type TestMerchant } from '../factories/merchant.js';
import { checkoutRequest, PAYER } from '../factories/checkout-request.js';
import { PUBLIC_FIELDS, controllableClock, createSession, postBind } from '../support/rest-kassa.js';
import { MAX_UNVERIFIED_BINDS } from '../../src/domain/payments/bind-transaction.js';
import {
  BIND_MUTATION,
  SESSION_QUERY,
  graphqlData,
  postGraphql,
  restViewOf,
  withoutPayerIdentity,
} from '../support/graphql-kassa.js';

/**
 * REST and GraphQL are two doors to one domain: the same session reads the
 * same through both, and every bind case (test/e2e/rest-bind.test.ts) ends the
 * same way through both, with the same message.
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

let hashes = 0;
const newHash = () => `0x${(0x7a0000 + ++hashes).toString(16).padStart(64, 'e')}`;
const UNKNOWN_ID = '7d444840-9dc0-11d1-b245-5ffdce74fad2';
const CODE_BY_STATUS: Record<number, string> = { 400: 'BAD_USER_INPUT', 404: 'NOT_FOUND', 409: 'CONFLICT' };

const restGet = async (id: string) => (await kassa.http.get(`/checkout-sessions/${id}`)).body as Record<string, any>;
const graphqlGet = async (id: string) =>
  (await graphqlData(kassa, SESSION_QUERY, { id })).checkoutSession as Record<string, any>;

type RestBind = { tx_hash?: string; chain_id?: string; crypto_currency?: string; payer_wallet_address?: string };
const toInput = (body: RestBind) => ({
  txHash: body.tx_hash,
  chainId: body.chain_id,
  ...(body.crypto_currency !== undefined ? { cryptoCurrency: body.crypto_currency } : {}),
  ...(body.payer_wallet_address !== undefined ? { payerWalletAddress: body.payer_wallet_address } : {}),
});

/** Binds through REST on one session and through GraphQL on its twin; both outcomes, normalised. */
async function bindBoth(restSessionId: string, graphqlSessionId: string, body: RestBind) {
  const rest = await postBind(kassa, restSessionId, body);
  const graphql = await postGraphql(kassa, BIND_MUTATION, { sessionId: graphqlSessionId, input: toInput(body) });
  return { rest, graphql };
}

function expectSameRefusal(outcome: Awaited<ReturnType<typeof bindBoth>>) {
  const { rest, graphql } = outcome;
  expect(rest.status, JSON.stringify(rest.body)).toBeGreaterThanOrEqual(400);
  expect(graphql.body.errors, JSON.stringify(graphql.body)).toHaveLength(1);
  const [error] = graphql.body.errors;
  expect(error.extensions.code).toBe(CODE_BY_STATUS[rest.status]);
  if (rest.status === 400) {
    expect(error.extensions.messages).toEqual(rest.body.message);
    expect(error.message).toBe(rest.body.message.join('; '));
  } else {
    expect(error.message).toBe(rest.body.message);
  }
  expect(graphql.body.data?.bindTransaction ?? null).toBeNull();
}

/**
 * Two sessions made alike, one per API: the same request, each of its own merchant with
 * the same networks (on one wallet the second would quote amounts one step higher, to be
 * unique: docs/payment-rules.md, rule 4).
 */
const twins = async (network?: string, overrides: Record<string, unknown> = {}) => {
  const owners = [await createMerchant(kassa.ctx, { network }), await createMerchant(kassa.ctx, { network })];
  const a = await createSession(kassa, owners[0]!, checkoutRequest(overrides));
  const b = await createSession(kassa, owners[1]!, checkoutRequest(overrides));
  return [a.session_id as string, b.session_id as string] as const;
};
const PAYER_IDENTITY = ['user', 'payer_wallet_address'];

describe('reads: created over REST, read over GraphQL (and REST)', () => {
  it('every public field is identical, for several currencies, unbound and bound', async () => {
    const shops = [
      merchant,
      await createMerchant(kassa.ctx, { network: 'ethereum' }),
      await createMerchant(kassa.ctx, { network: 'local' }),
    ];
    const requests = [
      checkoutRequest(),
      checkoutRequest({
        currency: 'eur',
        user: { id: 'c-2', email: 'b@example.com', username: 'bee' },
        expires_in_minutes: 10080,
      }),
      checkoutRequest({ items: [{ name: 'Pin', quantity: 1000000, unit_price: 0.00000001 }] }),
    ];
    for (const [index, shop] of shops.entries()) {
      const created = await createSession(kassa, shop, requests[index]!);
      const viaGraphql = await graphqlGet(created.session_id);
      const viaRest = await restGet(created.session_id);
      expect(Object.keys(restViewOf(viaGraphql)).sort()).toEqual(
        PUBLIC_FIELDS.filter((f) => !PAYER_IDENTITY.includes(f)).sort(),
      );
      expect(restViewOf(viaGraphql)).toEqual(withoutPayerIdentity(viaRest));
      expect(viaGraphql.items).toEqual(
        created.items.map((item: Record<string, any>) => ({
          name: item.name,
          quantity: item.quantity,
          unitPrice: item.unit_price,
          totalPrice: item.total_price,
        })),
      );
    }
  });

  it('a bind over REST reads the same over GraphQL; a bind over GraphQL reads the same over REST', async () => {
    const [restSide, graphqlSide] = await twins();
    const restTx = newHash();
    const graphqlTx = newHash();
    const body = { chain_id: '56', crypto_currency: 'USDT', payer_wallet_address: PAYER };
    const rest = await postBind(kassa, restSide, { ...body, tx_hash: restTx });
    const graphql = await graphqlData(kassa, BIND_MUTATION, {
      sessionId: graphqlSide,
      input: toInput({ ...body, tx_hash: graphqlTx }),
    });
    expect(rest.status).toBe(200);
    // The bind results agree field by field (enums aside: GraphQL's own case).
    const result = graphql.bindTransaction;
    expect({
      session_id: result.sessionId,
      bound_tx_hash: result.boundTxHash,
      crypto_currency: result.cryptoCurrency,
      total_amount_crypto: result.totalAmountCrypto,
      status: result.status.toLowerCase(),
      idempotent: result.idempotent,
    }).toEqual({ ...rest.body, session_id: graphqlSide, bound_tx_hash: graphqlTx });
    // And each side reads the same through the other door.
    expect(restViewOf(await graphqlGet(restSide))).toEqual(withoutPayerIdentity(await restGet(restSide)));
    expect(restViewOf(await graphqlGet(graphqlSide))).toEqual(withoutPayerIdentity(await restGet(graphqlSide)));
    // The twins differ only in id, wallet and creation instant.
    const { session_id: _a, wallet_address: _b, expires_at: _e, ...restBound } = await restGet(restSide);
    const { session_id: _c, wallet_address: _d, expires_at: _f, ...graphqlBound } = await restGet(graphqlSide);
    expect(graphqlBound).toEqual(restBound);
    // Both binds are candidates the same way (hashes no chain knows: nothing is locked).
    const transactions = async (id: string) =>
      (
        await graphqlData(
          kassa,
          `query($id: ID!) { checkoutSession(id: $id) { transactions { chainId cryptoCurrency state } } }`,
          { id },
        )
      ).checkoutSession.transactions;
    expect(await transactions(graphqlSide)).toEqual(await transactions(restSide));
    // A replay through the other door is idempotent.
    const replay = await graphqlData(kassa, BIND_MUTATION, {
      sessionId: restSide,
      input: toInput({ ...body, tx_hash: restTx }),
    });
    expect(replay.bindTransaction).toMatchObject({ boundTxHash: restTx, idempotent: true });
  });

  it('unknown and malformed ids: 404/NOT_FOUND and 400/BAD_USER_INPUT with the same message', async () => {
    for (const id of [UNKNOWN_ID, 'not-a-uuid']) {
      const rest = await kassa.http.get(`/checkout-sessions/${id}`);
      const graphql = await postGraphql(kassa, SESSION_QUERY, { id });
      const [error] = graphql.body.errors;
      expect(error.extensions.code).toBe(CODE_BY_STATUS[rest.status]);
      expect(error.extensions.messages).toEqual(
        Array.isArray(rest.body.message) ? rest.body.message : [rest.body.message],
      );
    }
  });
});

describe('every bind refusal of test/e2e/rest-bind.test.ts ends the same way over GraphQL', () => {
  const valid = (): RestBind => ({ tx_hash: newHash(), chain_id: '31337', crypto_currency: 'ETH' });
  let restSide: string;
  let graphqlSide: string;
  beforeAll(async () => {
    [restSide, graphqlSide] = await twins();
  });

  it.each([
    ['tx_hash with 63 hex characters', { tx_hash: `0x${'a'.repeat(63)}` }],
    ['tx_hash with 65 hex characters', { tx_hash: `0x${'a'.repeat(65)}` }],
    ['tx_hash without 0x', { tx_hash: 'a'.repeat(64) }],
    ['tx_hash with 0X', { tx_hash: `0X${'a'.repeat(64)}` }],
    ['tx_hash with a non-hex character', { tx_hash: `0x${'a'.repeat(63)}g` }],
    ['an empty tx_hash', { tx_hash: '' }],
    ['tx_hash with a trailing newline', { tx_hash: `0x${'a'.repeat(64)}\n` }],
    ...['abc', '0', '0x0', '-1', '56.0', '1e3', '0x', '0xzz', ''].map(
      (chainId) => [`chain_id ${JSON.stringify(chainId)}`, { chain_id: chainId }] as const,
    ),
    ['payer with 39 hex characters', { payer_wallet_address: `0x${'1'.repeat(39)}` }],
    ['payer with 41 hex characters', { payer_wallet_address: `0x${'1'.repeat(41)}` }],
    ['payer without prefix', { payer_wallet_address: '1'.repeat(40) }],
    ['payer as an ENS name', { payer_wallet_address: 'payer.eth' }],
    ['every problem at once', { tx_hash: 'x', chain_id: 'y', payer_wallet_address: 'w' }],
  ] as Array<[string, RestBind]>)('%s', async (_what, change) => {
    expectSameRefusal(await bindBoth(restSide, graphqlSide, { ...valid(), ...change }));
  });

  it('a malformed session id', async () => {
    expectSameRefusal(await bindBoth('not-a-uuid', 'not-a-uuid', valid()));
  });

  it('a malformed session id and a bind that breaks rules: every problem at once, the id first', async () => {
    const outcome = await bindBoth('not-a-uuid', 'not-a-uuid', { ...valid(), tx_hash: 'x' });
    expectSameRefusal(outcome);
    expect(outcome.rest.body.message[0]).toBe('id must be a UUID');
    expect(outcome.rest.body.message.length).toBeGreaterThan(1);
  });

  it('an unknown session', async () => {
    expectSameRefusal(await bindBoth(UNKNOWN_ID, UNKNOWN_ID, valid()));
  });

  it('crypto_currency required while none is selected', async () => {
    expectSameRefusal(await bindBoth(restSide, graphqlSide, { tx_hash: newHash(), chain_id: '1' }));
  });

  it('a ticker the session does not offer', async () => {
    const [a, b] = await twins('ethereum');
    expectSameRefusal(await bindBoth(a, b, { tx_hash: newHash(), chain_id: '1', crypto_currency: 'BTC' }));
  });

  it("a chain not among the session's networks", async () => {
    const [a, b] = await twins('local');
    for (const chainId of ['1', '56', '137'])
      expectSameRefusal(await bindBoth(a, b, { tx_hash: newHash(), chain_id: chainId, crypto_currency: 'ETH' }));
  });

  it.each([['BNB'], ['BTC'], ['SOL']])('%s not available on chain 1', async (ticker) => {
    expectSameRefusal(
      await bindBoth(restSide, graphqlSide, { tx_hash: newHash(), chain_id: '1', crypto_currency: ticker }),
    );
  });

  it('a session holding as many unverified transactions as it may', async () => {
    const [a, b] = await twins();
    for (let i = 0; i < MAX_UNVERIFIED_BINDS; i += 1) {
      await postBind(kassa, a, valid());
      await postBind(kassa, b, valid());
    }
    expectSameRefusal(await bindBoth(a, b, valid()));
  });

  it('a ticker that differs from the one already locked, and a replay that differs from the first bind', async () => {
    const [a, b] = await twins();
    for (const id of [a, b]) {
      const eth = (await restGet(id)).crypto_options.find((o: { ticker: string }) => o.ticker === 'ETH');
      await kassa.runtime.db.prisma.checkoutSession.update({
        where: { id },
        data: { cryptoCurrency: 'ETH', totalAmountCrypto: eth.amount },
      });
    }
    expectSameRefusal(await bindBoth(a, b, { tx_hash: newHash(), chain_id: '1', crypto_currency: 'USDT' }));

    const [c, d] = await twins();
    const [txC, txD] = [newHash(), newHash()];
    await postBind(kassa, c, { tx_hash: txC, chain_id: '1', crypto_currency: 'ETH' });
    await postBind(kassa, d, { tx_hash: txD, chain_id: '1', crypto_currency: 'ETH' });
    const rest = await postBind(kassa, c, { tx_hash: txC, chain_id: '56', crypto_currency: 'ETH' });
    const graphql = await postGraphql(kassa, BIND_MUTATION, {
      sessionId: d,
      input: { txHash: txD, chainId: '56', cryptoCurrency: 'ETH' },
    });
    expectSameRefusal({ rest, graphql });
  });

  it('an expired session (the expiry is recorded though the bind is refused)', async () => {
    const start = Date.now();
    time.freeze(start);
    const [a, b] = await twins(undefined, { expires_in_minutes: 5 });
    time.freeze(start + 5 * 60_000);
    expectSameRefusal(await bindBoth(a, b, valid()));
    expect((await graphqlGet(b)).status).toBe('EXPIRED');
  });

  it('what GraphQL refuses by its type system (unknown ticker, non-strings, unknown fields, null): REST 400, GraphQL BAD_USER_INPUT', async () => {
    const cases: Array<[RestBind & Record<string, unknown>, Record<string, unknown>]> = [
      [{ ...valid(), crypto_currency: 'DOGE' }, { cryptoCurrency: 'DOGE' }],
      [{ ...valid(), crypto_currency: 'eth' }, { cryptoCurrency: 'eth' }],
      [{ ...valid(), tx_hash: 12 as unknown as string }, { txHash: 12 }],
      [{ ...valid(), chain_id: 56 as unknown as string }, { chainId: 56 }],
      [{ ...valid(), tx_hash: null as unknown as string }, { txHash: null }],
      [{ ...valid(), amount: '1' }, { amount: '1' }],
    ];
    for (const [restBody, graphqlChange] of cases) {
      const rest = await postBind(kassa, restSide, restBody);
      expect(rest.status).toBe(400);
      const graphql = await postGraphql(kassa, BIND_MUTATION, {
        sessionId: graphqlSide,
        input: { ...toInput(valid()), ...graphqlChange },
      });
      expect(graphql.status).toBe(400);
      expect(graphql.body.errors[0].extensions.code).toBe('BAD_USER_INPUT');
      expect(graphql.body.errors[0].message).toMatch(/^Variable "\$input" got invalid value/);
    }
    // Nothing was bound by any of them.
    expect([(await restGet(restSide)).bound_tx_hash, (await restGet(graphqlSide)).bound_tx_hash]).toEqual([null, null]);
  });
});
