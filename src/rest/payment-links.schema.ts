import { z } from 'zod';
import { Decimal } from '../domain/shared/money.js';
import { IDENTITY_OPTIONS } from '../domain/payment-links/payment-link.js';
import type { CreatePaymentLinkInput } from '../domain/payment-links/payment-links.js';
import type { PaymentLinkPatch } from '../domain/payment-links/payment-link.js';
import type { LinkSessionInput } from '../domain/payment-links/create-session-from-link.js';
import { isJsonObject } from '../json/decimal-json.js';
import { problemsOf, required } from '../domain/shared/input-problems.js';
import { createCheckoutFields, jsonNumber, LIMITS } from './create-checkout.schema.js';

/** The REST bodies of /payment-links (docs/hosted-pages.md#payment-links); also the source of their OpenAPI schemas. */
// The create body's own rules for the fields a link shares with it (items, currency, lifetime, metadata).
const createShape = createCheckoutFields;

const name = z
  .string({ error: required('a string') })
  .trim()
  .min(1, { error: 'should not be empty' })
  .max(200, { error: 'must be shorter than or equal to 200 characters' });

const price = jsonNumber
  .refine((value) => value.gt(0), { error: 'must be greater than 0', abort: true })
  .refine((value) => value.lte(LIMITS.unitPrice), {
    error: `must not be greater than ${LIMITS.unitPrice}`,
    abort: true,
  })
  .refine((value) => value.decimalPlaces() <= LIMITS.unitPriceDecimals, {
    error: 'must have at most 8 decimal places',
    abort: true,
  })
  .transform((value) => value.toFixed())
  .meta({ type: 'number', exclusiveMinimum: 0, maximum: Number(LIMITS.unitPrice) });

const amountFiat = z
  .custom<unknown>(isJsonObject, { error: required('an object with min and max') })
  .pipe(z.strictObject({ min: price, max: price }))
  .refine((range) => new Decimal(range.max).gte(range.min), { error: 'max must not be less than min' });

const MAX_USES = 1_000_000_000;
const maxUses = z.union(
  [
    z.null(),
    jsonNumber
      .refine((value) => value.isInteger() && value.gte(1) && value.lte(MAX_USES), {
        error: `must be an integer from 1 to ${MAX_USES}, or null`,
      })
      .transform((value) => value.toNumber())
      .meta({ type: 'integer', minimum: 1, maximum: MAX_USES }),
  ],
  { error: `must be an integer from 1 to ${MAX_USES}, or null` },
);

const linkExpiry = z.union(
  [z.null(), z.iso.datetime({ offset: true, error: 'must be an ISO 8601 date-time with a time zone, or null' })],
  {
    error: 'must be an ISO 8601 date-time with a time zone, or null',
  },
);

const identityOptions = z
  .array(z.enum(IDENTITY_OPTIONS, { error: `must be one of ${IDENTITY_OPTIONS.join(', ')}` }), {
    error: required('an array'),
  })
  .max(IDENTITY_OPTIONS.length, { error: `must list at most ${IDENTITY_OPTIONS.length} options` })
  .refine((list) => new Set(list).size === list.length, { error: 'must not repeat an option' });

const bool = z.boolean({ error: required('a boolean') });

export const createPaymentLinkSchema = z
  .strictObject({
    name: name.describe('Shown to payers at the top of the link page; the line name of an open amount.'),
    items: createShape.items
      .optional()
      .describe(
        'A fixed basket, as in create (docs/api/rest.md#create-rules-and-limits). ' +
          'Exactly one of items and amount_fiat.',
      ),
    amount_fiat: amountFiat
      .optional()
      .describe('An open amount: the payer chooses from min to max (JSON numbers, > 0, at most 8 decimals).'),
    currency: createShape.currency,
    expires_in_minutes: createShape.expires_in_minutes.describe(
      'Lifetime of each session created from the link: 5 to 10080, default 60.',
    ),
    identity_options: identityOptions
      .optional()
      .describe('What the payer is asked for: any of email, telegram, username (at least one of them must be given).'),
    anonymous: bool.optional().describe('Ask for no identity. Default: true when identity_options is empty.'),
    max_uses: maxUses.optional().describe('How many sessions the link may create; null or omitted: no limit.'),
    active: bool.optional().describe('Default true.'),
    expires_at: linkExpiry.optional().describe('When the link stops taking payers; null or omitted: never.'),
    metadata: createShape.metadata.describe('Copied into every session of the link (merchant view, events).'),
  })
  .superRefine((body, context) => {
    if ((body.items === undefined) === (body.amount_fiat === undefined)) {
      context.addIssue({ code: 'custom', path: [], message: 'must have exactly one of items and amount_fiat' });
    }
    const options = body.identity_options ?? [];
    if (body.anonymous === true && options.length > 0)
      context.addIssue({ code: 'custom', path: ['identity_options'], message: 'must be empty when anonymous is true' });
    if (body.anonymous === false && options.length === 0) {
      context.addIssue({
        code: 'custom',
        path: ['identity_options'],
        message: 'must name at least one of email, telegram, username unless anonymous is true',
      });
    }
  })
  .meta({ title: 'CreatePaymentLinkRequest' });

