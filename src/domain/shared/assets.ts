/** The crypto assets Kassa quotes, in the order of `crypto_options` (docs/api/rest.md#crypto-options). */
export const ASSET_TICKERS = ['BTC', 'ETH', 'USDT', 'USDC', 'BNB', 'SOL'] as const;
export type AssetTicker = (typeof ASSET_TICKERS)[number];

/** Common market-data ids (CoinGecko's), used as `crypto_options[].id`. */
export const ASSET_IDS: Record<AssetTicker, string> = {
  BTC: 'bitcoin',
  ETH: 'ethereum',
  USDT: 'tether',
  USDC: 'usd-coin',
  BNB: 'binancecoin',
  SOL: 'solana',
};

export function isAssetTicker(value: unknown): value is AssetTicker {
  return typeof value === 'string' && (ASSET_TICKERS as readonly string[]).includes(value);
}
