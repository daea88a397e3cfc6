import { randomUUID } from 'node:crypto';
import { getAddress } from 'viem';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { Decimal } from '../../src/domain/shared/money.js';
import { createMerchant, type TestMerchant } from '../factories/merchant.js';
import { checkoutRequest } from '../factories/checkout-request.js';
import { startChainKassa, startTestChain, type ChainKassa, type TestChain } from '../support/chain.js';
import { fixedRates } from '../support/fixed-rates.js';
import { startTestKassa, type TestKassa } from '../support/kassa.js';
import {
  AMOUNT,
  controllableClock,
  createSession,
  expectErrorBody,
  expectErrorCode,
  ISO_DATE,
  UUID,
} from '../support/rest-kassa.js';
import { signedRequest } from '../support/webhooks.js';
import {
  paidSession as paidOn,
  postRefund as post,
  randomWallet,
  refundEvents as eventsOf,
  refundHistory,
  refundRows as rowsOf,
} from '../support/refunds.js';

/**
 * Refunds over REST (docs/api/refunds.md) on a real PostgreSQL, with sessions paid on a real anvil: kinds, bases,
 * claim links, cancel, idempotency, every refusal writing nothing, and two instances creating at once.
 */

const CHAIN_ID = '31337';
const MIN = 60_000;

let chain: TestChain;
let node: ChainKassa;
let second: TestKassa;
const time = controllableClock();
const { rates } = fixedRates();

beforeAll(async () => {
  chain = await startTestChain();
  node = await startChainKassa(chain.url, { clock: time.clock, override: { rates } });
  second = await startTestKassa({
    database: node.kassa.database,
    clock: time.clock,
    override: { rates },
    env: { KASSA_NETWORKS: 'local', KASSA_RPC_URLS_LOCAL: chain.url },
  });
}, 60_000);

afterAll(async () => {
  await second?.close();
  await node?.close();
  await chain?.stop();
});

afterEach(() => time.release());

const kassa = () => node.kassa;
const paidSession = (asset: 'USDT' | 'BTC' | 'ETH' = 'USDT', extra = '0') => paidOn(chain, node, asset, extra);
const postRefund = (
  merchant: TestMerchant,
  sessionId: string,
  body: unknown,
  options: { key?: string; on?: TestKassa } = {},
) => post(options.on ?? kassa(), merchant, sessionId, body, options);
const refundRows = (organisationId: string) => rowsOf(kassa(), organisationId);
const historyOf = (refundId: string) => refundHistory(kassa(), refundId);
const refundEvents = (sessionId: string) => eventsOf(kassa(), sessionId);

