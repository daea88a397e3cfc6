import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { StaticRatesSource, parseStaticRates } from '../../src/rates/static-source.js';

const repoRatesFile = fileURLToPath(new URL('../../config/rates.static.json', import.meta.url));
const fixture = (name: string) => fileURLToPath(new URL(`../fixtures/rates/${name}`, import.meta.url));
const T0 = new Date('2025-01-15T12:00:00Z');

describe('StaticRatesSource', () => {
  it('loads the repository rates file with exact values', async () => {
    const source = new StaticRatesSource({ file: repoRatesFile, clock: () => T0 });
    expect(source.name).toBe('static');
    expect(source.currencies()).toEqual(['USD', 'EUR', 'GBP', 'JPY', 'CHF']);
    const usd = await source.fetchRates('USD', ['BTC', 'ETH', 'USDT', 'USDC', 'BNB', 'SOL']);
    expect(usd.get('BTC')?.price.toString()).toBe('97250.12');
    expect(usd.get('USDT')?.price.toString()).toBe('1.0002');
    expect(usd.get('SOL')?.price.toString()).toBe('142.87');
    expect(usd.get('BTC')?.asOf).toEqual(T0);
    const jpy = await source.fetchRates('JPY', ['BTC']);
    expect(jpy.get('BTC')?.price.toFixed(0)).toBe('14990000');
  });

  it('answers only the tickers asked for, and nothing for an absent currency', async () => {
    const source = new StaticRatesSource({ file: repoRatesFile });
    expect([...(await source.fetchRates('EUR', ['ETH', 'SOL'])).keys()]).toEqual(['ETH', 'SOL']);
    expect((await source.fetchRates('SEK', ['BTC'])).size).toBe(0);
  });

  it('stamps asOf with the time of each fetch: static rates are always fresh', async () => {
    let now = T0;
    const source = new StaticRatesSource({ file: repoRatesFile, clock: () => now });
    expect((await source.fetchRates('USD', ['BTC'])).get('BTC')?.asOf).toEqual(T0);
    now = new Date(T0.getTime() + 3_600_000);
    expect((await source.fetchRates('USD', ['BTC'])).get('BTC')?.asOf).toEqual(now);
    const before = Date.now();
    const wallClock = await new StaticRatesSource({ file: repoRatesFile }).fetchRates('USD', ['BTC']);
    expect(wallClock.get('BTC')!.asOf.getTime()).toBeGreaterThanOrEqual(before);
  });

  it('supports exactly the currencies in the file, case-insensitively', () => {
    const source = new StaticRatesSource({ file: repoRatesFile });
    expect(source.supportsCurrency('USD')).toBe(true);
    expect(source.supportsCurrency('chf')).toBe(true);
    expect(source.supportsCurrency('SEK')).toBe(false);
  });

  it('lets KASSA_RATES_JSON override the file', async () => {
    const json = '{"rates":{"SEK":{"BTC":"1071234.5","ETH":"40123.25"}}}';
    const source = new StaticRatesSource({ file: repoRatesFile, json });
    expect(source.currencies()).toEqual(['SEK']);
    expect(source.supportsCurrency('USD')).toBe(false);
    expect((await source.fetchRates('SEK', ['BTC'])).get('BTC')?.price.toString()).toBe('1071234.5');
  });

  it('falls back to the file when the JSON override is null or blank', () => {
    expect(new StaticRatesSource({ file: repoRatesFile, json: null }).supportsCurrency('USD')).toBe(true);
    expect(new StaticRatesSource({ file: repoRatesFile, json: '  ' }).supportsCurrency('USD')).toBe(true);
  });

  it('reads JSON numbers exactly (never through a float) and upper-cases currency codes', async () => {
    const source = new StaticRatesSource({ file: fixture('static-numbers.json') });
    expect(source.currencies()).toEqual(['USD']);
    const rates = await source.fetchRates('USD', ['BTC', 'ETH']);
    expect(rates.get('BTC')?.price.toString()).toBe('97250.123456789012345678');
    expect(rates.get('ETH')?.price.toString()).toBe('3650.45');
  });

  it('rejects a bad file with a message naming the file and the entry', () => {
    const file = fixture('static-invalid-price.json');
    expect(() => new StaticRatesSource({ file })).toThrow(
      `Invalid static rates in file ${file}: rates.EUR.ETH must be a decimal price greater than 0, e.g. "97250.12" (got "about 3358")`,
    );
    expect(() => new StaticRatesSource({ file: fixture('static-unknown-asset.json') })).toThrow(
      /static-unknown-asset\.json: rates\.USD\.DOGE: unknown asset \(known: BTC, ETH, USDT, USDC, BNB, SOL\)/,
    );
  });

  it('rejects a missing file with a message naming it', () => {
    const file = fixture('does-not-exist.json');
    expect(() => new StaticRatesSource({ file })).toThrow(`Cannot read static rates file ${file}`);
  });

  it('names KASSA_RATES_JSON when the override is broken', () => {
    expect(() => new StaticRatesSource({ file: repoRatesFile, json: '{"rates": {"USD": ' })).toThrow(
      /^Invalid static rates in KASSA_RATES_JSON: not valid JSON/,
    );
  });

  it.each([
    ['{"rates":{"USD":{"BTC":"0"}}}', 'rates.USD.BTC must be a decimal price greater than 0'],
    ['{"rates":{"USD":{"BTC":-5}}}', '(got -5)'],
    ['{"rates":{"USD":{"BTC":"0x10"}}}', '(got "0x10")'],
    ['{"rates":{"USD":{"BTC":"Infinity"}}}', '(got "Infinity")'],
    ['{"rates":{"USD":{"BTC":null}}}', '(got null)'],
    ['{"rates":{"DOLLAR":{"BTC":"1"}}}', '"DOLLAR" is not a 3-letter ISO 4217 code'],
    ['{"rates":{"USD":{"BTC":"1"},"usd":{"BTC":"2"}}}', 'currency USD appears twice'],
    ['{"rates":{"USD":{}}}', 'rates.USD has no prices'],
    ['{"rates":{}}', '"rates" has no currencies'],
    ['{"USD":{"BTC":"1"}}', 'unexpected top-level key "USD"'],
    ['[1, 2]', 'expected an object'],
    ['{"rates":{"USD":{"BTC":"1","BTC":"2"}}}', 'not valid JSON (Duplicate key'],
  ])('rejects %s', (text, message) => {
    expect(() => parseStaticRates(text, 'test')).toThrow(message);
  });

  it('ignores "$"-prefixed top-level keys such as $comment', () => {
    const rates = parseStaticRates('{"$comment":"x","rates":{"USD":{"BTC":"1.5"}}}', 'test');
    expect(rates.get('USD')?.get('BTC')?.toString()).toBe('1.5');
  });
});
