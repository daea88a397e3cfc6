import { ASSET_IDS, type AssetTicker } from '../domain/shared/assets.js';
import type { Decimal } from '../domain/shared/money.js';
import { describeJsonValue, isJsonObject, readDecimal } from '../json/decimal-json.js';
import { COINGECKO_FIAT_CURRENCIES } from './fiat-currencies.js';
import { fetchJsonExact, RatesSourceError } from './http-json.js';
import type { RatesSource, SourceRate } from './rates-source.js';

export interface CoinGeckoOptions {
  /** API root without trailing slash, e.g. https://api.coingecko.com/api/v3 or https://pro-api.coingecko.com/api/v3. */
  readonly baseUrl: string;
  readonly apiKey?: string | null;
  readonly timeoutMs: number;
}

/** The header CoinGecko expects the API key in: the Pro API host has its own, every other host gets the demo one. */
export function coingeckoApiKeyHeader(baseUrl: string): string {
  return new URL(baseUrl).hostname === 'pro-api.coingecko.com' ? 'x-cg-pro-api-key' : 'x-cg-demo-api-key';
}

/**
 * Prices from CoinGecko's `/simple/price` (with `precision=full` and `last_updated_at`).
 * `asOf` is CoinGecko's own `last_updated_at`; prices are parsed exactly.
 */
export class CoinGeckoRatesSource implements RatesSource {
  readonly name = 'coingecko';
  private readonly baseUrl: string;

  constructor(private readonly options: CoinGeckoOptions) {
    this.baseUrl = options.baseUrl.replace(/\/+$/, '');
  }

  supportsCurrency(fiat: string): boolean {
    return COINGECKO_FIAT_CURRENCIES.has(fiat.toUpperCase());
  }

  /** The request URL for these tickers (ids in ticker order, currency lower case). */
  priceUrl(fiat: string, tickers: readonly AssetTicker[]): string {
    const ids = [...new Set(tickers.map((ticker) => ASSET_IDS[ticker]))];
    // Built by hand so the commas stay literal, as in CoinGecko's own examples.
    return (
      `${this.baseUrl}/simple/price?ids=${ids.join(',')}&vs_currencies=${fiat.toLowerCase()}` +
      '&include_last_updated_at=true&precision=full'
    );
  }

  async fetchRates(fiat: string, tickers: readonly AssetTicker[]): Promise<Map<AssetTicker, SourceRate>> {
    const result = new Map<AssetTicker, SourceRate>();
    if (!/^[A-Za-z]{3}$/.test(fiat)) throw new RatesSourceError(this.name, `not a currency code: "${fiat}"`);
    if (tickers.length === 0) return result;
    const url = this.priceUrl(fiat, tickers);
    const headers: Record<string, string> = {};
    if (this.options.apiKey) headers[coingeckoApiKeyHeader(this.baseUrl)] = this.options.apiKey;
    const fetchedAt = new Date();
    const body = await fetchJsonExact({ source: this.name, url, headers, timeoutMs: this.options.timeoutMs });

    const malformed = (problem: string): never => {
      throw new RatesSourceError(this.name, `unexpected answer from ${url}: ${problem}`);
    };
    if (!isJsonObject(body)) return malformed(`expected an object, got ${describeJsonValue(body)}`);
    // Rate limits and key problems sometimes arrive as a 200 with an error object.
    if ('error' in body || (isJsonObject(body.status) && 'error_code' in body.status)) {
      return malformed(describeJsonValue(body.error ?? body.status));
    }
    const vs = fiat.toLowerCase();
    for (const ticker of tickers) {
      const id = ASSET_IDS[ticker];
      const entry = body[id];
      // A coin CoinGecko does not know (or does not price in this currency) is simply absent.
      if (entry === undefined) continue;
      if (!isJsonObject(entry)) return malformed(`${id} is ${describeJsonValue(entry)}`);
      const raw = entry[vs];
      if (raw === undefined || raw === null) continue;
      const price = readDecimal(raw);
      if (!price || !price.isFinite() || !price.gt(0)) return malformed(`${id}.${vs} is ${describeJsonValue(raw)}`);
      const asOf = entry.last_updated_at === undefined ? fetchedAt : readEpochSeconds(entry.last_updated_at);
      if (!asOf) return malformed(`${id}.last_updated_at is ${describeJsonValue(entry.last_updated_at)}`);
      result.set(ticker, { price: price as Decimal, asOf });
    }
    return result;
  }
}

function readEpochSeconds(value: unknown): Date | null {
  const seconds = readDecimal(value);
  if (!seconds || !seconds.isInteger() || seconds.lte(0) || seconds.gt(1e11)) return null;
  return new Date(seconds.toNumber() * 1000);
}
