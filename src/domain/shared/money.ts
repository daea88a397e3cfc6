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

/**
 * For a Decimal many sessions share (a quoted rate's price, a step): its plain text and its wire
 * format, made once and remembered for as long as the Decimal lives.
 */
export function sharedText(value: Decimal): { readonly plain: string; readonly wire: string } {
  let text = SHARED_TEXT.get(value);
  if (text === undefined) SHARED_TEXT.set(value, (text = { plain: value.toFixed(), wire: formatAmount(value) }));
  return text;
}

const SHARED_TEXT = new WeakMap<Decimal, { readonly plain: string; readonly wire: string }>();

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

/**
 * The smallest amount quoted for an asset: 10^-min(8, decimals) of its token with the fewest decimals among its
 * networks, so every quoted amount is one a wallet can send exactly on each.
 */
export function amountStep(tokenDecimals: readonly number[]): Decimal {
  return STEPS[stepPlaces(tokenDecimals)]!;
}

/** The fractional digits of {@link amountStep}: min(8, the fewest decimals among the tokens). */
export function stepPlaces(tokenDecimals: readonly number[]): number {
  return Math.max(0, Math.min(WIRE_DECIMALS, ...tokenDecimals));
}

// 10^-0 … 10^-8, made once (Decimals are immutable, so every quote may share them).
const STEPS: readonly Decimal[] = Array.from({ length: WIRE_DECIMALS + 1 }, (_, places) =>
  new Decimal(10).pow(-places),
);

/** Rounds towards +∞ to a whole number of `step`s: the payer never sends less than the fiat total. */
export function roundUpToStep(value: Decimal, step: Decimal): Decimal {
  return value.dividedBy(step).toDecimalPlaces(0, Decimal.ROUND_CEIL).times(step);
}

/**
 * `dividend / divisor` rounded towards +∞ to `places` digits, exactly, in integer arithmetic rather than an 80-digit
 * division (a create prices six assets: docs/benchmarks.md). The divisor must not be zero.
 */
export function ceilQuotient(dividend: Decimal, divisor: Decimal, places: number): Decimal {
  const a = scaledInteger(dividend);
  let b = SCALED.get(divisor);
  if (b === undefined) SCALED.set(divisor, (b = scaledInteger(divisor)));
  // dividend / divisor × 10^places = (a.units × 10^(b.places + places)) / (b.units × 10^a.places)
  const numerator = a.units * POWERS_OF_TEN(b.places + places);
  const denominator = b.units * POWERS_OF_TEN(a.places);
  let quotient = numerator / denominator;
  if (quotient * denominator !== numerator && numerator < 0n === denominator < 0n) quotient += 1n;
  return new Decimal(withPoint(quotient, places));
}

/** A Decimal as an integer count of 10^-places (its plain digits without the point). */
function scaledInteger(value: Decimal): { readonly units: bigint; readonly places: number } {
  const text = value.toFixed();
  const point = text.indexOf('.');
  return point < 0
    ? { units: BigInt(text), places: 0 }
    : { units: BigInt(text.slice(0, point) + text.slice(point + 1)), places: text.length - point - 1 };
}

// A rate's price (the divisor) is the same Decimal for every quote made while the rate book holds it.
const SCALED = new WeakMap<Decimal, { readonly units: bigint; readonly places: number }>();

const TENS: bigint[] = [1n];
function POWERS_OF_TEN(exponent: number): bigint {
  while (TENS.length <= exponent) TENS.push(TENS[TENS.length - 1]! * 10n);
  return TENS[exponent]!;
}

/** `units` × 10^-places as plain decimal text. */
function withPoint(units: bigint, places: number): string {
  if (places === 0) return units.toString();
  const negative = units < 0n;
  const digits = (negative ? -units : units).toString().padStart(places + 1, '0');
  return `${negative ? '-' : ''}${digits.slice(0, -places)}.${digits.slice(-places)}`;
}

/**
 * An amount in the token's own units rounded up to its decimals: all of them when 8 or fewer ("39.972006" for 6), else
 * at least 8 and more only where not zero.
 */
export function formatTokenAmount(value: Decimal, tokenDecimals: number): string {
  const exact = value.toFixed(tokenDecimals, Decimal.ROUND_CEIL);
  if (tokenDecimals <= WIRE_DECIMALS) return exact;
  const [whole, fraction = ''] = exact.split('.');
  return `${whole}.${fraction.replace(/0+$/, '').padEnd(WIRE_DECIMALS, '0')}`;
}
