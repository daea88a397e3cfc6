import type { AssetTicker } from '../domain/shared/assets.js';
import type { Decimal } from '../domain/shared/money.js';

/** The price of one unit of an asset in a fiat currency, as one source saw it. */
export interface SourceRate {
  readonly price: Decimal;
  /** When the source says the price was observed (or when it was fetched, if the source does not say). */
  readonly asOf: Date;
}

/** One market-data source (a file, CoinGecko, Coinbase, …). */
export interface RatesSource {
  /** Stable name recorded with every quote, e.g. "static", "coingecko". */
  readonly name: string;
  /** Whether the source can price assets in this upper-case ISO 4217 currency. */
  supportsCurrency(fiat: string): boolean;
  /** Prices for as many of the tickers as it has; throws when the source fails as a whole. */
  fetchRates(fiat: string, tickers: readonly AssetTicker[]): Promise<Map<AssetTicker, SourceRate>>;
}
