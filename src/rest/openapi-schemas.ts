import { z } from 'zod';
import { ASSET_TICKERS } from '../domain/assets.js';
import { CHECKOUT_SESSION_STATUSES } from '../domain/checkout-session.js';
import { Decimal } from '../domain/money.js';
import { WEBHOOK_EVENT_TYPES } from '../domain/webhook-endpoints.js';
import { createCheckoutSchema, LIMITS } from './create-checkout.schema.js';
import { createPaymentLinkSchema } from './payment-links.schema.js';

/**
 * The schemas of the OpenAPI document (src/rest/openapi.ts): request bodies
 * generated from the routes' zod schemas, responses declared here, each listing
 * every field the route returns (checked against real responses by
 * test/e2e/openapi.test.ts).
 */

export type Json = Record<string, unknown>;
const IO = { unrepresentable: 'any', io: 'input', target: 'draft-2020-12' } as const;

/** zod → JSON Schema, teaching it the custom pieces of our schemas (plain-object and array guards, exact JSON numbers). */
export function jsonSchemaOf(schema: z.ZodType): Json {
  const override = (ctx: { zodSchema: unknown; jsonSchema: Json }) => {
    const def = (ctx.zodSchema as { _zod: { def: any } })._zod.def;
    const replace = (value: Json) => {
      for (const key of Object.keys(ctx.jsonSchema)) delete ctx.jsonSchema[key];
      Object.assign(ctx.jsonSchema, value);
    };
    if (def.type === 'pipe' && def.in._zod.def.type === 'custom' && ['object', 'array'].includes(def.out._zod.def.type)) {
      replace(jsonSchemaOf(def.out));
    } else if (def.type === 'custom') {
      let number = false;
      try {
        number = def.fn(new Decimal(1)) === true && def.fn({}) !== true;
      } catch {
        number = false;
      }
      replace(number ? { type: 'number' } : { type: 'object' });
    }
  };
  const { $schema: _ignored, ...rest } = z.toJSONSchema(schema, { ...IO, override: override as never }) as Json;
  return rest;
}

export const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });
export const json = (schema: Json) => ({ 'application/json': { schema } });
export const ERROR_TEXT: Record<number, string> = {
  400: 'Invalid input: `message` lists every problem',
  401: 'Missing or wrong signature headers (spec §5)',
  404: 'Not found',
  409: 'Conflict with the current state',
  413: 'Body over 100 KB',
  415: 'Content-Type is not application/json, or the body is encoded',
  422: 'The organisation has no receiving wallet on an enabled network',
  410: 'The payment link is inactive or expired',
  429: 'Over a rate limit (README "Rate limits"); Retry-After says in how many seconds to try again',
  500: 'Internal server error (details only in the log)',
  503: 'A dependency is unavailable',
};

/** Decimal strings with 8 fractional digits (spec §2.1–§2.3). */
const amount = { type: 'string', pattern: '^-?\\d+\\.\\d{8}$' };
const nullable = (schema: Json): Json => ({ oneOf: [schema, { type: 'null' }] });
const uuid = { type: 'string', format: 'uuid' };
const dateTime = { type: 'string', format: 'date-time' };
const STATUSES = [...CHECKOUT_SESSION_STATUSES];

/** An object schema that lists every property, requires all of them and (unless `open`) allows no other. */
export const exact = (properties: Json, extra: Json = {}): Json => ({
  type: 'object',
  ...extra,
  required: Object.keys(properties),
  additionalProperties: false,
  properties,
});

/** Spec §2.1, exactly these fields (src/domain/checkout-session.views.ts toPublicView). */
const PUBLIC_PROPERTIES: Json = {
  session_id: uuid,
  status: { type: 'string', enum: STATUSES },
  source: { type: 'string', description: 'Origin of the session' },
  from_payment_link: { type: 'boolean' },
  anonymous: { type: 'boolean' },
  requires_payer_identity: { type: 'boolean' },
  identity_options: { type: 'array', items: { type: 'string' } },
  product_payment_link_id: nullable(uuid),
  total_amount_crypto: nullable(amount),
  crypto_currency: { type: ['string', 'null'], description: 'Ticker of the selected crypto' },
  crypto_options: { type: 'array', items: ref('CryptoPaymentOption') },
  fiat_currency: { type: 'string' },
  total_amount_fiat: amount,
  wallet_address: { type: 'string', description: 'Merchant receiving wallet' },
  supported_networks: { type: 'array', items: { type: 'string' } },
  expires_at: dateTime,
  overpaid: { type: 'boolean' },
  bound_tx_hash: { type: ['string', 'null'] },
  payer_wallet_address: { type: ['string', 'null'] },
  chain_id: { type: ['string', 'null'], description: 'Decimal EIP-155 id' },
  user: exact({ id: { type: 'string' }, email: { type: ['string', 'null'] }, telegram_id: { type: ['string', 'null'] }, username: { type: ['string', 'null'] } }),
};