describe('POST /checkout-sessions/:id/refunds', () => {
  it('full, to the merchant address: ready at once, the whole amount, one history row and refund.created', async () => {
    const paid = await paidSession('USDT');
    const destination = randomWallet();
    const response = await postRefund(paid.merchant, paid.id, { kind: 'full', destination: getAddress(destination) });
    expect(response.status, JSON.stringify(response.body)).toBe(201);
    const refund = response.body;
    expect(refund).toMatchObject({
      session_id: paid.id,
      organisation_id: paid.merchant.organisationId,
      kind: 'full',
      basis: 'token',
      status: 'ready',
      network: 'local',
      chain_id: CHAIN_ID,
      crypto_currency: 'USDT',
      token_address: chain.network.tokens.find((t) => t.ticker === 'USDT')!.address.toLowerCase(),
      amount: new Decimal(paid.sent).toFixed(8),
      base_units: new Decimal(paid.sent).times(1e6).toFixed(0),
      destination,
      destination_source: 'merchant',
      claim_url: null,
      claim_expires_at: null,
      tx_hash: null,
      confirmations: 0,
      fiat_currency: null,
    });
    expect(refund.id).toMatch(UUID);
    expect(refund.amount).toMatch(AMOUNT);
    expect(refund.created_at).toMatch(ISO_DATE);
    expect(await historyOf(refund.id)).toEqual([[null, 'ready', 'created']]);
    const events = await refundEvents(paid.id);
    expect(events.map((e) => e.type)).toEqual(['refund.created']);
    expect(events[0]!.data).toEqual(refund);

    // Everything is refunded: another refund of any kind is refused and writes nothing.
    const before = await refundRows(paid.merchant.organisationId);
    for (const body of [{ kind: 'full' }, { kind: 'part', amount: '0.000001' }]) {
      expectErrorCode(await postRefund(paid.merchant, paid.id, body), 409, 'refund_exceeds_received');
    }
    expect(await refundRows(paid.merchant.organisationId)).toEqual(before);

    const got = await signedRequest(kassa(), paid.merchant, 'get', `/refunds/${refund.id}`);
    expect(got.status).toBe(200);
    expect(got.body).toEqual(refund);
    const list = await signedRequest(kassa(), paid.merchant, 'get', `/checkout-sessions/${paid.id}/refunds`);
    expect(list.status).toBe(200);
    expect(list.body).toEqual({ data: [refund] });
  });

  it('excess of an overpaid session through a claim link: the part above the price, awaiting the payer', async () => {
    const paid = await paidSession('BTC', '0.00012345');
    const response = await postRefund(paid.merchant, paid.id, { kind: 'excess', claim_expires_in_minutes: 60 });
    expect(response.status, JSON.stringify(response.body)).toBe(201);
    expect(response.body).toMatchObject({
      kind: 'excess',
      status: 'awaiting_destination',
      crypto_currency: 'BTC',
      amount: '0.00012345',
      base_units: '123450000000000',
      destination: null,
      destination_source: null,
      claim_url: `https://pay.example.test/r/${response.body.id}`,
    });
    const expires = new Date(response.body.claim_expires_at).getTime() - new Date(response.body.created_at).getTime();
    expect(expires).toBe(60 * MIN);
    // The excess is refunded: a second excess refund finds nothing left of it.
    expectErrorCode(await postRefund(paid.merchant, paid.id, { kind: 'excess' }), 409, 'refund_exceeds_received');
    // The price itself is still there to refund.
    const rest = await postRefund(paid.merchant, paid.id, { kind: 'full', destination: randomWallet() });
    expect(rest.status).toBe(201);
    expect(rest.body.amount).toBe(new Decimal(paid.price).toFixed(8));
  });

  it('excess of a session paid exactly: 409 not_overpaid', async () => {
    const paid = await paidSession('USDT');
    const before = await refundRows(paid.merchant.organisationId);
    expectErrorCode(await postRefund(paid.merchant, paid.id, { kind: 'excess' }), 409, 'not_overpaid');
    expect(await refundRows(paid.merchant.organisationId)).toEqual(before);
  });

  it('a claim link lasts 7 days by default; cancel before sent frees the amount', async () => {
    const paid = await paidSession('USDT');
    const half = new Decimal(paid.sent).div(2).toDecimalPlaces(6, Decimal.ROUND_DOWN).toFixed();
    const created = await postRefund(paid.merchant, paid.id, { kind: 'part', amount: half, note: 'damaged box' });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    expect(created.body).toMatchObject({ kind: 'part', amount: new Decimal(half).toFixed(8), note: 'damaged box' });
    const life = new Date(created.body.claim_expires_at).getTime() - new Date(created.body.created_at).getTime();
    expect(life).toBe(7 * 24 * 60 * MIN);

    // A second half fits, a third does not.
    expect((await postRefund(paid.merchant, paid.id, { kind: 'part', amount: half })).status).toBe(201);
    expectErrorCode(
      await postRefund(paid.merchant, paid.id, { kind: 'part', amount: half }),
      409,
      'refund_exceeds_received',
    );

    const cancelled = await signedRequest(kassa(), paid.merchant, 'post', `/refunds/${created.body.id}/cancel`);
    expect(cancelled.status, JSON.stringify(cancelled.body)).toBe(200);
    expect(cancelled.body.status).toBe('cancelled');
    const again = await signedRequest(kassa(), paid.merchant, 'post', `/refunds/${created.body.id}/cancel`);
    expect(again.status).toBe(200);
    expect(again.body).toEqual(cancelled.body);
    expect(await historyOf(created.body.id)).toEqual([
      [null, 'awaiting_destination', 'created'],
      ['awaiting_destination', 'cancelled', 'cancelled by the merchant'],
    ]);
    expect((await refundEvents(paid.id)).map((e) => e.type)).toEqual([
      'refund.created',
      'refund.created',
      'refund.cancelled',
    ]);
    // Its amount is free again.
    expect((await postRefund(paid.merchant, paid.id, { kind: 'part', amount: half })).status).toBe(201);
  });

  it('fiat basis: the amount in the session currency at the rate of the moment, rate recorded', async () => {
    const paid = await paidSession('ETH');
    const response = await postRefund(paid.merchant, paid.id, { kind: 'part', basis: 'fiat', amount_fiat: 10 });
    expect(response.status, JSON.stringify(response.body)).toBe(201);
    expect(response.body).toMatchObject({
      basis: 'fiat',
      crypto_currency: 'ETH',
      token_address: null,
      fiat_currency: 'USD',
      amount_fiat: '10.00000000',
      unit_price_fiat: '4000.00000000',
      amount: '0.00250000',
      base_units: '2500000000000000',
    });
    expect(response.body.rate_source).toEqual(expect.any(String));
    expect(response.body.rated_at).toMatch(ISO_DATE);
  });

  it('Idempotency-Key: the same meaning answers the same refund, another meaning 409, nothing written twice', async () => {
    const paid = await paidSession('USDT');
    const key = randomUUID();
    const body = { kind: 'part', amount: '1.5' };
    const first = await postRefund(paid.merchant, paid.id, body, { key });
    expect(first.status).toBe(201);
    expect(first.headers['idempotent-replayed']).toBeUndefined();
    const replay = await postRefund(paid.merchant, paid.id, { amount: 1.5, kind: 'part' }, { key, on: second });
    expect(replay.status).toBe(201);
    expect(replay.headers['idempotent-replayed']).toBe('true');
    expect(replay.body).toEqual(first.body);
    const before = await refundRows(paid.merchant.organisationId);
    expectErrorCode(
      await postRefund(paid.merchant, paid.id, { kind: 'part', amount: '2' }, { key }),
      409,
      'idempotency_conflict',
    );
    expect(await refundRows(paid.merchant.organisationId)).toEqual(before);

    // One key sent at once to both instances for most of what is left: one refund, answered twice.
    const most = new Decimal(paid.sent).minus('1.5').times(0.9).toDecimalPlaces(6, Decimal.ROUND_DOWN).toFixed();
    const racing = { kind: 'part', amount: most };
    const twice = randomUUID();
    const answers = await Promise.all([
      postRefund(paid.merchant, paid.id, racing, { key: twice }),
      postRefund(paid.merchant, paid.id, racing, { key: twice, on: second }),
    ]);
    expect(answers.map((answer) => answer.status)).toEqual([201, 201]);
    expect(answers[0]!.body).toEqual(answers[1]!.body);
    expect(answers.filter((answer) => answer.headers['idempotent-replayed'] === 'true')).toHaveLength(1);
    expect((await refundRows(paid.merchant.organisationId)).refunds).toBe(before.refunds + 1);
  });
});

