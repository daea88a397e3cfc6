import type { AssetTicker } from '../domain/shared/assets.js';
import { Decimal } from '../domain/shared/money.js';
import { describeJsonValue, isJsonObject, readDecimal } from '../json/decimal-json.js';
import { COINBASE_FIAT_CURRENCIES } from './fiat-currencies.js';
import { fetchJsonExact, RatesSourceError } from './http-json.js';
import type { RatesSource, SourceRate } from './rates-source.js';

export interface CoinbaseOptions {
  /** API root without trailing slash, e.g. https://api.coinbase.com. */
  readonly baseUrl: string;
  readonly timeoutMs: number;
  /** Source of `asOf` (defaults to the wall clock). */
  readonly clock?: () => Date;
}

/**
 * Prices from Coinbase's `/v2/exchange-rates?currency=XXX` (units of asset per unit of currency): 1 / rate in Decimal.
 * Coinbase gives no observation time, so `asOf` is the time of the request.
 */
export class CoinbaseRatesSource implements RatesSource {
  readonly name = 'coinbase';
  private readonly baseUrl: string;
  private readonly clock: () => Date;

  constructor(private readonly options: CoinbaseOptions) {
    this.baseUrl = options.baseUrl.replace(/\/+$/, '');
    this.clock = options.clock ?? (() => new Date());
  }

  supportsCurrency(fiat: string): boolean {
    return COINBASE_FIAT_CURRENCIES.has(fiat.toUpperCase());
  }

  ratesUrl(fiat: string): string {
    return `${this.baseUrl}/v2/exchange-rates?currency=${fiat.toUpperCase()}`;
  }

  async fetchRates(fiat: string, tickers: readonly AssetTicker[]): Promise<Map<AssetTicker, SourceRate>> {
    const result = new Map<AssetTicker, SourceRate>();
    if (!/^[A-Za-z]{3}$/.test(fiat)) throw new RatesSourceError(this.name, `not a currency code: "${fiat}"`);
    if (tickers.length === 0) return result;
    const currency = fiat.toUpperCase();
    const url = this.ratesUrl(currency);
    const asOf = this.clock();
    const body = await fetchJsonExact({ source: this.name, url, timeoutMs: this.options.timeoutMs });

    const malformed = (problem: string): never => {
      throw new RatesSourceError(this.name, `unexpected answer from ${url}: ${problem}`);
    };
    const data = isJsonObject(body) ? body.data : undefined;
    if (!isJsonObject(data)) return malformed(`expected {"data": {...}}, got ${describeJsonValue(body)}`);
    // A different base currency would turn every price into nonsense, so refuse it.
    if (data.currency !== currency)
      return malformed(`data.currency is ${describeJsonValue(data.currency)}, not "${currency}"`);
    const rates = data.rates;
    if (!isJsonObject(rates)) return malformed(`data.rates is ${describeJsonValue(rates)}`);
    for (const ticker of tickers) {
      const raw = rates[ticker];
      if (raw === undefined || raw === null) continue;
      const rate = readDecimal(raw);
      if (!rate || !rate.isFinite() || rate.lt(0))
        return malformed(`data.rates.${ticker} is ${describeJsonValue(raw)}`);
      // A zero rate means Coinbase has no market for the pair: no price, not an infinite one.
      if (rate.isZero()) continue;
      result.set(ticker, { price: new Decimal(1).dividedBy(rate), asOf });
    }
    return result;
  }
}
