import { ASSET_TICKERS, type AssetTicker } from './assets.js';

/** EVM chains' own coins (ETH, BNB) have 18 decimals; the registry lists only tokens' decimals. */
export const NATIVE_COIN_DECIMALS = 18;

/** An ERC-20 token a network carries for one of Kassa's assets. */
export interface NetworkToken {
  readonly ticker: AssetTicker;
  /** Checksummed contract address as in the registry. */
  readonly address: string;
  readonly decimals: number;
}

/** One EVM network of the registry (config/networks.json). */
export interface Network {
  readonly slug: string;
  readonly name: string;
  /** EIP-155 chain id. */
  readonly chainId: number;
  /** The chain's own coin when it is one of Kassa's assets (ETH on Ethereum, BNB on BSC), else null. */
  readonly nativeAsset: AssetTicker | null;
  readonly confirmations: number;
  readonly tokens: readonly NetworkToken[];
  readonly rpcUrls: readonly string[];
}

/** The assets payable on a network, in Kassa's asset order. */
export function assetsOn(network: Network): AssetTicker[] {
  return ASSET_TICKERS.filter(
    (ticker) => network.nativeAsset === ticker || network.tokens.some((token) => token.ticker === ticker),
  );
}

/** Assets available on at least one of the networks, in Kassa's asset order. */
export function assetsOnAny(networks: readonly Network[]): AssetTicker[] {
  const available = new Set(networks.flatMap(assetsOn));
  return ASSET_TICKERS.filter((ticker) => available.has(ticker));
}

/**
 * Normalises a chain id given as decimal ("56") or hex ("0x38") to its decimal
 * string; null when it is neither.
 */
export function normaliseChainId(value: string): string | null {
  const text = value.trim();
  const isId = /^[1-9][0-9]{0,19}$/.test(text) || /^0x[0-9a-fA-F]{1,16}$/.test(text);
  if (isId && BigInt(text) > 0n && BigInt(text) <= MAX_CHAIN_ID) return BigInt(text).toString();
  return null;
}

// Chain ids are 64-bit unsigned in practice; the same bound applies to both spellings.
const MAX_CHAIN_ID = 2n ** 64n - 1n;
