import { z } from 'zod';
import { Decimal } from '../domain/shared/money.js';
import { isJsonObject } from '../json/decimal-json.js';
import { DEFAULT_EXPIRES_IN_MINUTES, type CreateCheckoutInput } from '../domain/sessions/create-checkout-session.js';
import { problemsOf, required } from '../domain/shared/input-problems.js';

// The limits of docs/api/rest.md#create-rules-and-limits.
export const LIMITS = {
  items: 100,
  quantity: 1_000_000,
  unitPrice: '1000000000000',
  unitPriceDecimals: 8,
  metadataKeys: 50,
  metadataBytes: 8 * 1024,
  expiresInMinutes: { min: 5, max: 10_080 },
  text: 255,
  itemName: 500,
} as const;

const text = (max: number) =>
  z
    .string({ error: required('a string') })
    .trim()
    .min(1, { error: 'should not be empty' })
    .max(max, { error: `must be shorter than or equal to ${max} characters` });

/**
 * A JSON number, parsed exactly as Decimal. JSON Schema cannot see inside a refinement, so each number schema states
 * its bounds for OpenAPI with `.meta`, from the same values it checks.
 */
export const jsonNumber = z.custom<Decimal>((value) => value instanceof Decimal, { error: required('a number') });

const integer = (min: number, max: number) =>
  jsonNumber
    .refine((value) => value.isInteger(), { error: 'must be an integer number', abort: true })
    .refine((value) => value.gte(min), { error: `must not be less than ${min}`, abort: true })
    .refine((value) => value.lte(max), { error: `must not be greater than ${max}`, abort: true })
    .transform((value) => value.toNumber())
    .meta({ type: 'integer', minimum: min, maximum: max });

const unitPrice = jsonNumber
  .refine((value) => value.gte(0), { error: 'must not be less than 0', abort: true })
  .refine((value) => value.lte(LIMITS.unitPrice), {
    error: `must not be greater than ${LIMITS.unitPrice}`,
    abort: true,
  })
  .refine((value) => value.decimalPlaces() <= LIMITS.unitPriceDecimals, {
    error: 'must have at most 8 decimal places',
    abort: true,
  })
  .transform((value) => value.toFixed())
  .meta({
    type: 'number',
    minimum: 0,
    maximum: Number(LIMITS.unitPrice),
    description: `In the request currency; at most ${LIMITS.unitPriceDecimals} decimal places`,
  });

const metadata = z
  .custom<Record<string, unknown>>(isJsonObject, { error: 'must be an object' })
  .refine((value) => Object.keys(value).length <= LIMITS.metadataKeys, {
    error: `must not have more than ${LIMITS.metadataKeys} keys`,
    abort: true,
  })
  .transform((value, context) => {
    const problems: Array<{ path: string[]; message: string }> = [];
    const plain = plainJson(value, [], problems) as Record<string, unknown>;
    for (const problem of problems) context.addIssue({ code: 'custom', ...problem });
    return plain;
  })
  .refine((value) => Buffer.byteLength(JSON.stringify(value)) <= LIMITS.metadataBytes, {
    error: 'must not be larger than 8 KB as JSON',
  })
  .meta({
    type: 'object',
    maxProperties: LIMITS.metadataKeys,
    description: `Free-form JSON: at most ${LIMITS.metadataKeys} keys, ${LIMITS.metadataBytes / 1024} KB as JSON`,
  });

const plainObject = <T extends z.ZodType>(schema: T, what: string) =>
  z.custom<unknown>(isJsonObject, { error: required(what) }).pipe(schema);

const user = plainObject(
  z.strictObject({
    id: text(LIMITS.text),
    email: z
      .email({ error: required('an email') })
      .max(LIMITS.text, { error: `must be shorter than or equal to ${LIMITS.text} characters` }),
    username: text(LIMITS.text).optional(),
  }),
  'an object',
);

const item = plainObject(
  z.strictObject({
    name: text(LIMITS.itemName),
    quantity: integer(1, LIMITS.quantity),
    unit_price: unitPrice,
    product_id: text(LIMITS.text).optional(),
  }),
  'an object',
);

/** The fields of CreateCheckoutRequest (docs/api/rest.md#create-rules-and-limits); payment links share some of them. */
export const createCheckoutFields = {
  user,
  items: z
    .array(item, { error: required('an array') })
    .min(1, { error: 'must contain at least 1 element' })
    .max(LIMITS.items, { error: `must contain no more than ${LIMITS.items} elements` }),
  currency: z
    .string({ error: required('a string') })
    .regex(/^[A-Za-z]{3}$/, { error: 'must be a three-letter ISO 4217 code' })
    .describe('Quote currency (ISO 4217), e.g. "USD"; crypto amounts derive from the total in it'),
  metadata: metadata.optional(),
  expires_in_minutes: integer(LIMITS.expiresInMinutes.min, LIMITS.expiresInMinutes.max)
    .meta({ default: DEFAULT_EXPIRES_IN_MINUTES, description: 'Session lifetime in minutes' })
    .optional(),
};

/** CreateCheckoutRequest (docs/api/rest.md#create-rules-and-limits). */
export const createCheckoutSchema = plainObject(z.strictObject(createCheckoutFields), 'a JSON object').meta({
  title: 'CreateCheckoutRequest',
});

/** Validates a parsed create body; returns the domain input or every problem, named by field path. */
export function parseCreateCheckout(
  body: unknown,
): { ok: true; input: CreateCheckoutInput } | { ok: false; problems: string[] } {
  const result = createCheckoutSchema.safeParse(body);
  if (!result.success) return { ok: false, problems: problemsOf(result.error) };
  const { user, items, currency, metadata, expires_in_minutes } = result.data;
  return {
    ok: true,
    input: {
      user,
      items: items.map((i) => ({
        name: i.name,
        quantity: i.quantity,
        unitPrice: i.unit_price,
        productId: i.product_id,
      })),
      currency,
      metadata,
      expiresInMinutes: expires_in_minutes,
    },
  };
}

// Metadata is free-form and not money: its numbers are stored as JSON numbers
// (doubles). One a double cannot hold exactly is refused rather than changed.
function plainJson(value: unknown, path: string[], problems: Array<{ path: string[]; message: string }>): unknown {
  if (value instanceof Decimal) {
    const number = value.toNumber();
    if (!Number.isFinite(number) || !new Decimal(number).eq(value)) {
      problems.push({ path, message: `number ${value.toString()} cannot be stored exactly; send it as a string` });
    }
    return Object.is(number, -0) ? 0 : number;
  }
  if (Array.isArray(value)) return value.map((inner, index) => plainJson(inner, [...path, String(index)], problems));
  if (value && typeof value === 'object') {
    return Object.fromEntries(
      Object.entries(value).map(([key, inner]) => [key, plainJson(inner, [...path, key], problems)]),
    );
  }
  return value;
}
