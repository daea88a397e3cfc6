import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  amountStep,
  ceilQuotient,
  Decimal,
  roundUpToStep,
  WIRE_DECIMALS,
  formatAmount,
  fractionalDigits,
  fromBaseUnits,
  roundUpTo8,
  toBaseUnitsCeil,
  toDecimal,
} from '../../src/domain/shared/money.js';

const d = (value: string | number) => new Decimal(value);

/** A BigInt count of 1e-8 units rendered as a plain decimal string with 8 fractional digits (independent of Decimal). */
function scaled8(units: bigint): string {
  const negative = units < 0n;
  const digits = (negative ? -units : units).toString().padStart(9, '0');
  return `${negative ? '-' : ''}${digits.slice(0, -8)}.${digits.slice(-8)}`;
}

describe('roundUpTo8', () => {
  it.each([
    ['0.000000001', '0.00000001'],
    ['0.000000000000000001', '0.00000001'],
    ['1.000000001', '1.00000001'],
    ['1.000000009', '1.00000001'],
    ['0.123456789', '0.12345679'],
    ['0.123456781', '0.12345679'],
    ['2.99999999000000000001', '3.00000000'],
  ])('rounds %s up (towards +∞) to %s', (input, expected) => {
    expect(formatAmount(roundUpTo8(d(input)))).toBe(expected);
  });

  it.each(['0', '1', '12.5', '0.00000001', '0.12345678', '97250.12000000', '100000000000000000000.12345678'])(
    'leaves %s unchanged (already at most 8 fractional digits)',
    (input) => {
      const result = roundUpTo8(d(input));
      expect(result.eq(d(input))).toBe(true);
      expect(result.toString()).toBe(d(input).toString());
    },
  );

  it('keeps values around 1e20 exact to the last of 8 decimals', () => {
    expect(roundUpTo8(d('100000000000000000000.000000001')).toString()).toBe('100000000000000000000.00000001');
    expect(roundUpTo8(d('99999999999999999999.99999999')).toString()).toBe('99999999999999999999.99999999');
    expect(roundUpTo8(d('99999999999999999999.999999991')).toString()).toBe('100000000000000000000');
  });

  it('rounds a negative value towards +∞ too (ceiling, not away from zero)', () => {
    expect(roundUpTo8(d('-1.000000009')).toString()).toBe('-1');
    expect(roundUpTo8(d('-1.000000019')).toString()).toBe('-1.00000001');
  });

  it('quotes a real price: 105 USD at 97250.12 USD/BTC', () => {
    // 105 / 97250.12 = 0.00107969...; ceiling at 8 digits.
    expect(formatAmount(roundUpTo8(d('105').dividedBy(d('97250.12'))))).toBe('0.00107970');
    // 1 USD at 3 USD/unit = 0.333… → 0.33333334
    expect(formatAmount(roundUpTo8(d('1').dividedBy(d('3'))))).toBe('0.33333334');
  });
});

describe('formatAmount', () => {
  it.each([
    ['0', '0.00000000'],
    ['12.5', '12.50000000'],
    ['1', '1.00000000'],
    ['0.00000001', '0.00000001'],
    ['1e-8', '0.00000001'],
    ['1e-7', '0.00000010'],
    ['1.5e2', '150.00000000'],
    ['1e21', '1000000000000000000000.00000000'],
    ['1e40', '10000000000000000000000000000000000000000.00000000'],
    ['123456789012345678901234567890.12345678', '123456789012345678901234567890.12345678'],
  ])('formats %s as %s', (input, expected) => {
    expect(formatAmount(d(input))).toBe(expected);
  });

  it('never uses exponent notation and always shows exactly 8 fractional digits', () => {
    fc.assert(
      fc.property(fc.bigInt({ min: 0n, max: 10n ** 40n }), fc.integer({ min: 0, max: 8 }), (units, shift) => {
        const value = d(units.toString()).dividedBy(d(10).pow(shift));
        const text = formatAmount(value);
        expect(text).toMatch(/^\d+\.\d{8}$/);
        expect(d(text).eq(value)).toBe(true);
      }),
    );
  });

  it('formats a tiny value as zero without exponent notation', () => {
    expect(formatAmount(d('1e-30'))).toBe('0.00000000');
    expect(formatAmount(d('4e-9'))).toBe('0.00000000');
  });

  it('uses 8 wire decimals', () => {
    expect(WIRE_DECIMALS).toBe(8);
  });
});

