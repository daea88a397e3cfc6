import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { ASSET_IDS, ASSET_TICKERS } from '../../src/domain/shared/assets.js';
import { assetsOn, assetsOnAny, normaliseChainId, type Network } from '../../src/domain/shared/networks.js';

// docs/payment-rules.md#networks-and-wallets, with the registry as shipped in config/networks.json.

const registryFile = fileURLToPath(new URL('../../config/networks.json', import.meta.url));
const registry = (
  JSON.parse(readFileSync(registryFile, 'utf8')) as {
    networks: Array<Omit<Network, 'rpcUrls'> & { rpcUrls?: string[] }>;
  }
).networks.map((entry): Network => ({ ...entry, rpcUrls: entry.rpcUrls ?? [] }));
const network = (slug: string): Network => {
  const found = registry.find((n) => n.slug === slug);
  if (!found) throw new Error(`no network ${slug} in config/networks.json`);
  return found;
};

describe('the asset order', () => {
  it('is BTC, ETH, USDT, USDC, BNB, SOL with market-data ids', () => {
    expect(ASSET_TICKERS).toEqual(['BTC', 'ETH', 'USDT', 'USDC', 'BNB', 'SOL']);
    expect(ASSET_IDS).toEqual({
      BTC: 'bitcoin',
      ETH: 'ethereum',
      USDT: 'tether',
      USDC: 'usd-coin',
      BNB: 'binancecoin',
      SOL: 'solana',
    });
  });
});

describe('the shipped registry', () => {
  it('lists ethereum (1), bsc (56), polygon, base, arbitrum and local (31337)', () => {
    expect(registry.map((n) => [n.slug, n.chainId])).toEqual([
      ['ethereum', 1],
      ['bsc', 56],
      ['polygon', 137],
      ['base', 8453],
      ['arbitrum', 42161],
      ['local', 31337],
    ]);
  });

  it('has the default confirmations of docs/operations.md#configuration', () => {
    expect(Object.fromEntries(registry.map((n) => [n.slug, n.confirmations]))).toEqual({
      ethereum: 12,
      bsc: 15,
      polygon: 128,
      base: 20,
      arbitrum: 20,
      local: 1,
    });
  });

  it('gives USDT and USDC 6 decimals on Ethereum and 18 on BNB Smart Chain', () => {
    const decimals = (slug: string) => Object.fromEntries(network(slug).tokens.map((t) => [t.ticker, t.decimals]));
    expect(decimals('ethereum')).toEqual({ USDT: 6, USDC: 6 });
    expect(decimals('bsc')).toEqual({ BTC: 18, ETH: 18, USDT: 18, USDC: 18, SOL: 18 });
  });

  it('uses the canonical mainnet contracts for Ethereum and BNB Smart Chain', () => {
    const addresses = (slug: string) => Object.fromEntries(network(slug).tokens.map((t) => [t.ticker, t.address]));
    expect(addresses('ethereum')).toEqual({
      USDT: '0xdAC17F958D2ee523a2206206994597C13D831ec7',
      USDC: '0xA0b86991c6218b36c1d19D4a2e9Eb0cE3606eB48',
    });
    expect(addresses('bsc')).toEqual({
      BTC: '0x7130d2A12B9BCbFAe4f2634d864A1Ee1Ce3Ead9c',
      ETH: '0x2170Ed0880ac9A755fd29B2688956BD959F933F8',
      USDT: '0x55d398326f99059fF775485246999027B3197955',
      USDC: '0x8AC76a51cc950d9822D68b83fE1Ad97B32Cd580d',
      SOL: '0x570A5D26f7765Ecb712C0924E4De545B89fD43dF',
    });
  });
});

