import { GraphQLError, GraphQLScalarType, Kind } from 'graphql';
import { Decimal, formatAmount } from '../domain/shared/money.js';

/** A plain decimal number as text: no exponent, no float ever. */
const DECIMAL_TEXT = /^-?\d{1,30}(\.\d{1,8})?$/;

/** A non-negative amount as formatAmount writes it: written again, it is the same text. */
const WIRE_TEXT = /^(0|[1-9]\d{0,29})\.\d{8}$/;

function toWireDecimal(value: unknown): string {
  if (value instanceof Decimal) return formatAmount(value);
  if (typeof value === 'string' && WIRE_TEXT.test(value)) return value;
  if (typeof value === 'string' && DECIMAL_TEXT.test(value)) return formatAmount(new Decimal(value));
  // A JS number here would be a bug (amounts are never floats); refuse rather than round.
  throw new GraphQLError(
    `Decimal cannot represent ${typeof value === 'string' ? JSON.stringify(value) : typeof value}`,
  );
}

/**
 * Money on the wire (docs/api/rest.md): a string with exactly 8 fractional digits,
 * e.g. "12.50000000". Inputs are accepted only as strings, never as floats.
 */
export const DecimalScalar = new GraphQLScalarType({
  name: 'Decimal',
  description: 'A decimal amount as a string with exactly 8 fractional digits, e.g. "12.50000000". Never a float.',
  serialize: toWireDecimal,
  parseValue(value) {
    if (typeof value !== 'string' || !DECIMAL_TEXT.test(value))
      throw new GraphQLError('Decimal must be a string such as "12.5" (at most 8 fractional digits)');
    return new Decimal(value);
  },
  parseLiteral(ast) {
    if (ast.kind !== Kind.STRING || !DECIMAL_TEXT.test(ast.value))
      throw new GraphQLError('Decimal must be a string such as "12.5" (at most 8 fractional digits)');
    return new Decimal(ast.value);
  },
});

const ISO_8601 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,3})?(Z|[+-]\d{2}:\d{2})$/;

function toDate(value: unknown): Date {
  const date =
    value instanceof Date ? value : typeof value === 'string' && ISO_8601.test(value) ? new Date(value) : null;
  if (!date || Number.isNaN(date.getTime()))
    throw new GraphQLError('DateTime must be an ISO 8601 date-time such as "2026-11-21T19:00:00.000Z"');
  return date;
}

/** A point in time as ISO 8601 in UTC with milliseconds, as the REST API writes it. */
export const DateTimeScalar = new GraphQLScalarType({
  name: 'DateTime',
  description: 'A date-time in ISO 8601, UTC, with milliseconds, e.g. "2026-11-21T19:00:00.000Z".',
  serialize: (value) => toDate(value).toISOString(),
  parseValue: toDate,
  parseLiteral(ast) {
    if (ast.kind !== Kind.STRING) throw new GraphQLError('DateTime must be a string');
    return toDate(ast.value);
  },
});