describe('the Decimal clone', () => {
  it('prints tiny and huge values without exponent notation', () => {
    expect(d('1e-50').toString()).toBe(`0.${'0'.repeat(49)}1`);
    expect(d('1e50').toString()).toBe(`1${'0'.repeat(50)}`);
    expect(d('0.000000001').toString()).toBe('0.000000001');
    expect(d('1e21').toString()).toBe('1000000000000000000000');
  });

  it('sums 100 items × 1,000,000 × 999999999999.99999999 exactly (a JS number would give 1e20)', () => {
    const unit = d('999999999999.99999999');
    let total = new Decimal(0);
    for (let i = 0; i < 100; i += 1) total = total.plus(unit.times(1_000_000));
    expect(formatAmount(total)).toBe('99999999999999999999.00000000');
    expect(100 * 1_000_000 * 999999999999.99999999).toBe(1e20); // why the clone exists
  });

  it('sums the largest permitted items exactly at every scale (checked against BigInt arithmetic)', () => {
    const item = fc.record({
      quantity: fc.integer({ min: 1, max: 1_000_000 }),
      // unit price in 1e-8 units, up to 1e12
      priceUnits: fc.bigInt({ min: 0n, max: 10n ** 20n }),
    });
    fc.assert(
      fc.property(fc.array(item, { minLength: 1, maxLength: 100 }), (items) => {
        let total = new Decimal(0);
        let expected = 0n;
        for (const { quantity, priceUnits } of items) {
          total = total.plus(d(scaled8(priceUnits)).times(quantity));
          expected += priceUnits * BigInt(quantity);
        }
        expect(formatAmount(total)).toBe(scaled8(expected));
      }),
    );
  });

  it('holds the 100 × 1,000,000 × 1e12 maximum with 8 decimals', () => {
    const max = 100n * 1_000_000n * 10n ** 20n + 99_999_999n; // in 1e-8 units, with a non-zero tail
    const value = d(scaled8(max));
    expect(formatAmount(value)).toBe('100000000000000000000.99999999');
    expect(formatAmount(value.plus(d('0.00000001')))).toBe('100000000000000000001.00000000');
  });
});

describe('toDecimal', () => {
  it('builds a Decimal from strings, numbers, bigints and anything that prints as a number', () => {
    expect(toDecimal('12.50').toString()).toBe('12.5');
    expect(toDecimal(3).toString()).toBe('3');
    expect(toDecimal(12345678901234567890n).toString()).toBe('12345678901234567890');
    // Prisma bundles its own Decimal: only its toString() is trusted.
    const foreign = { toString: () => '97250.12345678' };
    const result = toDecimal(foreign);
    expect(result).toBeInstanceOf(Decimal);
    expect(result.toString()).toBe('97250.12345678');
  });
});

describe('fractionalDigits', () => {
  it.each([
    ['1', 0],
    ['1.5', 1],
    ['1.50', 2],
    ['0.00000001', 8],
    ['1e-9', 9],
    ['1.5E2', 0],
    ['1.25e1', 1],
  ])('%s has %i fractional digits', (text, expected) => {
    expect(fractionalDigits(text)).toBe(expected);
  });
});

describe('toBaseUnitsCeil', () => {
  it.each([
    ['1.0000001', 6, 1000001n],
    ['1.00000001', 6, 1000001n],
    ['1.000001', 6, 1000001n],
    ['0.00000001', 6, 1n],
    ['0', 6, 0n],
    ['12.5', 6, 12500000n],
    ['1.23456789', 8, 123456789n],
    ['1.23456789', 18, 1234567890000000000n],
    ['0.00000001', 18, 10000000000n],
    ['99999999999999999999.99999999', 18, 99999999999999999999999999990000000000n],
    ['3', 0, 3n],
    ['2.1', 0, 3n],
  ])('%s at %i decimals is %s base units', (amount, decimals, expected) => {
    expect(toBaseUnitsCeil(d(amount), decimals)).toBe(expected);
  });

  it('never asks for less than the amount, and is exact when the token has at least 8 decimals', () => {
    fc.assert(
      fc.property(fc.bigInt({ min: 0n, max: 10n ** 28n }), fc.integer({ min: 0, max: 18 }), (units, decimals) => {
        const amount = d(scaled8(units));
        const base = toBaseUnitsCeil(amount, decimals);
        const back = fromBaseUnits(base, decimals);
        expect(back.gte(amount)).toBe(true);
        expect(back.minus(amount).lt(d(10).pow(-decimals))).toBe(true);
        if (decimals >= 8) expect(back.eq(amount)).toBe(true);
      }),
    );
  });
});