describe('refusals write nothing', () => {
  it('answers each bad request with its status, the error body and a code, and writes nothing', async () => {
    const paid = await paidSession('USDT');
    const other = await createMerchant(kassa().ctx, { wallet: randomWallet() });
    const open = await createSession(kassa(), paid.merchant, checkoutRequest());
    const lowerWallet = paid.merchant.wallet;
    const destination = randomWallet();
    const badChecksum = getAddress(destination).replace(/[a-f]/, (c) => c.toUpperCase());
    const cases: Array<[string, () => ReturnType<typeof postRefund>, number, string, RegExp?]> = [
      [
        'more than received',
        () => postRefund(paid.merchant, paid.id, { kind: 'part', amount: '1000000' }),
        409,
        'refund_exceeds_received',
        /would exceed/,
      ],
      ['unknown session', () => postRefund(paid.merchant, randomUUID(), { kind: 'full' }), 404, 'not_found'],
      ["another organisation's session", () => postRefund(other, paid.id, { kind: 'full' }), 404, 'not_found'],
      [
        'malformed address',
        () => postRefund(paid.merchant, paid.id, { kind: 'full', destination: '0x1234' }),
        400,
        'validation_failed',
        /destination must be an address/,
      ],
      [
        'wrong checksum',
        () => postRefund(paid.merchant, paid.id, { kind: 'full', destination: badChecksum }),
        400,
        'validation_failed',
        /checksum/,
      ],
      [
        'zero address',
        () => postRefund(paid.merchant, paid.id, { kind: 'full', destination: `0x${'0'.repeat(40)}` }),
        400,
        'destination_refused',
        /zero address/,
      ],
      [
        "the organisation's own wallet",
        () => postRefund(paid.merchant, paid.id, { kind: 'full', destination: lowerWallet }),
        400,
        'destination_refused',
      ],
      [
        'part without amount',
        () => postRefund(paid.merchant, paid.id, { kind: 'part' }),
        400,
        'validation_failed',
        /amount is required/,
      ],
      [
        'more decimals than the token',
        () => postRefund(paid.merchant, paid.id, { kind: 'part', amount: '0.0000001' }),
        400,
        'validation_failed',
        /at most 6 decimal places/,
      ],
      ['unknown kind', () => postRefund(paid.merchant, paid.id, { kind: 'all' }), 400, 'validation_failed'],
      [
        'unknown property',
        () => postRefund(paid.merchant, paid.id, { kind: 'full', extra: 1 }),
        400,
        'validation_failed',
      ],
      [
        'fiat basis with kind full',
        () => postRefund(paid.merchant, paid.id, { kind: 'full', basis: 'fiat' }),
        400,
        'validation_failed',
      ],
      [
        'an asset it did not receive',
        () => postRefund(paid.merchant, paid.id, { kind: 'full', crypto_currency: 'BTC' }),
        409,
        'session_not_refundable',
      ],
      [
        'a session still open',
        () => postRefund(paid.merchant, open.session_id, { kind: 'full' }),
        409,
        'session_not_refundable',
      ],
      ['a malformed session id', () => postRefund(paid.merchant, 'nope', { kind: 'full' }), 400, 'validation_failed'],
    ];
    for (const [name, call, status, code, message] of cases) {
      const before = await refundRows(paid.merchant.organisationId);
      const response = await call();
      expect(response.status, `${name}: ${JSON.stringify(response.body)}`).toBe(status);
      expectErrorCode(response, status, code as never, message);
      expect(await refundRows(paid.merchant.organisationId), name).toEqual(before);
    }
    // Unsigned: 401 before anything else.
    const unsigned = await kassa().http.post(`/checkout-sessions/${paid.id}/refunds`).send({ kind: 'full' });
    expectErrorBody(unsigned, 401);
    const unknownRefund = await signedRequest(kassa(), paid.merchant, 'get', `/refunds/${randomUUID()}`);
    expectErrorCode(unknownRefund, 404, 'not_found');
  });

  it("another organisation's refund is not found; a refund sent cannot be cancelled", async () => {
    const paid = await paidSession('USDT');
    const other = await createMerchant(kassa().ctx, { wallet: randomWallet() });
    const created = await postRefund(paid.merchant, paid.id, { kind: 'full', destination: randomWallet() });
    expectErrorCode(await signedRequest(kassa(), other, 'get', `/refunds/${created.body.id}`), 404, 'not_found');
    expectErrorCode(
      await signedRequest(kassa(), other, 'post', `/refunds/${created.body.id}/cancel`),
      404,
      'not_found',
    );
    expectErrorCode(
      await signedRequest(kassa(), other, 'get', `/checkout-sessions/${paid.id}/refunds`),
      404,
      'not_found',
    );
    await kassa().runtime.db.prisma.refund.update({ where: { id: created.body.id }, data: { status: 'sent' } });
    expectErrorCode(
      await signedRequest(kassa(), paid.merchant, 'post', `/refunds/${created.body.id}/cancel`),
      409,
      'refund_not_cancellable',
    );
  });
});