/** Spec §2.2: the public fields plus these (toMerchantView). */
const MERCHANT_ONLY_PROPERTIES: Json = {
  organisation_id: uuid,
  organisation_name: { type: ['string', 'null'] },
  organisation_deleted: { type: 'boolean' },
  owner_user_id: nullable(uuid),
  checkout_url: { type: 'string', format: 'uri', description: '{checkout_base_url}/pay/<session_id>' },
  items: {
    type: 'array',
    items: exact({
      name: { type: 'string' },
      quantity: { type: 'integer', minimum: 1 },
      unit_price: amount,
      total_price: amount,
      product_id: { type: ['string', 'null'] },
    }),
  },
  metadata: { type: 'object', description: 'Free-form, as sent on create' },
  created_at: dateTime,
};

const WEBHOOK_ENDPOINT_PROPERTIES: Json = {
  id: uuid,
  organisation_id: uuid,
  url: { type: 'string' },
  events: { type: 'array', items: { type: 'string', enum: [...WEBHOOK_EVENT_TYPES] }, description: 'Empty = every type' },
  enabled: { type: 'boolean' },
  previous_secret_expires_at: { type: ['string', 'null'], format: 'date-time', description: 'While set, deliveries carry a second signature made with the previous secret' },
  created_at: dateTime,
  updated_at: dateTime,
};

/**
 * The create body as the zod schema generates it, plus the bounds its custom
 * number checks enforce (JSON Schema cannot see inside a zod refinement):
 * spec §2.4 and §8, DESIGN.md §4 "Create".
 */
export function createBodySchema(): Json {
  const body = jsonSchemaOf(createCheckoutSchema) as { properties: Record<string, Json> };
  const item = (body.properties.items as { items: { properties: Record<string, Json> } }).items;
  item.properties.quantity = { type: 'integer', minimum: 1, maximum: LIMITS.quantity };
  item.properties.unit_price = { type: 'number', minimum: 0, maximum: Number(LIMITS.unitPrice), description: `In the request currency; at most ${LIMITS.unitPriceDecimals} decimal places` };
  body.properties.expires_in_minutes = { type: 'integer', minimum: LIMITS.expiresInMinutes.min, maximum: LIMITS.expiresInMinutes.max, default: 60, description: 'Session lifetime in minutes' };
  return body;
}

/** POST /payment-links: the zod schema's JSON Schema, with the number bounds its refinements enforce. */
export function createPaymentLinkBodySchema(): Json {
  const body = jsonSchemaOf(createPaymentLinkSchema) as { properties: Record<string, Json> };
  const create = createBodySchema() as { properties: Record<string, Json> };
  body.properties.items = { ...create.properties.items, description: body.properties.items?.description };
  body.properties.expires_in_minutes = create.properties.expires_in_minutes!;
  const price = { type: 'number', exclusiveMinimum: 0, maximum: Number(LIMITS.unitPrice) };
  body.properties.amount_fiat = exact({ min: price, max: price }, { description: body.properties.amount_fiat?.description });
  body.properties.max_uses = { oneOf: [{ type: 'integer', minimum: 1, maximum: 1_000_000_000 }, { type: 'null' }], description: body.properties.max_uses?.description };
  return body;
}

const PAYMENT_LINK_PROPERTIES: Json = {
  payment_link_id: uuid,
  organisation_id: uuid,
  url: { type: 'string', format: 'uri', description: '{checkout_base_url}/l/<payment_link_id>' },
  name: { type: 'string' },
  currency: { type: 'string' },
  items: nullable({
    type: 'array',
    items: exact({ name: { type: 'string' }, quantity: { type: 'integer' }, unit_price: amount, total_price: amount, product_id: { type: ['string', 'null'] } }),
  }),
  amount_fiat: nullable(exact({ min: amount, max: amount })),
  total_amount_fiat: nullable(amount),
  expires_in_minutes: { type: 'integer' },
  identity_options: { type: 'array', items: { type: 'string', enum: ['email', 'telegram', 'username'] } },
  anonymous: { type: 'boolean' },
  requires_payer_identity: { type: 'boolean' },
  max_uses: { type: ['integer', 'null'] },
  uses: { type: 'integer', description: 'Sessions created from the link' },
  active: { type: 'boolean' },
  state: { type: 'string', enum: ['active', 'inactive', 'expired', 'used_up'] },
  expires_at: nullable(dateTime),
  metadata: { type: 'object', description: 'Free-form' },
  created_at: dateTime,
  updated_at: dateTime,
};