describe('fromBaseUnits', () => {
  it.each([
    [1000001n, 6, '1.000001'],
    [1n, 18, '0.000000000000000001'],
    [1234567890000000000n, 18, '1.23456789'],
    [123456789n, 8, '1.23456789'],
    [0n, 18, '0'],
    [99999999999999999999999999990000000000n, 18, '99999999999999999999.99999999'],
    [7n, 0, '7'],
  ])('%s base units at %i decimals is %s', (units, decimals, expected) => {
    expect(fromBaseUnits(units, decimals).toString()).toBe(expected);
  });
});

describe('quote properties', () => {
  const eightDp = (max: bigint, min = 0n) => fc.bigInt({ min, max }).map((units) => d(scaled8(units)));

  it('roundUpTo8(x) >= x and roundUpTo8(x) < x + 1e-8', () => {
    const step = d('0.00000001');
    fc.assert(
      fc.property(
        fc.bigInt({ min: -(10n ** 30n), max: 10n ** 30n }),
        fc.integer({ min: 0, max: 20 }),
        (units, scale) => {
          const x = d(units.toString()).dividedBy(d(10).pow(scale));
          const rounded = roundUpTo8(x);
          expect(rounded.gte(x)).toBe(true);
          expect(rounded.lt(x.plus(step))).toBe(true);
          expect(rounded.decimalPlaces()).toBeLessThanOrEqual(8);
        },
      ),
    );
  });

  it('amount × unit price covers the fiat total: roundUpTo8(total / price) × price >= total', () => {
    fc.assert(
      fc.property(eightDp(10n ** 28n, 1n), eightDp(10n ** 20n, 1n), (total, price) => {
        const amount = roundUpTo8(total.dividedBy(price));
        expect(amount.times(price).gte(total)).toBe(true);
        // …and by less than one 1e-8 step of the asset.
        expect(amount.minus(d('0.00000001')).times(price).lt(total)).toBe(true);
      }),
    );
  });
});

describe('ceilQuotient (quoting without an 80-digit division)', () => {
  const scaled = (units: bigint, places: number) =>
    new Decimal(units.toString()).dividedBy(new Decimal(10).pow(places));

  it('gives what roundUpToStep(total / price, step) gives, for totals, prices and steps of every size', () => {
    fc.assert(
      fc.property(
        fc.bigInt({ min: 1n, max: 10n ** 22n }),
        fc.integer({ min: 0, max: 10 }),
        fc.bigInt({ min: 1n, max: 10n ** 18n }),
        fc.integer({ min: 0, max: 8 }),
        fc.integer({ min: 0, max: 8 }),
        (totalUnits, totalPlaces, priceUnits, pricePlaces, stepPlaces) => {
          const total = scaled(totalUnits, totalPlaces);
          const price = scaled(priceUnits, pricePlaces);
          const step = amountStep([stepPlaces]);
          const fast = ceilQuotient(total, price, stepPlaces);
          expect(fast.toFixed()).toBe(roundUpToStep(total.dividedBy(price), step).toFixed());
        },
      ),
      { numRuns: 2000 },
    );
  });

  it.each([
    ['105', '97250.12', 8, '0.0010797'],
    ['1', '3', 8, '0.33333334'],
    ['10894.55', '1.0002', 6, '10892.371526'],
    ['6', '3', 8, '2'],
    ['0.00000001', '100000', 8, '0.00000001'],
  ])('%s / %s rounded up to %i places is %s', (total, price, places, expected) => {
    expect(ceilQuotient(d(total), d(price), places).toString()).toBe(expected);
  });

  it('rounds towards +∞ for a negative quotient too', () => {
    expect(ceilQuotient(d('-1'), d('3'), 2).toString()).toBe('-0.33');
  });
});
