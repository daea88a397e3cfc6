import { readFileSync } from 'node:fs';
import { STATUS_CODES } from 'node:http';
import { Decimal as DecimalJs } from 'decimal.js';
import type { Response, Test } from 'supertest';
import { expect } from 'vitest';
import { REASON_CODE_LIST, type ReasonCode } from '../../src/domain/shared/reason-codes.js';
import { freshTimestamp, signed, type TestMerchant } from '../factories/merchant.js';
import { testDatabaseMode } from './databases.js';
import type { TestKassa } from './kassa.js';
export { MERCHANT_ONLY_FIELDS, PUBLIC_FIELDS } from './spec-fields.js';

/**
 * Shared helpers of the REST end-to-end suites (test/e2e/rest-*.test.ts).
 * Expected values are computed here independently of src/ (own Decimal, own
 * reading of config/rates.static.json), so a wrong rule in src/ cannot hide.
 */

export const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
/** The wire format of every amount: exactly 8 fractional digits. */
export const AMOUNT = /^\d+\.\d{8}$/;
export const ISO_DATE = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

export const ASSET_ORDER = ['BTC', 'ETH', 'USDT', 'USDC', 'BNB', 'SOL'] as const;
export const ASSET_IDS: Record<string, string> = {
  BTC: 'bitcoin',
  ETH: 'ethereum',
  USDT: 'tether',
  USDC: 'usd-coin',
  BNB: 'binancecoin',
  SOL: 'solana',
};

// An independent Decimal with far more precision than any amount here needs.
const Exact = DecimalJs.clone({ precision: 200, toExpNeg: -300, toExpPos: 300 });
type Exact = InstanceType<typeof Exact>;

const STATIC_RATES = (
  JSON.parse(readFileSync(new URL('../../config/rates.static.json', import.meta.url), 'utf8')) as {
    rates: Record<string, Record<string, string>>;
  }
).rates;

/** The fixture price of one unit of `ticker` in `currency`, as written in config/rates.static.json. */
export function fixtureRate(currency: string, ticker: string): string {
  const price = STATIC_RATES[currency.toUpperCase()]?.[ticker];
  if (price === undefined) throw new Error(`no fixture rate for ${ticker} in ${currency}`);
  return price;
}

/** Σ quantity × unit_price, exact, as the 8-decimal wire string. */
export function fiatTotal(items: ReadonlyArray<{ quantity: number | string; unit_price: number | string }>): string {
  return items
    .reduce((sum, item) => sum.plus(new Exact(String(item.unit_price)).times(String(item.quantity))), new Exact(0))
    .toFixed(8);
}

const REGISTRY = (
  JSON.parse(readFileSync(new URL('../../config/networks.json', import.meta.url), 'utf8')) as {
    networks: Array<{ slug: string; nativeAsset: string | null; tokens: Array<{ ticker: string; decimals: number }> }>;
  }
).networks;

/** The networks test/support/kassa.ts enables (TEST_ENV), on which test merchants get a wallet. */
export const TEST_NETWORKS = ['local', 'bsc', 'ethereum'] as const;
/** A quoted amount may be raised by this many steps to be unique on its wallet (docs/payment-rules.md, rule 4). */
export const MAX_UNIQUE_STEPS = 100;

/**
 * The smallest unit quoted for `ticker`: 10^-min(8, decimals) of the token with the fewest
 * decimals among `networks` (read from config/networks.json here, not from src/).
 */
export function assetStep(ticker: string, networks: readonly string[] = TEST_NETWORKS): Exact {
  const decimals = REGISTRY.filter((n) => networks.includes(n.slug)).flatMap((n) =>
    n.nativeAsset === ticker ? [18] : n.tokens.filter((t) => t.ticker === ticker).map((t) => t.decimals),
  );
  return new Exact(10).pow(-Math.min(8, ...decimals));
}

/**
 * The option a session quotes for `ticker` before it is made unique: unit price from the
 * fixture file, amount = total / unit price rounded UP to a whole number of the asset's step.
 */
