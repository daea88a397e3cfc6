import fc from 'fast-check';
import type { Response } from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestKassa, type TestKassa } from '../support/kassa.js';
import { createMerchant, type TestMerchant } from '../factories/merchant.js';
import { checkoutRequest } from '../factories/checkout-request.js';
import {
  AMOUNT,
  MERCHANT_ONLY_FIELDS,
  PUBLIC_FIELDS,
  createSession,
  assetStep,
  expectCeilingAmount,
  expectErrorBody,
  exact,
  num,
  postBind,
  postCreate,
  rawJson,
} from '../support/rest-kassa.js';

/**
 * Property tests over real HTTP: whatever arrives, the service answers with a
 * deliberate status (never 5xx) and, when it refuses, the error body (docs/api/rest.md#errors).
 * numRuns stays modest so the embedded project (≈10× slower) stays quick.
 */

// KASSA_PROPERTY_RUNS raises it for a longer hunt.
const RUNS = Number(process.env.KASSA_PROPERTY_RUNS ?? 60);
let kassa: TestKassa;
let merchant: TestMerchant;

beforeAll(async () => {
  kassa = await startTestKassa();
  merchant = await createMerchant(kassa.ctx);
});
afterAll(() => kassa?.close());

/** Never a 5xx; a refusal has the error body; success has the status the route promises. */
function expectDeliberate(response: Response, allowed: readonly number[]): void {
  expect(allowed, `status ${response.status}: ${JSON.stringify(response.body)}`).toContain(response.status);
  if (response.status >= 400) expectErrorBody(response, response.status);
}

/** What every 201 must satisfy, whatever the input was. */
function expectConsistentMerchantView(view: Record<string, any>): void {
  expect(Object.keys(view).sort()).toEqual([...PUBLIC_FIELDS, ...MERCHANT_ONLY_FIELDS].sort());
  expect(view.status).toBe('waiting_payment');
  expect(view.total_amount_fiat).toMatch(AMOUNT);
  const total = view.items.reduce(
    (sum: ReturnType<typeof exact>, item: { total_price: string }) => sum.plus(item.total_price),
    exact(0),
  );
  expect(total.toFixed(8)).toBe(view.total_amount_fiat);
  for (const item of view.items) {
    expect(exact(item.unit_price).times(item.quantity).toFixed(8)).toBe(item.total_price);
  }
  for (const option of view.crypto_options)
    expectCeilingAmount(option.amount, option.unit_price_fiat, view.total_amount_fiat, assetStep(option.ticker));
}

// Nasty values every property also meets, besides the random ones.
const nasty: unknown[] = [
  JSON.parse('{"__proto__": {"polluted": true}, "constructor": {"prototype": {"x": 1}}}'),
  { items: [{ name: 'x', quantity: 1, unit_price: 1, __proto__: null }] },
  '\u0000',
  [[[[[[[[[[[[]]]]]]]]]]]],
  { user: { id: 'a'.repeat(10_000), email: 'a@b.co' } },
];

/** Sets (or, for undefined, deletes) one path of a copy of a JSON value. */
function mutate(
  base: Record<string, unknown>,
  path: readonly (string | number)[],
  value: unknown,
): Record<string, unknown> {
  const copy = structuredClone(base);
  let target: any = copy;
  for (const key of path.slice(0, -1)) {
    if (target === null || typeof target !== 'object') return copy;
    target = target[key];
  }
  if (target === null || typeof target !== 'object') return copy;
  const last = path[path.length - 1]!;
  if (value === undefined) delete target[last];
  else target[last] = value;
  return copy;
}

const CREATE_PATHS: ReadonlyArray<readonly (string | number)[]> = [
  ['user'],
  ['user', 'id'],
  ['user', 'email'],
  ['user', 'username'],
  ['items'],
  ['items', 0],
  ['items', 0, 'name'],
  ['items', 0, 'quantity'],
  ['items', 0, 'unit_price'],
  ['items', 0, 'product_id'],
  ['items', 1, 'quantity'],
  ['currency'],
  ['metadata'],
  ['expires_in_minutes'],
  ['surprise'],
];

