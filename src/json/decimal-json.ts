import { parse } from 'lossless-json';
import { Decimal } from '../domain/shared/money.js';

// Plain decimal notation only: decimal.js would also accept "0x1f", "Infinity" and "NaN".
const DECIMAL_TEXT = /^[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?$/;

/**
 * Parses JSON with every number turned straight into an exact Decimal, never a JS float;
 * throws a SyntaxError on malformed JSON and on duplicate keys.
 */
export function parseJsonExact(text: string): unknown {
  return parse(text, null, (digits) => new Decimal(digits));
}

/**
 * Reads a number out of JSON parsed by {@link parseJsonExact}: a Decimal (a JSON
 * number) or a string in plain decimal notation. Anything else gives null.
 */
export function readDecimal(value: unknown): Decimal | null {
  if (value instanceof Decimal) return value;
  if (typeof value === 'string' && DECIMAL_TEXT.test(value.trim())) return new Decimal(value.trim());
  return null;
}

/** Whether a parsed JSON value is an object (not an array, not null). */
export function isJsonObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value) && !(value instanceof Decimal);
}

/** A short, readable rendering of a parsed JSON value for error messages. */
export function describeJsonValue(value: unknown): string {
  if (value instanceof Decimal) return value.toString();
  if (value === undefined) return 'nothing';
  const text = JSON.stringify(value, (_key, inner: unknown) => (inner instanceof Decimal ? inner.toString() : inner));
  return text.length > 60 ? `${text.slice(0, 57)}...` : text;
}
