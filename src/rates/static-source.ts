import { readFileSync } from 'node:fs';
import { ASSET_TICKERS, isAssetTicker, type AssetTicker } from '../domain/shared/assets.js';
import type { Decimal } from '../domain/shared/money.js';
import { describeJsonValue, isJsonObject, parseJsonExact, readDecimal } from '../json/decimal-json.js';
import type { RatesSource, SourceRate } from './rates-source.js';

export interface StaticRatesOptions {
  /** Path of a rates file: `{"rates": {"USD": {"BTC": "97250.12", …}, …}}`. */
  readonly file?: string;
  /** The same document as text (KASSA_RATES_JSON); when given it wins over `file`. */
  readonly json?: string | null;
  /** Source of `asOf` (defaults to the wall clock). */
  readonly clock?: () => Date;
}

/** Prices per upper-case currency, then per ticker. */
export type StaticRates = ReadonlyMap<string, ReadonlyMap<AssetTicker, Decimal>>;

/**
 * Fixed rates from a file or a JSON string, the default in development and tests. Prices (strings or numbers) are read
 * exactly with lossless-json and must be > 0; top-level keys starting with "$" (e.g. "$comment") are ignored.
 */
export class StaticRatesSource implements RatesSource {
  readonly name = 'static';
  private readonly rates: StaticRates;
  private readonly clock: () => Date;

  /** Reads and validates the rates now; throws an Error naming the file (or KASSA_RATES_JSON) and the bad entry. */
  constructor(options: StaticRatesOptions) {
    const { text, origin } = readInput(options);
    this.rates = parseStaticRates(text, origin);
    this.clock = options.clock ?? (() => new Date());
  }

  /** The currencies present in the file, upper case, in file order. */
  currencies(): string[] {
    return [...this.rates.keys()];
  }

  supportsCurrency(fiat: string): boolean {
    return this.rates.has(fiat.toUpperCase());
  }

  async fetchRates(fiat: string, tickers: readonly AssetTicker[]): Promise<Map<AssetTicker, SourceRate>> {
    // Static rates are as fresh as the moment they are asked for.
    const asOf = this.clock();
    const prices = this.rates.get(fiat.toUpperCase());
    const result = new Map<AssetTicker, SourceRate>();
    if (!prices) return result;
    for (const ticker of tickers) {
      const price = prices.get(ticker);
      if (price) result.set(ticker, { price, asOf });
    }
    return result;
  }
}

/**
 * Parses and validates a static rates document. `origin` names where it came from
 * (e.g. "file /etc/kassa/rates.json") and starts every error message.
 */
export function parseStaticRates(text: string, origin: string): StaticRates {
  const fail = (problem: string): never => {
    throw new Error(`Invalid static rates in ${origin}: ${problem}`);
  };
  let document: unknown;
  try {
    document = parseJsonExact(text);
  } catch (error) {
    return fail(`not valid JSON (${(error as Error).message})`);
  }
  if (!isJsonObject(document)) return fail('expected an object like {"rates": {"USD": {"BTC": "97250.12"}}}');
  for (const key of Object.keys(document)) {
    if (key !== 'rates' && !key.startsWith('$')) fail(`unexpected top-level key "${key}" (expected "rates")`);
  }
  const rates = document.rates;
  if (!isJsonObject(rates)) return fail('"rates" must be an object of currencies, e.g. {"USD": {"BTC": "97250.12"}}');

  const result = new Map<string, Map<AssetTicker, Decimal>>();
  for (const [currencyKey, entries] of Object.entries(rates)) {
    const where = `rates.${currencyKey}`;
    if (!/^[A-Za-z]{3}$/.test(currencyKey)) fail(`${where}: "${currencyKey}" is not a 3-letter ISO 4217 code`);
    const currency = currencyKey.toUpperCase();
    if (result.has(currency)) fail(`${where}: currency ${currency} appears twice`);
    if (!isJsonObject(entries)) return fail(`${where} must be an object of prices, e.g. {"BTC": "97250.12"}`);
    const prices = new Map<AssetTicker, Decimal>();
    for (const [ticker, value] of Object.entries(entries)) {
      if (!isAssetTicker(ticker)) fail(`${where}.${ticker}: unknown asset (known: ${ASSET_TICKERS.join(', ')})`);
      const price = readDecimal(value);
      if (!price || !price.isFinite() || !price.gt(0)) {
        fail(
          `${where}.${ticker} must be a decimal price greater than 0, e.g. "97250.12" (got ` +
            `${describeJsonValue(value)})`,
        );
      }
      prices.set(ticker as AssetTicker, price as Decimal);
    }
    if (prices.size === 0) fail(`${where} has no prices`);
    result.set(currency, prices);
  }
  if (result.size === 0) fail('"rates" has no currencies');
  return result;
}

function readInput(options: StaticRatesOptions): { text: string; origin: string } {
  const json = options.json?.trim();
  if (json) return { text: json, origin: 'KASSA_RATES_JSON' };
  if (!options.file) throw new Error('Static rates need a file (KASSA_RATES_FILE) or JSON (KASSA_RATES_JSON)');
  try {
    return { text: readFileSync(options.file, 'utf8'), origin: `file ${options.file}` };
  } catch (error) {
    throw new Error(`Cannot read static rates file ${options.file}: ${(error as Error).message}`, { cause: error });
  }
}
