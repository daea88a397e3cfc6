import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import type { RatesConfig } from '../../src/config.js';
import type { AssetTicker } from '../../src/domain/shared/assets.js';
import { Decimal } from '../../src/domain/shared/money.js';
import { RateBook, createRateBook, median } from '../../src/rates/rate-book.js';
import type { RatesSource, SourceRate } from '../../src/rates/rates-source.js';

const T0 = new Date('2025-01-15T12:00:00Z');
const at = (seconds: number) => new Date(T0.getTime() + seconds * 1000);
const options = { maxAgeSeconds: 120, refreshSeconds: 30 };

interface FakeSource extends RatesSource {
  calls: number;
}

/** A source answering fixed prices; `answer` can be swapped to make it fail or wait. */
function fakeSource(
  name: string,
  prices: Partial<Record<AssetTicker, string>>,
  extra: { asOf?: Date; currencies?: string[]; answer?: () => Promise<void> } = {},
): FakeSource {
  const source: FakeSource = {
    name,
    calls: 0,
    supportsCurrency: (fiat) => (extra.currencies ?? ['USD']).includes(fiat),
    async fetchRates(_fiat, tickers) {
      source.calls += 1;
      await extra.answer?.();
      const result = new Map<AssetTicker, SourceRate>();
      for (const ticker of tickers) {
        const price = prices[ticker];
        if (price !== undefined) result.set(ticker, { price: new Decimal(price), asOf: extra.asOf ?? T0 });
      }
      return result;
    },
  };
  return source;
}

const failing = (name: string) => fakeSource(name, {}, { answer: () => Promise.reject(new Error(`${name} is down`)) });

function recordingLogger() {
  const warnings: Array<{ obj: Record<string, unknown>; msg: string }> = [];
  return {
    warnings,
    warn: (obj: object, msg: string) => void warnings.push({ obj: obj as Record<string, unknown>, msg }),
  };
}

const plain = (rates: Awaited<ReturnType<RateBook['quoteRates']>>) =>
  rates.map((rate) => ({ ...rate, unitPriceFiat: rate.unitPriceFiat.toString() }));

