import { Decimal } from '../domain/money.js';
import { Router } from 'express';
import { z } from 'zod';
import { WEBHOOK_EVENT_TYPES } from '../domain/webhook-endpoints.js';
import { ASSET_TICKERS } from '../domain/assets.js';
import { createCheckoutSchema, LIMITS } from './create-checkout.schema.js';
import { methodNotAllowed } from './error-handler.js';
import { createWebhookEndpointSchema, listEventsQuerySchema, updateWebhookEndpointSchema } from './webhook-endpoints.schema.js';

/**
 * The OpenAPI 3.1 document of the REST API (spec §9: version 1.0.0). Request
 * bodies and query parameters are generated from the zod schemas the routes
 * validate with; responses are declared here. test/e2e/openapi.test.ts checks
 * that every route Express serves is here with the statuses it answers.
 */

type Json = Record<string, unknown>;
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

const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });
const json = (schema: Json) => ({ 'application/json': { schema } });
const ERROR_TEXT: Record<number, string> = {
  400: 'Invalid input: `message` lists every problem',
  401: 'Missing or wrong signature headers (spec §5)',
  404: 'Not found',
  409: 'Conflict with the current state',
  413: 'Body over 100 KB',
  415: 'Content-Type is not application/json, or the body is encoded',
  422: 'The organisation has no receiving wallet on an enabled network',
  500: 'Internal server error (details only in the log)',
  503: 'A dependency is unavailable',
};

/** Decimal strings with 8 fractional digits (spec §2.1–§2.3). */
const amount = { type: 'string', pattern: '^-?\\d+\\.\\d{8}$' };
const nullable = (schema: Json): Json => ({ oneOf: [schema, { type: 'null' }] });
const uuid = { type: 'string', format: 'uuid' };
const dateTime = { type: 'string', format: 'date-time' };
const STATUSES = ['pending', 'waiting_payment', 'partial', 'paid', 'expired', 'failed'];

