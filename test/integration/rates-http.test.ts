import { readFileSync } from 'node:fs';
import {
  createServer,
  type IncomingHttpHeaders,
  type IncomingMessage,
  type Server,
  type ServerResponse,
} from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { Decimal } from '../../src/domain/shared/money.js';
import { CoinbaseRatesSource } from '../../src/rates/coinbase-source.js';
import { CoinGeckoRatesSource, coingeckoApiKeyHeader } from '../../src/rates/coingecko-source.js';
import { RateBook } from '../../src/rates/rate-book.js';
import { StaticRatesSource } from '../../src/rates/static-source.js';

const ALL = ['BTC', 'ETH', 'USDT', 'USDC', 'BNB', 'SOL'] as const;
const fixture = (name: string) =>
  readFileSync(fileURLToPath(new URL(`../fixtures/rates/${name}`, import.meta.url)), 'utf8');
const COINGECKO_USD = fixture('coingecko-simple-price-usd.json');
const COINBASE_USD = fixture('coinbase-exchange-rates-usd.json');
/** The newest last_updated_at in the CoinGecko fixture. */
const RECORDED_AT = new Date(1733820960 * 1000);

type Handler = (request: IncomingMessage, response: ServerResponse) => void;

/** Answers like the real APIs, from recorded bodies. */
const recorded: Handler = (request, response) => {
  const path = new URL(request.url!, 'http://local').pathname;
  const body = path === '/api/v3/simple/price' ? COINGECKO_USD : path === '/v2/exchange-rates' ? COINBASE_USD : null;
  if (body === null) return reply(404, '{"error":"not found"}')(request, response);
  reply(200, body)(request, response);
};

const reply =
  (status: number, body: string, delayMs = 0): Handler =>
  (_request, response) => {
    const timer = setTimeout(
      () => response.writeHead(status, { 'content-type': 'application/json' }).end(body),
      delayMs,
    );
    response.on('close', () => clearTimeout(timer));
  };

let server: Server;
let origin: string;
let handler: Handler = recorded;
const received: Array<{ url: string; headers: IncomingHttpHeaders }> = [];