export function expectedOption(
  totalFiat: string,
  currency: string,
  ticker: string,
  networks: readonly string[] = TEST_NETWORKS,
) {
  const unitPrice = new Exact(fixtureRate(currency, ticker));
  const step = assetStep(ticker, networks);
  const amount = new Exact(totalFiat)
    .dividedBy(unitPrice)
    .dividedBy(step)
    .toDecimalPlaces(0, Exact.ROUND_CEIL)
    .times(step);
  return { ticker, id: ASSET_IDS[ticker]!, unit_price_fiat: unitPrice.toFixed(8), amount: amount.toFixed(8) };
}

/** How many steps above `base` a quoted amount is; null when it is not base + k × step with 0 ≤ k < MAX_UNIQUE_STEPS. */
export function uniqueOffset(amount: string, base: string, step: Exact): number | null {
  const steps = new Exact(amount).minus(base).dividedBy(step);
  return steps.isInteger() && steps.gte(0) && steps.lt(MAX_UNIQUE_STEPS) ? steps.toNumber() : null;
}

/**
 * Checks quoted options against the rule: each is expectedOption() exactly, except that its
 * amount may be raised by a few steps to be unique among open sessions on the same wallet.
 */
export function expectQuotes(
  actual: ReadonlyArray<Record<string, string>>,
  totalFiat: string,
  currency: string,
  tickers: readonly string[],
  networks: readonly string[] = TEST_NETWORKS,
): void {
  const expected = tickers.map((ticker) => expectedOption(totalFiat, currency, ticker, networks));
  const comparable = actual.map((option, index) => {
    const want = expected[index];
    if (!want || option.ticker !== want.ticker) return option;
    return uniqueOffset(option.amount!, want.amount, assetStep(want.ticker, networks)) === null
      ? option
      : { ...option, amount: want.amount };
  });
  expect(comparable).toEqual(expected);
}

/**
 * Checks "rounded up" without dividing: the amount pays at least the total, is a whole number
 * of steps, and removing the steps added for uniqueness plus one more would not pay it.
 */
export function expectCeilingAmount(
  amount: string,
  unitPriceFiat: string,
  totalFiat: string,
  step: Exact = new Exact('0.00000001'),
): void {
  const value = new Exact(amount);
  const price = new Exact(unitPriceFiat);
  const total = new Exact(totalFiat);
  expect(value.times(price).gte(total), `${amount} × ${unitPriceFiat} ≥ ${totalFiat}`).toBe(true);
  expect(value.dividedBy(step).isInteger(), `${amount} is a whole number of ${step.toFixed()}`).toBe(true);
  const base = total.dividedBy(price).dividedBy(step).toDecimalPlaces(0, Exact.ROUND_CEIL).times(step);
  expect(
    base.minus(step).times(price).lt(total),
    `(${base.toFixed()} − ${step.toFixed()}) × ${unitPriceFiat} < ${totalFiat}`,
  ).toBe(true);
  expect(
    uniqueOffset(amount, base.toFixed(8), step),
    `${amount} is ${base.toFixed(8)} plus fewer than ${MAX_UNIQUE_STEPS} steps`,
  ).not.toBeNull();
}

export function exact(value: string | number): Exact {
  return new Exact(String(value));
}

/**
 * JSON text with numbers written exactly as given: every string value "#n:<digits>"
 * becomes the bare number <digits>, so prices never pass through a JS float.
 */
export function rawJson(value: unknown): string {
  return JSON.stringify(value).replace(/"#n:([^"]+)"/g, '$1');
}

/** A JSON number written literally (see rawJson). */
export const num = (digits: string) => `#n:${digits}`;

/** POST /checkout-sessions, signed by the merchant; an object body is sent as JSON text. */
export function postCreate(
  kassa: TestKassa,
  merchant: Pick<TestMerchant, 'apiKey' | 'apiSecret'>,
  body: unknown,
  options: { idempotencyKey?: string; timestamp?: number; contentType?: string } = {},
): Test {
  const request = kassa.http.post('/checkout-sessions');
  if (options.idempotencyKey !== undefined) request.set('Idempotency-Key', options.idempotencyKey);
  const text = typeof body === 'string' ? body : JSON.stringify(body);
  return signed(request, merchant, text, {
    timestamp: options.timestamp ?? freshTimestamp(kassa.ctx.clock().getTime()),
    contentType: options.contentType,
  });
}