describe('two instances at once', () => {
  it('creates at once on two instances that together exceed what was received: the extra ones 409 with a code', async () => {
    for (let round = 0; round < 2; round += 1) {
      const paid = await paidSession('USDT');
      // Eight creates of 30% each, four per instance: three fit, five must be refused.
      const share = new Decimal(paid.sent).times(0.3).toDecimalPlaces(6, Decimal.ROUND_DOWN).toFixed();
      const answers = await Promise.all(
        Array.from({ length: 8 }, (_, index) =>
          postRefund(paid.merchant, paid.id, { kind: 'part', amount: share }, { on: index % 2 ? second : kassa() }),
        ),
      );
      const statuses = answers.map((answer) => answer.status).sort();
      expect(statuses, JSON.stringify(answers.map((a) => a.body))).toEqual([201, 201, 201, 409, 409, 409, 409, 409]);
      for (const refused of answers.filter((answer) => answer.status === 409))
        expect(refused.body.code).toBe('refund_exceeds_received');
      expect(await refundRows(paid.merchant.organisationId)).toMatchObject({ refunds: 3, history: 3 });
    }
  });
});

describe('the events feed', () => {
  it('lists refund events with the refund view, filtered by session', async () => {
    const paid = await paidSession('USDT');
    const created = await postRefund(paid.merchant, paid.id, { kind: 'full' });
    const feed = await signedRequest(kassa(), paid.merchant, 'get', `/events?session_id=${paid.id}`);
    expect(feed.status, JSON.stringify(feed.body)).toBe(200);
    const refundEvent = feed.body.data.find((event: any) => event.type === 'refund.created');
    expect(refundEvent).toMatchObject({ type: 'refund.created', data: created.body });
  });
});
