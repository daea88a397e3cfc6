import { z } from 'zod';
import { ASSET_TICKERS } from '../domain/shared/assets.js';
import { Decimal } from '../domain/shared/money.js';
import { REFUND_BASES, REFUND_KINDS } from '../domain/refunds/refund.js';
import {
  MAX_CLAIM_MINUTES,
  MIN_CLAIM_MINUTES,
  NOTE_MAX_LENGTH,
  type CreateRefundInput,
} from '../domain/refunds/create-refund.js';
import { evmAddressFormatProblem } from '../domain/refunds/refund-address.js';
import { isJsonObject } from '../json/decimal-json.js';
import { problemsOf, required } from '../domain/shared/input-problems.js';
import { jsonNumber } from './create-checkout.schema.js';

/** The REST body of POST /checkout-sessions/:id/refunds (docs/api/refunds.md#create); also its OpenAPI schema. */

/** A positive decimal given as a string or a JSON number, at most 8 places (the asset's own limit comes later). */
const positiveDecimal = z
  .union(
    [
      z.string().regex(/^\d{1,30}(\.\d{1,18})?$/, { error: 'must be a decimal number such as "0.5"' }),
      jsonNumber.transform((value) => value.toFixed()).meta({ type: 'number' }),
    ],
    { error: 'must be a decimal number (a string or a JSON number)' },
  )
  .transform((text) => new Decimal(text))
  .refine((value) => value.gt(0), { error: 'must be greater than 0', abort: true })
  .refine((value) => value.decimalPlaces() <= 8, { error: 'must have at most 8 decimal places', abort: true });

const claimMinutes = jsonNumber
  .refine((value) => value.isInteger(), { error: 'must be an integer number', abort: true })
  .refine((value) => value.gte(MIN_CLAIM_MINUTES), { error: `must not be less than ${MIN_CLAIM_MINUTES}`, abort: true })
  .refine((value) => value.lte(MAX_CLAIM_MINUTES), {
    error: `must not be greater than ${MAX_CLAIM_MINUTES}`,
    abort: true,
  })
  .transform((value) => value.toNumber())
  .meta({ type: 'integer', minimum: MIN_CLAIM_MINUTES, maximum: MAX_CLAIM_MINUTES });

const address = z
  .string({ error: required('a string') })
  .superRefine((value, context) => {
    const problem = evmAddressFormatProblem(value, 'x');
    if (problem) context.addIssue({ code: 'custom', message: problem.replace(/^x /, '') });
  })
  .meta({ type: 'string', pattern: '^0x[a-fA-F0-9]{40}$' });

export const createRefundSchema = z
  .strictObject({
    kind: z
      .enum(REFUND_KINDS, { error: `must be one of ${REFUND_KINDS.join(', ')}` })
      .describe('full: all received; excess: the overpaid part; part: the amount given'),
    basis: z
      .enum(REFUND_BASES, { error: `must be one of ${REFUND_BASES.join(', ')}` })
      .optional()
      .describe("token (default) or fiat: amount_fiat in the session's currency, converted at the rate of the moment"),
    amount: positiveDecimal.optional().describe('kind part, basis token: the amount in the asset'),
    amount_fiat: positiveDecimal.optional().describe("kind part, basis fiat: the amount in the session's currency"),
    crypto_currency: z
      .enum(ASSET_TICKERS, { error: `must be one of ${ASSET_TICKERS.join(', ')}` })
      .optional()
      .describe('The asset of the payments to return; may be left out when the session received in one'),
    network: z
      .string({ error: required('a string') })
      .max(64, { error: 'must be shorter than or equal to 64 characters' })
      .optional()
      .describe('The network of the payments to return; may be left out when the session received on one'),
    destination: address.optional().describe('Given: the refund is ready. Left out: a claim link for the payer'),
    claim_expires_in_minutes: claimMinutes
      .optional()
      .describe(`The claim link's life, ${MIN_CLAIM_MINUTES} to ${MAX_CLAIM_MINUTES}; default 10080 (7 days)`),
    note: z
      .string({ error: required('a string') })
      .max(NOTE_MAX_LENGTH, { error: `must be shorter than or equal to ${NOTE_MAX_LENGTH} characters` })
      .optional()
      .describe("The merchant's own note"),
  })
  .superRefine((body, context) => {
    const issue = (path: string, message: string) => context.addIssue({ code: 'custom', path: [path], message });
    const fiat = body.basis === 'fiat';
    if (fiat && body.kind !== 'part') issue('basis', 'must be token unless kind is part');
    if (body.kind === 'part' && !fiat && body.amount === undefined) issue('amount', 'is required when kind is part');
    if (body.kind === 'part' && fiat && body.amount_fiat === undefined)
      issue('amount_fiat', 'is required when basis is fiat');
    if (body.amount !== undefined && (body.kind !== 'part' || fiat))
      issue('amount', 'is only for kind part with basis token');
    if (body.amount_fiat !== undefined && !fiat) issue('amount_fiat', 'is only for basis fiat');
    if (body.claim_expires_in_minutes !== undefined && body.destination !== undefined)
      issue('claim_expires_in_minutes', 'is only for a claim link (without destination)');
  })
  .meta({ title: 'CreateRefundRequest' });

type Parsed<T> = { ok: true; value: T } | { ok: false; problems: string[] };

export function parseCreateRefund(body: unknown): Parsed<CreateRefundInput> {
  if (!isJsonObject(body)) return { ok: false, problems: ['body must be a JSON object'] };
  const result = createRefundSchema.safeParse(body);
  if (!result.success) return { ok: false, problems: problemsOf(result.error) };
  const b = result.data;
  return {
    ok: true,
    value: {
      kind: b.kind,
      basis: b.basis ?? 'token',
      amount: b.amount,
      amountFiat: b.amount_fiat,
      cryptoCurrency: b.crypto_currency,
      network: b.network,
      destination: b.destination,
      claimExpiresInMinutes: b.claim_expires_in_minutes,
      note: b.note,
    },
  };
}