describe('assetsOn', () => {
  it.each([
    ['ethereum', ['ETH', 'USDT', 'USDC']],
    ['bsc', ['BTC', 'ETH', 'USDT', 'USDC', 'BNB', 'SOL']],
    ['polygon', ['ETH', 'USDT', 'USDC']],
    ['base', ['ETH', 'USDC']],
    ['arbitrum', ['ETH', 'USDT', 'USDC']],
    ['local', ['BTC', 'ETH', 'USDT', 'USDC', 'BNB', 'SOL']],
  ])('%s carries %j, in asset order', (slug, expected) => {
    expect(assetsOn(network(slug))).toEqual(expected);
  });

  it('orders by the asset order, not by the registry listing', () => {
    // bsc lists BTC, ETH, USDT, USDC, SOL as tokens and BNB as native; local lists USDT first.
    expect(network('local').tokens.map((t) => t.ticker)).toEqual(['USDT', 'USDC', 'BTC', 'BNB', 'SOL']);
    expect(assetsOn(network('local'))).toEqual(['BTC', 'ETH', 'USDT', 'USDC', 'BNB', 'SOL']);
  });

  it('is empty for a network with none of the assets', () => {
    expect(assetsOn({ ...network('polygon'), nativeAsset: null, tokens: [] })).toEqual([]);
  });

  it('counts the native asset once even when a token of the same ticker is listed', () => {
    const odd: Network = {
      ...network('base'),
      tokens: [{ ticker: 'ETH', address: `0x${'1'.repeat(40)}`, decimals: 18 }],
    };
    expect(assetsOn(odd)).toEqual(['ETH']);
  });
});

describe('assetsOnAny', () => {
  it.each([
    [['ethereum'], ['ETH', 'USDT', 'USDC']],
    [
      ['ethereum', 'bsc'],
      ['BTC', 'ETH', 'USDT', 'USDC', 'BNB', 'SOL'],
    ],
    [
      ['bsc', 'ethereum'],
      ['BTC', 'ETH', 'USDT', 'USDC', 'BNB', 'SOL'],
    ],
    [
      ['base', 'polygon'],
      ['ETH', 'USDT', 'USDC'],
    ],
    [['base'], ['ETH', 'USDC']],
    [['local'], ['BTC', 'ETH', 'USDT', 'USDC', 'BNB', 'SOL']],
    [[], []],
  ])('%j → %j (union, in asset order, no duplicates)', (slugs, expected) => {
    expect(assetsOnAny(slugs.map(network))).toEqual(expected);
  });
});

describe('normaliseChainId', () => {
  it.each([
    ['56', '56'],
    ['1', '1'],
    ['31337', '31337'],
    ['0x38', '56'],
    ['0x1', '1'],
    ['0x7a69', '31337'],
    ['0x7A69', '31337'],
    ['0x038', '56'],
    [' 56 ', '56'],
    ['9999999999999999999', '9999999999999999999'],
    ['0x7fffffffffffffff', '9223372036854775807'],
  ])('%j → %j', (input, expected) => {
    expect(normaliseChainId(input)).toBe(expected);
  });

  it.each([
    '0X38', // only the lower-case 0x prefix is accepted (docs/api/rest.md#bind-rules writes 0x38)
    '056',
    '0',
    '00',
    '0x0',
    '0x',
    '-1',
    '-56',
    '+56',
    '5.6',
    '56.0',
    '5e1',
    'abc',
    '0xg1',
    '',
    ' ',
    '56 56',
    '99999999999999999999', // 20 digits
    '0x10000000000000000', // 17 hex digits
    `${'9'.repeat(100)}`,
  ])('rejects %j', (input) => {
    expect(normaliseChainId(input)).toBeNull();
  });

  it('is idempotent: what it returns it accepts again unchanged', () => {
    // The stored decimal form must itself be a valid chain id, whichever form came in.
    for (const input of ['56', '0x38', '0x7fffffffffffffff', '0xffffffffffffffff', '9999999999999999999']) {
      const once = normaliseChainId(input);
      expect(once).not.toBeNull();
      expect(normaliseChainId(once!)).toBe(once);
    }
  });
});
