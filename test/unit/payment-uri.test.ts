import { describe, expect, it } from 'vitest';
import { Decimal } from '../../src/domain/shared/money.js';
import { eip681Uri, paymentBaseUnits } from '../../src/domain/payments/payment-uri.js';

const WALLET = '0x70997970c51812dc3a010c7d01b50e0d17dc79c8';
const USDT_ETHEREUM = '0xdAC17F958D2ee523a2206206994597C13D831ec7';

describe('paymentBaseUnits', () => {
  it('scales an 8-decimal amount to 18 decimals exactly', () => {
    expect(paymentBaseUnits({ amount: new Decimal('0.03300001'), decimals: 18 })).toBe(33_000_010_000_000_000n);
    expect(paymentBaseUnits({ amount: new Decimal('1.00000000'), decimals: 18 })).toBe(10n ** 18n);
  });

  it('rounds UP to 6 decimals, so the payer never sends less than the quote', () => {
    expect(paymentBaseUnits({ amount: new Decimal('105.00000001'), decimals: 6 })).toBe(105_000_001n);
    expect(paymentBaseUnits({ amount: new Decimal('105.12345601'), decimals: 6 })).toBe(105_123_457n);
    expect(paymentBaseUnits({ amount: new Decimal('105.12345600'), decimals: 6 })).toBe(105_123_456n);
  });

  it('stays exact far beyond 2^53, where floats lose digits', () => {
    expect(paymentBaseUnits({ amount: new Decimal('123456789012.12345678'), decimals: 18 })).toBe(
      123_456_789_012_123_456_780_000_000_000n,
    );
  });
});

describe('eip681Uri', () => {
  it('pays a token with transfer(address, uint256) on its contract', () => {
    expect(
      eip681Uri({
        chainId: '1',
        walletAddress: WALLET,
        contractAddress: USDT_ETHEREUM,
        decimals: 6,
        amount: new Decimal('105.00000001'),
      }),
    ).toBe(`ethereum:${USDT_ETHEREUM}@1/transfer?address=${WALLET}&uint256=105000001`);
  });

  it('pays the native coin as value in wei to the wallet', () => {
    expect(
      eip681Uri({
        chainId: '56',
        walletAddress: WALLET,
        contractAddress: null,
        decimals: 18,
        amount: new Decimal('0.25000000'),
      }),
    ).toBe(`ethereum:${WALLET}@56?value=250000000000000000`);
  });

  it('writes base units as plain digits, never in exponent notation', () => {
    const uri = eip681Uri({
      chainId: '31337',
      walletAddress: WALLET,
      contractAddress: null,
      decimals: 18,
      amount: new Decimal('5000000.00000000'),
    });
    expect(uri).toBe(`ethereum:${WALLET}@31337?value=5000000000000000000000000`);
  });
});
