import { Decimal as DecimalJs } from 'decimal.js';

/**
 * Kassa's own Decimal: enough precision for 100 items × 1,000,000 × 1e12 with
 * 8 fractional digits and the divisions of quoting, and never exponent notation.
 */
export const Decimal = DecimalJs.clone({
  precision: 80,
  rounding: DecimalJs.ROUND_HALF_UP,
  toExpNeg: -100,
  toExpPos: 100,
});
export type Decimal = InstanceType<typeof Decimal>;

export const WIRE_DECIMALS = 8;

/** Builds a Decimal from anything that prints as a decimal number (Prisma's own Decimal, strings, bigints). */
export function toDecimal(value: { toString(): string } | string | number | bigint): Decimal {
  return new Decimal(value.toString());
}

/** Rounds towards +∞ to 8 fractional digits: the payer never sends less than the fiat total. */
export function roundUpTo8(value: Decimal): Decimal {
  return value.toDecimalPlaces(WIRE_DECIMALS, Decimal.ROUND_CEIL);
}

/** The wire format: exactly 8 fractional digits, e.g. "12.50000000". */
export function formatAmount(value: Decimal): string {
  return value.toFixed(WIRE_DECIMALS);
}

/** Number of fractional digits as written (trailing zeros count as written). */
export function fractionalDigits(text: string): number {
  const lower = text.toLowerCase();
  if (lower.includes('e')) return new Decimal(text).decimalPlaces();
  const dot = text.indexOf('.');
  return dot === -1 ? 0 : text.length - dot - 1;
}

/**
 * On-chain base units for an amount: amount × 10^decimals, rounded up when the
 * token has fewer than 8 decimals (USDT/USDC with 6 on Ethereum).
 */
export function toBaseUnitsCeil(amount: Decimal, tokenDecimals: number): bigint {
  const scaled = amount.times(new Decimal(10).pow(tokenDecimals)).toDecimalPlaces(0, Decimal.ROUND_CEIL);
  return BigInt(scaled.toFixed(0));
}

/** Base units back to an amount of the asset (exact). */
export function fromBaseUnits(units: bigint, tokenDecimals: number): Decimal {
  return new Decimal(units.toString()).dividedBy(new Decimal(10).pow(tokenDecimals));
}
