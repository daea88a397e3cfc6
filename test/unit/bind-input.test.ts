import { describe, expect, it } from 'vitest';
import { bindInputProblems, type BindTransactionInput } from '../../src/domain/payments/bind-transaction.schema.js';

// docs/api/rest.md#bind-rules: the well-formedness of the bind fields.

const TX = `0x${'ab'.repeat(32)}`;
const PAYER = '0x3c44cdddb6a900fa2b585dd299e03d12fa4293bc';

const TX_PATTERN = 'tx_hash must match ^0x[a-fA-F0-9]{64}$ (0x and 64 hex characters)';
const CHAIN = 'chain_id must be an EIP-155 chain id, decimal ("56") or hex ("0x38")';
const TICKER = 'crypto_currency must be one of the following values: BTC, ETH, USDT, USDC, BNB, SOL';
const PAYER_PATTERN = 'payer_wallet_address must match ^0x[a-fA-F0-9]{40}$ (0x and 40 hex characters)';

const valid = (overrides: Record<string, unknown> = {}): BindTransactionInput => ({
  tx_hash: TX,
  chain_id: '56',
  ...overrides,
});

describe('bindInputProblems', () => {
  it.each<[string, BindTransactionInput]>([
    ['tx_hash and chain_id only', { tx_hash: TX, chain_id: '56' }],
    ['every field', { tx_hash: TX, chain_id: '56', crypto_currency: 'USDT', payer_wallet_address: PAYER }],
    [
      'upper-case hex in hash and address',
      { tx_hash: `0x${'AB'.repeat(32)}`, chain_id: '1', payer_wallet_address: PAYER.toUpperCase().replace('0X', '0x') },
    ],
    ['a hex chain id', { tx_hash: TX, chain_id: '0x38' }],
    ['null optional fields', { tx_hash: TX, chain_id: '56', crypto_currency: null, payer_wallet_address: null }],
    ...['BTC', 'ETH', 'USDT', 'USDC', 'BNB', 'SOL'].map((t): [string, BindTransactionInput] => [
      `ticker ${t}`,
      valid({ crypto_currency: t }),
    ]),
  ])('accepts %s', (_name, input) => {
    expect(bindInputProblems(input)).toEqual([]);
  });

  it.each<[string, BindTransactionInput, string[]]>([
    ['missing tx_hash', { chain_id: '56' }, ['tx_hash is required']],
    ['null tx_hash', { tx_hash: null, chain_id: '56' }, ['tx_hash is required']],
    ['numeric tx_hash', valid({ tx_hash: 12 }), ['tx_hash must be a string']],
    ['tx_hash without 0x', valid({ tx_hash: 'ab'.repeat(32) }), [TX_PATTERN]],
    ['tx_hash with 0X', valid({ tx_hash: `0X${'ab'.repeat(32)}` }), [TX_PATTERN]],
    ['tx_hash of 63 hex', valid({ tx_hash: `0x${'a'.repeat(63)}` }), [TX_PATTERN]],
    ['tx_hash of 65 hex', valid({ tx_hash: `0x${'a'.repeat(65)}` }), [TX_PATTERN]],
    ['tx_hash with a non-hex character', valid({ tx_hash: `0x${'a'.repeat(63)}g` }), [TX_PATTERN]],
    ['tx_hash with surrounding spaces', valid({ tx_hash: ` ${TX} ` }), [TX_PATTERN]],
    ['empty tx_hash', valid({ tx_hash: '' }), [TX_PATTERN]],
    ['missing chain_id', { tx_hash: TX }, ['chain_id is required']],
    ['numeric chain_id', valid({ chain_id: 56 }), ['chain_id must be a string']],
    ['chain_id "abc"', valid({ chain_id: 'abc' }), [CHAIN]],
    ['chain_id "0"', valid({ chain_id: '0' }), [CHAIN]],
    ['chain_id "-1"', valid({ chain_id: '-1' }), [CHAIN]],
    ['chain_id "056"', valid({ chain_id: '056' }), [CHAIN]],
    ['empty chain_id', valid({ chain_id: '' }), [CHAIN]],
    ['unknown ticker', valid({ crypto_currency: 'DOGE' }), [TICKER]],
    ['lower-case ticker', valid({ crypto_currency: 'usdt' }), [TICKER]],
    ['empty ticker', valid({ crypto_currency: '' }), [TICKER]],
    ['numeric ticker', valid({ crypto_currency: 1 }), ['crypto_currency must be a string']],
    ['payer without 0x', valid({ payer_wallet_address: PAYER.slice(2) }), [PAYER_PATTERN]],
    ['payer of 39 hex', valid({ payer_wallet_address: PAYER.slice(0, -1) }), [PAYER_PATTERN]],
    ['payer of 41 hex', valid({ payer_wallet_address: `${PAYER}0` }), [PAYER_PATTERN]],
    ['payer given a tx hash', valid({ payer_wallet_address: TX }), [PAYER_PATTERN]],
    [
      'payer as an object',
      valid({ payer_wallet_address: { address: PAYER } }),
      ['payer_wallet_address must be a string'],
    ],
  ])('reports %s', (_name, input, expected) => {
    expect(bindInputProblems(input)).toEqual(expected);
  });

  it('reports every problem at once, in field order', () => {
    expect(
      bindInputProblems({ tx_hash: '0x1', chain_id: 'x', crypto_currency: 'XRP', payer_wallet_address: '0x2' }),
    ).toEqual([TX_PATTERN, CHAIN, TICKER, PAYER_PATTERN]);
  });

  it('reports both required fields for an empty body', () => {
    expect(bindInputProblems({})).toEqual(['tx_hash is required', 'chain_id is required']);
  });

  it('mixes missing, mistyped and malformed fields', () => {
    expect(bindInputProblems({ chain_id: true, crypto_currency: ['BTC'], payer_wallet_address: 'nope' })).toEqual([
      'tx_hash is required',
      'chain_id must be a string',
      'crypto_currency must be a string',
      PAYER_PATTERN,
    ]);
  });
});