beforeAll(async () => {
  server = createServer((request, response) => {
    received.push({ url: request.url!, headers: request.headers });
    handler(request, response);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

beforeEach(() => {
  handler = recorded;
  received.length = 0;
});

const coingecko = (extra: { apiKey?: string; timeoutMs?: number } = {}) =>
  new CoinGeckoRatesSource({
    baseUrl: `${origin}/api/v3`,
    apiKey: extra.apiKey ?? null,
    timeoutMs: extra.timeoutMs ?? 2000,
  });
const coinbase = (extra: { timeoutMs?: number; clock?: () => Date } = {}) =>
  new CoinbaseRatesSource({ baseUrl: `${origin}/`, timeoutMs: extra.timeoutMs ?? 2000, clock: extra.clock });

describe('CoinGeckoRatesSource over HTTP', () => {
  it('asks /simple/price with the ids, currency, full precision and the demo key header', async () => {
    await coingecko({ apiKey: 'CG-test-key' }).fetchRates('USD', [...ALL]);
    expect(received).toHaveLength(1);
    expect(received[0]!.url).toBe(
      '/api/v3/simple/price?ids=bitcoin,ethereum,tether,usd-coin,binancecoin,solana&vs_currencies=usd' +
        '&include_last_updated_at=true&precision=full',
    );
    expect(received[0]!.headers['x-cg-demo-api-key']).toBe('CG-test-key');
    expect(received[0]!.headers.accept).toBe('application/json');
  });

  it('sends no key header without a key, and the pro header only for the pro host', async () => {
    await coingecko().fetchRates('USD', ['BTC']);
    expect(Object.keys(received[0]!.headers).filter((name) => name.startsWith('x-cg-'))).toEqual([]);
    expect(coingeckoApiKeyHeader('https://pro-api.coingecko.com/api/v3')).toBe('x-cg-pro-api-key');
    expect(coingeckoApiKeyHeader('https://api.coingecko.com/api/v3')).toBe('x-cg-demo-api-key');
  });

  it('parses prices exactly and dates them by last_updated_at', async () => {
    const rates = await coingecko().fetchRates('USD', [...ALL]);
    expect(rates.get('BTC')?.price.toString()).toBe('97250.123456789012'); // a float would give 97250.12345678901
    expect(rates.get('USDT')?.price.toString()).toBe('1.0001283900581923');
    expect(rates.get('BTC')?.asOf).toEqual(RECORDED_AT);
    expect(rates.get('SOL')?.asOf).toEqual(new Date(1733820000 * 1000));
    expect([...rates.keys()]).toEqual([...ALL]);
  });

  it('supports fiat currencies only', () => {
    const source = coingecko();
    expect(['USD', 'eur', 'JPY', 'GEL'].every((code) => source.supportsCurrency(code))).toBe(true);
    expect(['BTC', 'XAU', 'XYZ'].some((code) => source.supportsCurrency(code))).toBe(false);
  });

  it('throws on a 500, naming the status', async () => {
    handler = reply(500, '{"error":"Internal Server Error"}');
    await expect(coingecko().fetchRates('USD', ['BTC'])).rejects.toThrow(
      /^coingecko: HTTP 500 from http:\/\/127\.0\.0\.1/,
    );
  });

  it('throws on malformed JSON', async () => {
    handler = reply(200, '{"bitcoin":{"usd":97250.12,');
    await expect(coingecko().fetchRates('USD', ['BTC'])).rejects.toThrow(/^coingecko: malformed JSON/);
  });

  it('throws on a well-formed body of the wrong shape', async () => {
    handler = reply(200, '{"bitcoin":{"usd":"a lot","last_updated_at":1733820960}}');
    await expect(coingecko().fetchRates('USD', ['BTC'])).rejects.toThrow('bitcoin.usd is "a lot"');
    handler = reply(200, '{"status":{"error_code":429,"error_message":"You\'ve exceeded the Rate Limit."}}');
    await expect(coingecko().fetchRates('USD', ['BTC'])).rejects.toThrow(/error_code/);
  });

  it('gives up after timeoutMs', async () => {
    handler = reply(200, COINGECKO_USD, 3000);
    const started = Date.now();
    await expect(coingecko({ timeoutMs: 200 }).fetchRates('USD', ['BTC'])).rejects.toThrow(/within 200 ms/);
    expect(Date.now() - started).toBeLessThan(2000);
  });
});

describe('CoinbaseRatesSource over HTTP', () => {
  it('asks /v2/exchange-rates for the currency and inverts the rates exactly', async () => {
    const asOf = new Date('2024-12-10T08:56:30Z');
    const rates = await coinbase({ clock: () => asOf }).fetchRates('usd', [...ALL]);
    expect(received.map((request) => request.url)).toEqual(['/v2/exchange-rates?currency=USD']);
    // 1 / 0.00001028, to 80 significant digits: no float anywhere.
    expect(rates.get('BTC')?.price.toString()).toBe(
      '97276.264591439688715953307392996108949416342412451361867704280155642023346303502',
    );
    expect(rates.get('BTC')?.price.times('0.00001028').toDecimalPlaces(70).toString()).toBe('1');
    expect(rates.get('USDC')?.price.toString()).toBe('1');
    expect(rates.get('SOL')?.asOf).toEqual(asOf);
    expect(rates.size).toBe(6);
  });

  it('throws on a 500, malformed JSON, a different base currency, and a timeout', async () => {
    handler = reply(500, '{"errors":[{"id":"internal_server_error","message":"Internal server error"}]}');
    await expect(coinbase().fetchRates('USD', ['BTC'])).rejects.toThrow(/^coinbase: HTTP 500/);
    handler = reply(200, '<html>maintenance</html>');
    await expect(coinbase().fetchRates('USD', ['BTC'])).rejects.toThrow(/^coinbase: malformed JSON/);
    handler = reply(200, COINBASE_USD.replace('"currency":"USD"', '"currency":"EUR"'));
    await expect(coinbase().fetchRates('USD', ['BTC'])).rejects.toThrow('data.currency is "EUR", not "USD"');
    handler = reply(200, COINBASE_USD, 3000);
    await expect(coinbase({ timeoutMs: 200 }).fetchRates('USD', ['BTC'])).rejects.toThrow(
      /^coinbase: no answer .* within 200 ms/,
    );
  });
});

describe('RateBook over coingecko + coinbase + static', () => {
  it('quotes the median of the three, leaving out the stale CoinGecko SOL price', async () => {
    const fetchedAt = new Date(RECORDED_AT.getTime() + 20_000);
    const staticFile = fileURLToPath(new URL('../../config/rates.static.json', import.meta.url));
    const book = new RateBook(
      [
        coingecko(),
        coinbase({ clock: () => fetchedAt }),
        new StaticRatesSource({ file: staticFile, clock: () => fetchedAt }),
      ],
      { maxAgeSeconds: 120, refreshSeconds: 30 },
    );
    const now = new Date(RECORDED_AT.getTime() + 30_000);
    const quoted = await book.quoteRates('USD', ['BTC', 'USDT', 'SOL'], now);
    expect(quoted.map((rate) => ({ ...rate, unitPriceFiat: rate.unitPriceFiat.toFixed(8) }))).toEqual([
      // static 97250.12 < coingecko 97250.123456789012 < coinbase 97276.26…: CoinGecko's, half-up.
      { ticker: 'BTC', unitPriceFiat: '97250.12345679', source: 'coingecko+coinbase+static', ratedAt: RECORDED_AT },
      // coingecko 1.00012839… < coinbase 1/0.99987 = 1.000130016… < static 1.0002
      {
        ticker: 'USDT',
        unitPriceFiat: '1.00013002',
        source: 'coingecko+coinbase+static',
        ratedAt: new Date(1733820950_000),
      },
      // CoinGecko's SOL is 16 minutes old: of Coinbase's 1/0.0069987 = 142.8836… and the static 142.87, the lower.
      { ticker: 'SOL', unitPriceFiat: '142.87000000', source: 'coinbase+static', ratedAt: fetchedAt },
    ]);
    expect(new Decimal(1).dividedBy('0.0069987').greaterThan('142.87')).toBe(true);
    expect(received).toHaveLength(2);

    // Within refreshSeconds the book answers from its cache; CoinGecko failing later is skipped.
    await book.quoteRates('USD', ['ETH'], new Date(now.getTime() + 10_000));
    expect(received).toHaveLength(2);
    handler = (request, response) =>
      request.url!.startsWith('/api/v3/') ? reply(503, 'busy')(request, response) : recorded(request, response);
    const [btc] = await book.quoteRates('USD', ['BTC'], new Date(now.getTime() + 31_000));
    expect(received).toHaveLength(4);
    expect(btc?.source).toBe('coinbase+static');
    expect(btc?.unitPriceFiat.toFixed(8)).toBe('97250.12000000'); // the lower of coinbase 97276.26459143968… and static 97250.12
  });
});
