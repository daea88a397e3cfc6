import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { tokenAmountText } from '../../src/domain/payments/payment-instructions.js';
import { Decimal, formatAmount, formatTokenAmount } from '../../src/domain/shared/money.js';
import { DecimalScalar } from '../../src/graphql/scalars.js';

/**
 * The shortcuts a cold read takes (issue 37) write what the long way writes: a payment option's amount as
 * formatTokenAmount does, and an amount already in wire form as the Decimal scalar's parse-and-format would.
 */

/** Decimal texts of up to 30 integer digits and `places` fractional ones, zeros and tails of zeros included. */
const decimalText = (places: fc.Arbitrary<number>) =>
  fc
    .tuple(fc.bigInt({ min: 0n, max: 10n ** 30n - 1n }), places, fc.bigInt({ min: 0n, max: 10n ** 20n }))
    .map(([whole, dp, fraction]) =>
      dp === 0 ? `${whole}` : `${whole}.${(fraction % 10n ** BigInt(dp)).toString().padStart(dp, '0')}`,
    );

describe("a payment option's amount", () => {
  it('is formatTokenAmount of the amount, for every token precision', () => {
    fc.assert(
      fc.property(
        decimalText(fc.integer({ min: 0, max: 20 })),
        fc.constantFrom(0, 2, 6, 7, 8, 9, 12, 18, 24),
        (text, decimals) => {
          const amount = new Decimal(text);
          expect(tokenAmountText(amount, decimals)).toBe(formatTokenAmount(amount, decimals));
        },
      ),
      { numRuns: 5000 },
    );
  });

  it('is written the short way for a quote-sized amount on an 18-decimal token, and the long way otherwise', () => {
    expect(tokenAmountText(new Decimal('0.02876358'), 18)).toBe('0.02876358');
    expect(tokenAmountText(new Decimal('104.979005'), 18)).toBe('104.97900500');
    expect(tokenAmountText(new Decimal('104.979005'), 6)).toBe('104.979005');
    expect(tokenAmountText(new Decimal('0.000000000000000123'), 18)).toBe('0.000000000000000123');
    expect(tokenAmountText(new Decimal('1.000000001'), 8)).toBe('1.00000001');
  });
});

describe('the Decimal scalar', () => {
  it('answers an amount in wire form as parsing and formatting it would', () => {
    fc.assert(
      fc.property(decimalText(fc.integer({ min: 0, max: 8 })), fc.boolean(), (text, negative) => {
        const value = negative ? `-${text}` : text;
        expect(DecimalScalar.serialize(value)).toBe(formatAmount(new Decimal(value)));
        const wire = formatAmount(new Decimal(value));
        expect(DecimalScalar.serialize(wire)).toBe(formatAmount(new Decimal(wire)));
      }),
      { numRuns: 5000 },
    );
  });

  it('writes a negative zero and leading zeros as the long way does, and still refuses what is not a decimal', () => {
    expect(DecimalScalar.serialize('-0.00000000')).toBe('0.00000000');
    expect(DecimalScalar.serialize('00.50000000')).toBe('0.50000000');
    expect(() => DecimalScalar.serialize('01.00000000x')).toThrow();
    expect(() => DecimalScalar.serialize(1.5)).toThrow();
  });
});