describe('RateBook quoting', () => {
  it('quotes the median of an odd number of sources, naming them in configured order', async () => {
    const book = new RateBook(
      [fakeSource('a', { BTC: '100' }), fakeSource('b', { BTC: '300' }), fakeSource('c', { BTC: '200' })],
      options,
    );
    expect(plain(await book.quoteRates('USD', ['BTC'], T0))).toEqual([
      { ticker: 'BTC', unitPriceFiat: '200', source: 'a+b+c', ratedAt: T0 },
    ]);
  });

  it('quotes the lower of the middle two for an even count: the payer never sends less than either of them asks', async () => {
    const book = new RateBook(
      [
        fakeSource('a', { ETH: '100' }),
        fakeSource('b', { ETH: '201' }),
        fakeSource('c', { ETH: '1' }),
        fakeSource('d', { ETH: '500' }),
      ],
      options,
    );
    const [eth] = await book.quoteRates('USD', ['ETH'], T0);
    expect(eth?.unitPriceFiat.toString()).toBe('100');
    expect(median([new Decimal('2'), new Decimal('1')]).toString()).toBe('1');
    expect(median([new Decimal('3'), new Decimal('1'), new Decimal('2')]).toString()).toBe('2');
    expect(() => median([])).toThrow();
  });

  it('refuses to quote an asset fewer than minSources price, and says so', async () => {
    const logger = recordingLogger();
    const book = new RateBook(
      [fakeSource('a', { BTC: '100', ETH: '10' }), fakeSource('b', { BTC: '100.5' }), failing('c')],
      { ...options, minSources: 2 },
      logger,
    );
    const quoted = await book.quoteRates('USD', ['BTC', 'ETH'], T0);
    expect(quoted.map((rate) => [rate.ticker, rate.unitPriceFiat.toString(), rate.source])).toEqual([
      ['BTC', '100', 'a+b'],
    ]);
    expect(logger.warnings.map((w) => w.msg)).toContain(
      'not quoting ETH in USD: 1 fresh price, 2 needed (KASSA_RATES_MIN_SOURCES)',
    );
  });

  it('refuses to quote an asset whose sources disagree by more than maxSpreadPercent, and says so', async () => {
    const logger = recordingLogger();
    const book = new RateBook(
      [fakeSource('a', { BTC: '100', ETH: '10' }), fakeSource('b', { BTC: '103', ETH: '10.1' })],
      { ...options, maxSpreadPercent: 2 },
      logger,
    );
    const quoted = await book.quoteRates('USD', ['BTC', 'ETH'], T0);
    expect(quoted.map((rate) => [rate.ticker, rate.unitPriceFiat.toString()])).toEqual([['ETH', '10']]);
    expect(logger.warnings.map((w) => w.msg)).toContain(
      'not quoting BTC in USD: its sources disagree by 3% (from 100 to 103), more than KASSA_RATES_MAX_SPREAD_PCT 2%',
    );
  });

  it('rounds half-up to 8 fractional digits and leaves out a price that rounds to 0', async () => {
    const book = new RateBook(
      [
        fakeSource('a', {
          BTC: '97250.123456789012',
          ETH: '1.00000001',
          USDT: '0.000000005',
          USDC: '0.0000000049',
          SOL: '2.000000004',
        }),
        fakeSource('b', { ETH: '1.00000002' }),
      ],
      options,
    );
    const quoted = await book.quoteRates('USD', ['BTC', 'ETH', 'USDT', 'USDC', 'SOL'], T0);
    expect(Object.fromEntries(quoted.map((rate) => [rate.ticker, rate.unitPriceFiat.toFixed()]))).toEqual({
      BTC: '97250.12345679',
      ETH: '1.00000001', // the lower of the two
      USDT: '0.00000001',
      SOL: '2',
    });
    expect(quoted.find((rate) => rate.ticker === 'ETH')?.source).toBe('a+b');
  });

  it('returns rates in the order asked for and leaves out tickers nobody prices', async () => {
    const book = new RateBook([fakeSource('a', { BTC: '1', SOL: '2' })], options);
    const quoted = await book.quoteRates('usd', ['SOL', 'BNB', 'BTC', 'SOL'], T0);
    expect(quoted.map((rate) => rate.ticker)).toEqual(['SOL', 'BTC']);
    expect(await book.quoteRates('USD', [], T0)).toEqual([]);
  });

  it('skips a throwing source, logs it, and quotes from the others', async () => {
    const logger = recordingLogger();
    const book = new RateBook(
      [fakeSource('a', { BTC: '100' }), failing('b'), fakeSource('c', { BTC: '110' })],
      options,
      logger,
    );
    expect(plain(await book.quoteRates('USD', ['BTC'], T0))).toEqual([
      { ticker: 'BTC', unitPriceFiat: '100', source: 'a+c', ratedAt: T0 },
    ]);
    expect(logger.warnings).toHaveLength(1);
    expect(logger.warnings[0]?.obj).toMatchObject({ source: 'b', currency: 'USD' });
    expect((logger.warnings[0]?.obj.err as Error).message).toBe('b is down');
  });

  it('returns nothing when every source fails', async () => {
    const book = new RateBook([failing('a'), failing('b')], options);
    expect(await book.quoteRates('USD', ['BTC', 'ETH'], T0)).toEqual([]);
  });

  it('leaves out prices older than maxAgeSeconds and dates the quote by the oldest price used', async () => {
    const book = new RateBook(
      [
        fakeSource('fresh', { BTC: '100' }, { asOf: at(-10) }),
        fakeSource('edge', { BTC: '102' }, { asOf: at(-120) }),
        fakeSource('stale', { BTC: '900', ETH: '5' }, { asOf: at(-121) }),
      ],
      options,
    );
    expect(plain(await book.quoteRates('USD', ['BTC', 'ETH'], T0))).toEqual([
      { ticker: 'BTC', unitPriceFiat: '100', source: 'fresh+edge', ratedAt: at(-120) },
    ]);
  });

  it('only asks sources that support the currency', async () => {
    const usdOnly = fakeSource('usd', { BTC: '100' });
    const eur = fakeSource('eur', { BTC: '90' }, { currencies: ['USD', 'EUR'] });
    const book = new RateBook([usdOnly, eur], options);
    expect(plain(await book.quoteRates('EUR', ['BTC'], T0))).toEqual([
      { ticker: 'BTC', unitPriceFiat: '90', source: 'eur', ratedAt: T0 },
    ]);
    expect(usdOnly.calls).toBe(0);
  });
});

describe('RateBook caching', () => {
  it('reuses an answer for refreshSeconds, per source and currency', async () => {
    const source = fakeSource('a', { BTC: '100' }, { currencies: ['USD', 'EUR'] });
    const book = new RateBook([source], options);
    await book.quoteRates('USD', ['BTC'], T0);
    await book.quoteRates('USD', ['ETH'], at(10));
    await book.quoteRates('USD', ['BTC'], at(29.999));
    expect(source.calls).toBe(1);
    await book.quoteRates('EUR', ['BTC'], at(29.999));
    expect(source.calls).toBe(2);
    await book.quoteRates('USD', ['BTC'], at(30));
    expect(source.calls).toBe(3);
  });

  it('does not cache a failure, and a failure does not evict the others', async () => {
    let down = true;
    const flaky = fakeSource(
      'flaky',
      { BTC: '200' },
      {
        answer: async () => {
          if (down) throw new Error('down');
        },
      },
    );
    const steady = fakeSource('steady', { BTC: '100' });
    const book = new RateBook([flaky, steady], options);
    expect((await book.quoteRates('USD', ['BTC'], T0))[0]?.source).toBe('steady');
    down = false;
    const [btc] = await book.quoteRates('USD', ['BTC'], at(1));
    expect(btc?.source).toBe('flaky+steady');
    expect(btc?.unitPriceFiat.toString()).toBe('100');
    expect([flaky.calls, steady.calls]).toEqual([2, 1]);
  });

  it('shares one in-flight fetch between concurrent callers', async () => {
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const slow = fakeSource('slow', { BTC: '100' }, { answer: () => gate });
    const book = new RateBook([slow], options);
    const pending = Array.from({ length: 5 }, () => book.quoteRates('USD', ['BTC'], T0));
    release();
    const results = await Promise.all(pending);
    expect(slow.calls).toBe(1);
    expect(results.map((quoted) => quoted[0]?.unitPriceFiat.toString())).toEqual(['100', '100', '100', '100', '100']);
    await book.quoteRates('USD', ['BTC'], at(31));
    expect(slow.calls).toBe(2);
  });

  it('logs a shared failure once, whatever the number of waiting callers', async () => {
    const logger = recordingLogger();
    const book = new RateBook([failing('a')], options, logger);
    await Promise.all(Array.from({ length: 4 }, () => book.quoteRates('USD', ['BTC'], T0)));
    expect(logger.warnings).toHaveLength(1);
  });
});