/** An object schema that lists every property, requires all of them and (unless `open`) allows no other. */
const exact = (properties: Json, extra: Json = {}): Json => ({
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
function createBodySchema(): Json {
  const body = jsonSchemaOf(createCheckoutSchema) as { properties: Record<string, Json> };
  const item = (body.properties.items as { items: { properties: Record<string, Json> } }).items;
  item.properties.quantity = { type: 'integer', minimum: 1, maximum: LIMITS.quantity };
  item.properties.unit_price = { type: 'number', minimum: 0, maximum: Number(LIMITS.unitPrice), description: `In the request currency; at most ${LIMITS.unitPriceDecimals} decimal places` };
  body.properties.expires_in_minutes = { type: 'integer', minimum: LIMITS.expiresInMinutes.min, maximum: LIMITS.expiresInMinutes.max, default: 60, description: 'Session lifetime in minutes' };
  return body;
}

export interface RouteDoc {
  readonly method: 'get' | 'post' | 'patch' | 'delete';
  /** Express path, e.g. /checkout-sessions/:id */
  readonly path: string;
  readonly summary: string;
  readonly signed: boolean;
  readonly body?: z.ZodType | Json;
  readonly query?: z.ZodObject;
  readonly ok: { status: number; description: string; schema?: Json; contentType?: string };
  /** Error statuses this operation answers (500 is added to all). */
  readonly errors: readonly number[];
  readonly headers?: readonly { name: string; description: string }[];
}

const SIGNED_BODY_ERRORS = [400, 401, 404, 413, 415] as const;

/** Every REST operation Kassa serves. */
export const ROUTES: readonly RouteDoc[] = [
  {
    method: 'post',
    path: '/checkout-sessions',
    summary: 'Create a checkout session (spec §4.1)',
    signed: true,
    body: createBodySchema(),
    ok: { status: 201, description: 'The merchant view; a replayed Idempotency-Key answers the same with Idempotent-Replayed: true', schema: ref('MerchantSession') },
    errors: [400, 401, 409, 413, 415, 422, 503],
    headers: [{ name: 'Idempotency-Key', description: '1–255 printable ASCII characters, scoped to the organisation, remembered ≥ 24 h' }],
  },
  {
    method: 'get',
    path: '/checkout-sessions/:id',
    summary: 'Read a session: the public view (spec §2.1)',
    signed: false,
    ok: { status: 200, description: 'The public view', schema: ref('PublicSession') },
    errors: [400, 404],
  },
  {
    method: 'post',
    path: '/checkout-sessions/:id/bind-tx',
    summary: "Bind the payer's transaction (spec §2.6)",
    signed: false,
    body: {
      type: 'object',
      required: ['tx_hash', 'chain_id'],
      additionalProperties: false,
      properties: {
        tx_hash: { type: 'string', pattern: '^0x[a-fA-F0-9]{64}$' },
        chain_id: { type: 'string', description: 'Decimal EIP-155 id ("56"); hex "0x38" is accepted' },
        crypto_currency: { type: 'string', enum: [...ASSET_TICKERS], description: 'Required unless the session already has one' },
        payer_wallet_address: { type: 'string', pattern: '^0x[a-fA-F0-9]{40}$' },
      },
    },
    ok: { status: 200, description: 'Bound (idempotent: false) or bound before (idempotent: true)', schema: ref('BindResponse') },
    errors: [400, 404, 409, 413, 415],
  },
  {
    method: 'post',
    path: '/webhook-endpoints',
    summary: 'Register a webhook endpoint; the signing secret is in this answer only',
    signed: true,
    body: createWebhookEndpointSchema,
    ok: { status: 201, description: 'The endpoint and its secret', schema: ref('WebhookEndpointWithSecret') },
    errors: SIGNED_BODY_ERRORS,
  },
  {
    method: 'get',
    path: '/webhook-endpoints',
    summary: "The organisation's webhook endpoints",
    signed: true,
    ok: { status: 200, description: 'All endpoints (never secrets)', schema: exact({ data: { type: 'array', items: ref('WebhookEndpoint') } }) },
    errors: [401],
  },
  {
    method: 'get',
    path: '/webhook-endpoints/:id',
    summary: 'One webhook endpoint',
    signed: true,
    ok: { status: 200, description: 'The endpoint', schema: ref('WebhookEndpoint') },
    errors: [400, 401, 404],
  },
  {
    method: 'patch',
    path: '/webhook-endpoints/:id',
    summary: 'Change the URL, the event filter or enabled',
    signed: true,
    body: updateWebhookEndpointSchema,
    ok: { status: 200, description: 'The endpoint as it now is', schema: ref('WebhookEndpoint') },
    errors: SIGNED_BODY_ERRORS,
  },
  {
    method: 'delete',
    path: '/webhook-endpoints/:id',
    summary: 'Delete a webhook endpoint and its delivery history',
    signed: true,
    ok: { status: 204, description: 'Deleted' },
    errors: [400, 401, 404],
  },
  {
    method: 'post',
    path: '/webhook-endpoints/:id/rotate-secret',
    summary: 'Issue a new secret; the previous one keeps signing during the overlap',
    signed: true,
    ok: { status: 200, description: 'The endpoint and its new secret', schema: ref('WebhookEndpointWithSecret') },
    errors: [400, 401, 404],
  },
  {
    method: 'get',
    path: '/events',
    summary: 'The events feed, for reconciliation',
    signed: true,
    query: listEventsQuerySchema,
    ok: { status: 200, description: 'A page of events, oldest first', schema: ref('EventPage') },
    errors: [400, 401],
  },
  { method: 'get', path: '/health', summary: 'Liveness', signed: false, ok: { status: 200, description: 'The process serves HTTP', schema: exact({ status: { const: 'ok' } }) }, errors: [] },
  { method: 'get', path: '/ready', summary: 'Readiness', signed: false, ok: { status: 200, description: 'The database answers', schema: exact({ status: { const: 'ready' } }) }, errors: [503] },
  { method: 'get', path: '/metrics', summary: 'Prometheus metrics', signed: false, ok: { status: 200, description: 'Prometheus text format', contentType: 'text/plain' }, errors: [] },
  { method: 'get', path: '/openapi.json', summary: 'This document', signed: false, ok: { status: 200, description: 'OpenAPI 3.1', schema: { type: 'object' } }, errors: [] },
  { method: 'get', path: '/docs', summary: 'This document as an HTML page', signed: false, ok: { status: 200, description: 'HTML', contentType: 'text/html' }, errors: [] },
];

function components(): Json {
  return {
    securitySchemes: {
      ServiceKey: { type: 'apiKey', in: 'header', name: 'X-Service-Key', description: 'The pk_… key' },
      ServiceTimestamp: { type: 'apiKey', in: 'header', name: 'X-Service-Timestamp', description: 'Unix time in milliseconds, within ±5 minutes' },
      ServiceSignature: {
        type: 'apiKey',
        in: 'header',
        name: 'X-Service-Signature',
        description: 'Hex HMAC-SHA256 of `{timestamp}.{rawBody}` keyed with the sk_… secret (empty body for GET and DELETE)',
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

/** Express `:id` → OpenAPI `{id}`. */
export const openApiPath = (path: string) => path.replace(/:(\w+)/g, '{$1}');

export function buildOpenApiDocument(): Json {
  const paths: Record<string, Json> = {};
  for (const route of ROUTES) {
    const parameters: Json[] = [...route.path.matchAll(/:(\w+)/g)].map(([, name]) => ({ name, in: 'path', required: true, schema: { type: 'string', format: 'uuid' } }));
    if (route.query) {
      const schema = jsonSchemaOf(route.query) as { properties?: Record<string, Json>; required?: string[] };
      for (const [name, property] of Object.entries(schema.properties ?? {})) {
        const { description, ...rest } = property;
        parameters.push({ name, in: 'query', required: schema.required?.includes(name) ?? false, schema: rest, ...(description ? { description } : {}) });
      }
    }
    for (const header of route.headers ?? []) parameters.push({ name: header.name, in: 'header', required: false, description: header.description, schema: { type: 'string' } });
    const responses: Record<string, Json> = {
      [route.ok.status]: {
        description: route.ok.description,
        ...(route.ok.schema ? { content: json(route.ok.schema) } : route.ok.contentType ? { content: { [route.ok.contentType]: { schema: { type: 'string' } } } } : {}),
      },
    };
    for (const status of [...route.errors, 500]) responses[status] = { description: ERROR_TEXT[status] ?? 'Error', content: json(ref('Error')) };
    const body = route.body ? (route.body instanceof z.ZodType ? jsonSchemaOf(route.body) : route.body) : null;
    const operation: Json = {
      summary: route.summary,
      operationId: `${route.method}${route.path.replace(/[^a-zA-Z]+(\w)/g, (_m, c: string) => c.toUpperCase()).replace(/[^a-zA-Z]/g, '')}`,
      ...(parameters.length ? { parameters } : {}),
      ...(body ? { requestBody: { required: true, content: json(body) } } : {}),
      responses,
      ...(route.signed ? { security: [{ ServiceKey: [], ServiceTimestamp: [], ServiceSignature: [] }] } : {}),
    };
    (paths[openApiPath(route.path)] ??= {})[route.method] = operation;
  }
  return {
    openapi: '3.1.0',
    info: {
      title: 'Kassa REST API',
      version: '1.0.0',
      description:
        'Self-hosted crypto checkout. Every error has the body {statusCode, message, error}; a method a path does not serve answers 405 with Allow. Webhooks POST the Event schema with X-Service-Event-Id, X-Service-Timestamp and X-Service-Signature.',
    },
    paths,
    components: components(),
  };
}

const escape = (text: string) => text.replace(/[&<>"]/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;' })[c]!);

/** A plain HTML rendering of the document: no scripts, no CDN. */
export function renderDocsPage(document: Json): string {
  const paths = document.paths as Record<string, Record<string, Json>>;
  const sections = Object.entries(paths)
    .flatMap(([path, operations]) =>
      Object.entries(operations).map(([method, operation]) => {
        const responses = Object.entries(operation.responses as Record<string, { description: string }>)
          .map(([status, response]) => `<li><code>${status}</code> ${escape(response.description)}</li>`)
          .join('');
        const body = (operation.requestBody as { content: Record<string, { schema: Json }> } | undefined)?.content['application/json']?.schema;
        return `<section><h2><code>${method.toUpperCase()} ${escape(path)}</code>${operation.security ? ' <small>signed</small>' : ''}</h2><p>${escape(String(operation.summary))}</p>${
          body ? `<details><summary>Request body</summary><pre>${escape(JSON.stringify(body, null, 2))}</pre></details>` : ''
        }<ul>${responses}</ul></section>`;
      }),
    )
    .join('\n');
  const info = document.info as { title: string; version: string; description: string };
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>${escape(info.title)} ${info.version}</title><style>body{font:15px/1.5 system-ui,sans-serif;max-width:60rem;margin:2rem auto;padding:0 1rem}code,pre{background:#f4f4f4}pre{padding:.5rem;overflow:auto}small{color:#a60}</style></head><body><h1>${escape(info.title)} <small>${info.version}</small></h1><p>${escape(info.description)}</p><p>Machine-readable: <a href="/openapi.json">/openapi.json</a> (OpenAPI 3.1).</p>${sections}</body></html>`;
}

export function openApiRouter(): Router {
  const router = Router();
  const document = buildOpenApiDocument();
  const page = renderDocsPage(document);
  router.get('/openapi.json', (_req, res) => void res.json(document));
  router.all('/openapi.json', methodNotAllowed(['GET']));
  router.get('/docs', (_req, res) => void res.type('html').send(page));
  router.all('/docs', methodNotAllowed(['GET']));
  return router;
}