/** Values a mutation may put in: anything JSON, plus near-misses of valid values. */
const mutationValue = fc.oneof(
  fc.jsonValue({ maxDepth: 3 }),
  fc.constantFrom(
    undefined,
    0,
    -1,
    1.5,
    1e12,
    1e13,
    5,
    10080,
    10081,
    '',
    ' ',
    'USD',
    'usd',
    'EUR',
    'XYZ',
    'a@b.co',
    [],
    {},
    null,
  ),
  fc.integer({ min: -2, max: 1_000_002 }),
);

describe('POST /checkout-sessions (signed)', () => {
  it('any JSON body → 201 or 400, never 5xx', async () => {
    await fc.assert(
      fc.asyncProperty(fc.oneof(fc.jsonValue(), fc.constantFrom(...nasty)), async (body) => {
        const response = await postCreate(kassa, merchant, JSON.stringify(body));
        expectDeliberate(response, [201, 400]);
        if (response.status === 201) expectConsistentMerchantView(response.body);
      }),
      { numRuns: RUNS },
    );
  });

  it('any text at all → never 5xx', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.oneof(
          fc.string({ unit: 'binary' }),
          fc.anything().map((value) => JSON.stringify(value) ?? ''),
        ),
        async (text) => {
          const response = await postCreate(kassa, merchant, text);
          expectDeliberate(response, [201, 400]);
        },
      ),
      { numRuns: RUNS },
    );
  });

  it('a valid body with one part changed or removed → 201 or 400 (every problem named), never 5xx', async () => {
    await fc.assert(
      fc.asyncProperty(fc.constantFrom(...CREATE_PATHS), mutationValue, async (path, value) => {
        const body = mutate(checkoutRequest({ metadata: { order: 'p-1' }, expires_in_minutes: 30 }), path, value);
        const response = await postCreate(kassa, merchant, body);
        expectDeliberate(response, [201, 400]);
        if (response.status === 201) expectConsistentMerchantView(response.body);
        else expect(Array.isArray(response.body.message)).toBe(true);
      }),
      { numRuns: RUNS },
    );
  });

  it('random baskets of exact decimals → exact totals and amounts rounded up', async () => {
    const price = fc
      .tuple(
        fc.bigInt({ min: 0n, max: 999_999_999_999n }),
        fc.integer({ min: 0, max: 8 }),
        fc.bigInt({ min: 0n, max: 99_999_999n }),
      )
      .map(([whole, places, fraction]) =>
        places === 0 ? `${whole}` : `${whole}.${fraction.toString().padStart(8, '0').slice(0, places)}`,
      );
    const item = fc.record({ quantity: fc.integer({ min: 1, max: 1_000_000 }), unit_price: price });
    await fc.assert(
      fc.asyncProperty(
        fc.array(item, { minLength: 1, maxLength: 4 }),
        fc.constantFrom('USD', 'eur', 'JPY', 'GBP', 'chf'),
        async (items, currency) => {
          const body = rawJson(
            checkoutRequest({
              currency,
              items: items.map((i, n) => ({ name: `Item ${n}`, quantity: i.quantity, unit_price: num(i.unit_price) })),
            }),
          );
          const response = await postCreate(kassa, merchant, body);
          const total = items.reduce((sum, i) => sum.plus(exact(i.unit_price).times(i.quantity)), exact(0));
          if (total.isZero()) {
            expectErrorBody(response, 400, ['total amount must be greater than 0']);
            return;
          }
          expect(response.status, JSON.stringify(response.body)).toBe(201);
          expect(response.body.total_amount_fiat).toBe(total.toFixed(8));
          expect(response.body.fiat_currency).toBe(currency.toUpperCase());
          expect(response.body.items.map((i: { unit_price: string }) => i.unit_price)).toEqual(
            items.map((i) => exact(i.unit_price).toFixed(8)),
          );
          expectConsistentMerchantView(response.body);
        },
      ),
      { numRuns: RUNS },
    );
  });

  it('random signing headers → 401, never anything else', async () => {
    const headerText = fc.string({ unit: 'binary-ascii', maxLength: 80 }).map((s) => s.replace(/[^\x21-\x7e]/g, 'x'));
    await fc.assert(
      fc.asyncProperty(headerText, headerText, async (timestamp, signature) => {
        const response = await kassa.http
          .post('/checkout-sessions')
          .set('Content-Type', 'application/json')
          .set('X-Service-Key', merchant.apiKey)
          .set('X-Service-Timestamp', timestamp)
          .set('X-Service-Signature', signature)
          .send(JSON.stringify(checkoutRequest()));
        expectErrorBody(response, 401);
      }),
      { numRuns: RUNS },
    );
  });
});