export function components(): Json {
  return {
    securitySchemes: {
      ServiceKey: { type: 'apiKey', in: 'header', name: 'X-Service-Key', description: 'The pk_… key' },
      ServiceTimestamp: { type: 'apiKey', in: 'header', name: 'X-Service-Timestamp', description: 'Unix time in milliseconds, within ±5 minutes' },
      ServiceSignature: {
        type: 'apiKey',
        in: 'header',
        name: 'X-Service-Signature',
        description:
          'Hex HMAC-SHA256 keyed with the sk_… secret. POST /checkout-sessions (spec §5): of `{timestamp}.{rawBody}`. Every other signed operation: of ' +
          '`{timestamp}.{METHOD}.{path?query}.{rawBody}`, where the path and query are exactly as in the request line (as sent, not decoded; ' +
          'without `?` when there is no query) and the body is empty for GET and DELETE. Each signature is accepted once within its ±5 minute window: ' +
          'the same signature again, on any instance, answers 401 (sign every request, and every retry, afresh).',
      },
    },
    schemas: {
      Error: {
        type: 'object',
        required: ['statusCode', 'message', 'error'],
        additionalProperties: false,
        properties: {
          statusCode: { type: 'integer' },
          message: { oneOf: [{ type: 'string' }, { type: 'array', items: { type: 'string' } }], description: 'An array of every problem for 400; one sentence otherwise' },
          error: { type: 'string' },
        },
      },
      PublicSession: exact(PUBLIC_PROPERTIES, { description: 'Spec §2.1, exactly these fields' }),
      MerchantSession: exact({ ...PUBLIC_PROPERTIES, ...MERCHANT_ONLY_PROPERTIES }, { description: 'Spec §2.2: every field of §2.1 plus the merchant fields' }),
      CryptoPaymentOption: exact(
        { ticker: { type: 'string' }, id: { type: 'string', description: 'Asset identifier' }, unit_price_fiat: amount, amount },
        { description: 'Spec §2.3' },
      ),
      BindResponse: exact(
        {
          session_id: uuid,
          bound_tx_hash: { type: 'string', pattern: '^0x[a-fA-F0-9]{64}$' },
          crypto_currency: { type: 'string', enum: [...ASSET_TICKERS] },
          total_amount_crypto: amount,
          status: { type: 'string', enum: STATUSES },
          idempotent: { type: 'boolean', description: 'true when this transaction was bound before' },
        },
        { description: 'Spec §2.6' },
      ),
      WebhookEndpoint: exact(WEBHOOK_ENDPOINT_PROPERTIES),
      PaymentLink: exact(PAYMENT_LINK_PROPERTIES, { description: 'A payment link as its merchant sees it (README "Payment links")' }),
      LinkSession: exact(
        { ...PUBLIC_PROPERTIES, checkout_url: { type: 'string', format: 'uri', description: '{checkout_base_url}/pay/<session_id>' } },
        { description: 'The public view of a session started from a payment link, and where to pay it' },
      ),
      WebhookEndpointWithSecret: exact(
        { ...WEBHOOK_ENDPOINT_PROPERTIES, secret: { type: 'string', pattern: '^whsec_[0-9a-f]{64}$', description: 'Shown only in this answer' } },
        { description: 'The endpoint and its signing secret (create and rotate-secret only)' },
      ),
      Event: exact(
        {
          id: { type: 'string', format: 'uuid', description: 'Also sent as X-Service-Event-Id; deduplicate on it' },
          type: { type: 'string', enum: [...WEBHOOK_EVENT_TYPES] },
          created_at: dateTime,
          data: { ...ref('MerchantSession'), description: 'The merchant view of the session when the event happened' },
        },
        { description: 'The envelope of webhooks and of the feed' },
      ),
      EventPage: exact({
        data: { type: 'array', items: ref('Event') },
        next_cursor: { type: ['string', 'null'], description: 'Pass as `after` for the next page' },
        has_more: { type: 'boolean' },
      }),
    },
  };
}