/** Creates a session and insists on 201; returns the merchant view. */
export async function createSession(
  kassa: TestKassa,
  merchant: Pick<TestMerchant, 'apiKey' | 'apiSecret'>,
  body: unknown,
  options: { idempotencyKey?: string } = {},
): Promise<Record<string, any>> {
  const response = await postCreate(kassa, merchant, body, options);
  if (response.status !== 201) throw new Error(`create answered ${response.status}: ${JSON.stringify(response.body)}`);
  return response.body as Record<string, any>;
}

/** POST /checkout-sessions/:id/bind-tx with a JSON body (or raw text). */
export function postBind(kassa: TestKassa, sessionId: string, body: unknown): Test {
  const text = typeof body === 'string' ? body : JSON.stringify(body);
  return kassa.http.post(`/checkout-sessions/${sessionId}/bind-tx`).set('Content-Type', 'application/json').send(text);
}

/** Fragments that would betray internals (stack frames, source paths, driver errors). */
const INTERNALS =
  /\bat [\w.<>]+ \(|node_modules|\.[cm]?[jt]s:\d+|Prisma|"stack"|ECONN|\bSELECT |\bINSERT |\bUPDATE |\bP\d{4}\b/;

/**
 * Asserts the error body (docs/api/rest.md#errors): exactly statusCode, message, error and a documented code (none
 * on answers made before routing), JSON, the given status, its standard name, and nothing internal.
 */
export function expectErrorBody(response: Response, status: number, message?: string | string[] | RegExp): void {
  expect(response.status, JSON.stringify(response.body)).toBe(status);
  expect(response.headers['content-type']).toMatch(/^application\/json/);
  const keys = Object.keys(response.body).sort();
  expect(keys.filter((key) => key !== 'code')).toEqual(['error', 'message', 'statusCode']);
  if (keys.includes('code')) expect(REASON_CODE_LIST).toContain(response.body.code);
  expect(response.body.statusCode).toBe(status);
  expect(response.body.error).toBe(STATUS_CODES[status]);
  const text = response.body.message;
  expect(
    typeof text === 'string' ||
      (Array.isArray(text) && text.length > 0 && text.every((m: unknown) => typeof m === 'string')),
  ).toBe(true);
  expect(JSON.stringify(response.body)).not.toMatch(INTERNALS);
  if (message instanceof RegExp) {
    expect(Array.isArray(text) ? text.join('\n') : text).toMatch(message);
  } else if (message !== undefined) {
    expect(text).toEqual(message);
  }
}

/** Asserts the error body (expectErrorBody) and its stable reason code (docs/api/rest.md#error-codes). */
export function expectErrorCode(
  response: Response,
  status: number,
  code: ReasonCode,
  message?: string | string[] | RegExp,
): void {
  expectErrorBody(response, status, message);
  expect(response.body.code, JSON.stringify(response.body)).toBe(code);
}

/** A clock tests can stop at an exact instant; it runs with the wall clock otherwise. */
export interface ControllableClock {
  readonly clock: () => Date;
  /** Stops time at `at` until `release`. */
  freeze(at: Date | number): void;
  release(): void;
}

export function controllableClock(): ControllableClock {
  let frozen: Date | null = null;
  return {
    clock: () => (frozen ? new Date(frozen.getTime()) : new Date()),
    freeze(at) {
      frozen = new Date(typeof at === 'number' ? at : at.getTime());
    },
    release() {
      frozen = null;
    },
  };
}

export const isEmbedded = testDatabaseMode() === 'embedded';

/** Row counts of everything a create writes, for "nothing was written" checks. */
export async function writtenRows(kassa: TestKassa, organisationId?: string) {
  const prisma = kassa.runtime.db.prisma;
  const bySession = organisationId ? { session: { organisationId } } : {};
  const byOrg = organisationId ? { organisationId } : {};
  // One after another: concurrent queries are unsafe on the embedded database (pglite-socket, see test/e2e/rest-concurrency.test.ts).
  return {
    sessions: await prisma.checkoutSession.count({ where: byOrg }),
    items: await prisma.checkoutSessionItem.count({ where: bySession }),
    quotes: await prisma.checkoutSessionQuote.count({ where: bySession }),
    networks: await prisma.checkoutSessionNetwork.count({ where: bySession }),
    history: await prisma.checkoutSessionStatusChange.count({ where: bySession }),
    outbox: await prisma.outboxEvent.count({ where: byOrg }),
    idempotencyKeys: await prisma.idempotencyKey.count({ where: byOrg }),
  };
}