describe('POST /checkout-sessions/:id/bind-tx', () => {
  let sessionId: string;
  beforeAll(async () => {
    sessionId = (await createSession(kassa, merchant, checkoutRequest())).session_id;
  });

  it('any JSON body → 200 or 400, never 5xx', async () => {
    await fc.assert(
      fc.asyncProperty(fc.oneof(fc.jsonValue(), fc.constantFrom(...nasty)), async (body) => {
        expectDeliberate(await postBind(kassa, sessionId, body === undefined ? '' : JSON.stringify(body)), [200, 400]);
      }),
      { numRuns: RUNS },
    );
  });

  it('a valid bind with one field changed or removed → 200 or 400 on a fresh session, never 5xx', async () => {
    const base = fc.record({
      tx_hash: fc.stringMatching(/^0x[0-9a-fA-F]{64}$/),
      chain_id: fc.constantFrom('1', '56', '31337', '0x1', '0x38', '0x7a69'),
      crypto_currency: fc.constantFrom('BTC', 'ETH', 'USDT', 'USDC', 'BNB', 'SOL'),
      payer_wallet_address: fc.stringMatching(/^0x[0-9a-fA-F]{40}$/),
    });
    const path = fc.constantFrom('tx_hash', 'chain_id', 'crypto_currency', 'payer_wallet_address', 'extra');
    await fc.assert(
      fc.asyncProperty(base, path, mutationValue, async (valid, field, value) => {
        const { session_id } = await createSession(kassa, merchant, checkoutRequest());
        const response = await postBind(kassa, session_id, mutate(valid, [field], value));
        expectDeliberate(response, [200, 400]);
        if (response.status === 200) {
          expect(response.body).toMatchObject({ session_id, idempotent: false, status: 'waiting_payment' });
          expect(response.body.total_amount_crypto).toMatch(AMOUNT);
        }
      }),
      { numRuns: Math.ceil(RUNS / 2) },
    );
  });
});

describe('GET /checkout-sessions/:id', () => {
  const UUID_ANY_CASE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

  it('any path id → 400 (not a UUID) or 404 (unknown UUID), never 5xx', async () => {
    const id = fc.oneof(
      fc.string({ unit: 'grapheme', minLength: 1, maxLength: 60 }),
      fc.uuid(),
      fc.uuid().map((u) => u.toUpperCase()),
    );
    await fc.assert(
      fc.asyncProperty(id, async (raw) => {
        fc.pre(raw !== '.' && raw !== '..'); // path segments a URL resolves away
        const response = await kassa.http.get(`/checkout-sessions/${encodeURIComponent(raw)}`);
        if (UUID_ANY_CASE.test(raw)) expectErrorBody(response, 404, `Checkout session ${raw.toLowerCase()} not found`);
        else expectErrorBody(response, 400, ['id must be a UUID']);
      }),
      { numRuns: RUNS },
    );
  });
});