describe('RateBook quotes kept', () => {
  it('quotes again from the same answers with the same objects, until a price used grows too old', async () => {
    const book = new RateBook(
      [fakeSource('a', { BTC: '100', ETH: '10' }, { asOf: at(0) }), fakeSource('b', { BTC: '50' }, { asOf: at(-60) })],
      { maxAgeSeconds: 120, refreshSeconds: 1_000 },
    );
    const first = await book.quoteRates('USD', ['BTC', 'ETH'], at(1));
    expect(plain(first)[0]).toMatchObject({ unitPriceFiat: '50', source: 'a+b' });
    expect(await book.quoteRates('USD', ['BTC', 'ETH'], at(60))).toBe(first);
    // b's price (as of -60 s) is older than maxAge (120 s) after 60 s: the quote is made again without it.
    const later = await book.quoteRates('USD', ['BTC', 'ETH'], at(61));
    expect(later).not.toBe(first);
    expect(plain(later)[0]).toMatchObject({ unitPriceFiat: '100', source: 'a' });
  });

  it('a price that grew too old is left out at once, and a refreshed answer is used at once', async () => {
    const old = fakeSource('old', { BTC: '100' }, { asOf: at(-100) });
    const book = new RateBook([old, fakeSource('new', { BTC: '300' }, { asOf: at(0) })], {
      maxAgeSeconds: 120,
      refreshSeconds: 1_000,
    });
    expect(plain(await book.quoteRates('USD', ['BTC'], at(0)))[0]!.unitPriceFiat).toBe('100');
    // 21 s later the old source's price is 121 s old: only the new one is used.
    expect(plain(await book.quoteRates('USD', ['BTC'], at(21)))[0]).toMatchObject({
      unitPriceFiat: '300',
      source: 'new',
    });
  });

  it('a clock set back makes the quote again (a price too old then may be usable now)', async () => {
    const book = new RateBook([fakeSource('a', { BTC: '100' }, { asOf: at(0) })], options);
    expect(await book.quoteRates('USD', ['BTC'], at(200))).toEqual([]);
    expect(plain(await book.quoteRates('USD', ['BTC'], at(10)))[0]!.unitPriceFiat).toBe('100');
  });
});

describe('RateBook currencies and construction', () => {
  it('supports a currency when any source does', () => {
    const book = new RateBook(
      [fakeSource('a', {}, { currencies: ['USD'] }), fakeSource('b', {}, { currencies: ['EUR'] })],
      options,
    );
    expect(book.supportsCurrency('USD')).toBe(true);
    expect(book.supportsCurrency('eur')).toBe(true);
    expect(book.supportsCurrency('GBP')).toBe(false);
    expect(new RateBook([], options).supportsCurrency('USD')).toBe(false);
  });

  it('createRateBook builds the configured static source', async () => {
    const config: RatesConfig = {
      sources: ['static'],
      staticFile: fileURLToPath(new URL('../../config/rates.static.json', import.meta.url)),
      staticJson: null,
      coingeckoUrl: 'https://api.coingecko.com/api/v3',
      coingeckoApiKey: null,
      coinbaseUrl: 'https://api.coinbase.com',
      maxAgeSeconds: 120,
      refreshSeconds: 30,
      timeoutMs: 5000,
      minSources: 1,
      maxSpreadPercent: null,
    };
    const book = createRateBook(config);
    expect(book.supportsCurrency('GBP')).toBe(true);
    const [btc] = await book.quoteRates('USD', ['BTC'], new Date());
    expect(btc?.source).toBe('static');
    expect(btc?.unitPriceFiat.toString()).toBe('97250.12');
    expect(() => createRateBook({ ...config, staticJson: '{"rates":{"USD":{"BTC":"x"}}}' })).toThrow(
      /KASSA_RATES_JSON/,
    );
  });
});