export const updatePaymentLinkSchema = z
  .strictObject({
    name: name.optional(),
    active: bool.optional(),
    max_uses: maxUses.optional(),
    expires_at: linkExpiry.optional(),
    metadata: createShape.metadata,
  })
  .meta({ title: 'UpdatePaymentLinkRequest' });

const identityText = z
  .string({ error: required('a string') })
  .max(255, { error: 'must be shorter than or equal to 255 characters' });

/** What the payer sends to POST /payment-links/:id/sessions. */
export const linkSessionSchema = z
  .strictObject({
    email: identityText.optional().describe('When the link asks for email.'),
    telegram: identityText.optional().describe('When the link asks for telegram: @username or a numeric user id.'),
    username: identityText.optional().describe('When the link asks for username.'),
    amount: z
      .union([z.string(), jsonNumber.transform((value) => value.toFixed()).meta({ type: 'number' })], {
        error: 'must be a decimal number',
      })
      .optional()
      .describe(
        'Open-amount links only: the amount in the link currency, at most 8 decimals (a string or a JSON number).',
      ),
  })
  .meta({ title: 'LinkSessionRequest' });

type Parsed<T> = { ok: true; value: T } | { ok: false; problems: string[] };

function parse<S extends z.ZodType>(schema: S, body: unknown): Parsed<z.output<S>> {
  if (!isJsonObject(body)) return { ok: false, problems: ['body must be a JSON object'] };
  const result = schema.safeParse(body);
  return result.success ? { ok: true, value: result.data } : { ok: false, problems: problemsOf(result.error) };
}

export function parseCreatePaymentLink(body: unknown): Parsed<CreatePaymentLinkInput> {
  const parsed = parse(createPaymentLinkSchema, body);
  if (!parsed.ok) return parsed;
  const b = parsed.value;
  return {
    ok: true,
    value: {
      name: b.name,
      currency: b.currency,
      items: b.items?.map((i) => ({
        name: i.name,
        quantity: i.quantity,
        unitPrice: i.unit_price,
        productId: i.product_id,
      })),
      amountFiat: b.amount_fiat,
      expiresInMinutes: b.expires_in_minutes,
      identityOptions: b.identity_options,
      anonymous: b.anonymous,
      maxUses: b.max_uses,
      active: b.active,
      expiresAt: b.expires_at === undefined ? undefined : b.expires_at === null ? null : new Date(b.expires_at),
      metadata: b.metadata,
    },
  };
}

export function parseUpdatePaymentLink(body: unknown): Parsed<PaymentLinkPatch> {
  const parsed = parse(updatePaymentLinkSchema, body);
  if (!parsed.ok) return parsed;
  const b = parsed.value;
  return {
    ok: true,
    value: {
      ...(b.name !== undefined ? { name: b.name } : {}),
      ...(b.active !== undefined ? { active: b.active } : {}),
      ...(b.max_uses !== undefined ? { maxUses: b.max_uses } : {}),
      ...(b.expires_at !== undefined ? { expiresAt: b.expires_at === null ? null : new Date(b.expires_at) } : {}),
      ...(b.metadata !== undefined ? { metadata: b.metadata } : {}),
    },
  };
}

export function parseLinkSession(body: unknown): Parsed<LinkSessionInput> {
  return parse(linkSessionSchema, body);
}
