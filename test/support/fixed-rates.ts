import { Decimal } from '../../src/domain/shared/money.js';
import type { RatesProvider } from '../../src/domain/rates/rates-ports.js';

/** The USD prices fixedRates starts with. */
export const FIXED_USD_PRICES: Readonly<Record<string, string>> = {
  BTC: '100000',
  ETH: '4000',
  USDT: '1',
  USDC: '1',
  BNB: '600',
  SOL: '150',
};

/**
 * A rates provider for USD that quotes `prices` as they are when asked, at any clock (the fixture rates go stale
 * an hour on): a test changes a price by assigning to `prices`.
 */
export function fixedRates(prices: Record<string, string> = { ...FIXED_USD_PRICES }): {
  rates: RatesProvider;
  prices: Record<string, string>;
} {
  const rates = {
    supportsCurrency: (fiat: string) => fiat === 'USD',
    quoteRates: async (_fiat: string, tickers: readonly string[], now: Date) =>
      tickers.map((ticker) => ({ ticker, unitPriceFiat: new Decimal(prices[ticker]!), source: 'test', ratedAt: now })),
  } as unknown as RatesProvider;
  return { rates, prices };
}
