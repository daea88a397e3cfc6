import type { AssetTicker } from '../shared/assets.js';
import type { Decimal } from '../shared/money.js';

/**
 * What the domain asks of market data when it quotes a session. Implemented by the rate
 * book in src/rates (RateBook over the configured sources); the domain never fetches prices.
 */

/** A rate ready for quoting: the median over the sources that answered. */
export interface QuotedRate {
  readonly ticker: AssetTicker;
  /** Rounded to 8 fractional digits (half-up): the unit price shown to the payer. */
  readonly unitPriceFiat: Decimal;
  /** Names of the sources whose prices made the median, e.g. "coingecko+coinbase". */
  readonly source: string;
  /** The oldest `asOf` among the prices used. */
  readonly ratedAt: Date;
}

/** The rates the use-cases quote with (src/rates/rate-book.ts implements it). */
export interface RatesProvider {
  supportsCurrency(fiat: string): boolean;
  /**
   * Usable rates for the tickers in `fiat`. Tickers without a fresh price are
   * left out; the caller decides whether that is fatal.
   */
  /** The rates, in the order asked; the same array may be handed to several callers: read it, do not change it. */
  quoteRates(fiat: string, tickers: readonly AssetTicker[], now: Date): Promise<readonly QuotedRate[]>;
}
