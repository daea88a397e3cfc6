import type { z } from 'zod';
import { ASSET_TICKERS } from '../domain/assets.js';
import { createBodySchema, createPaymentLinkBodySchema, exact, ref, type Json } from './openapi-schemas.js';
import { createWebhookEndpointSchema, listEventsQuerySchema, updateWebhookEndpointSchema } from './webhook-endpoints.schema.js';
import { linkSessionSchema, updatePaymentLinkSchema } from './payment-links.schema.js';


export interface RouteDoc {
  readonly method: 'get' | 'post' | 'patch' | 'delete';
  /** Express path, e.g. /checkout-sessions/:id */
  readonly path: string;
  readonly summary: string;
  /**
   * false: public. 'body': create, spec §5's `{timestamp}.{rawBody}`. 'request':
   * `{timestamp}.{METHOD}.{path?query}.{rawBody}` (README "Signing a merchant call").
   */
  readonly signed: false | 'body' | 'request';
  readonly body?: z.ZodType | Json;
  readonly query?: z.ZodObject;
  readonly ok: { status: number; description: string; schema?: Json; contentType?: string };
  /** Error statuses this operation answers (500 is added to all). */
  readonly errors: readonly number[];
  readonly headers?: readonly { name: string; description: string }[];
}

// Every signed route answers 429 once an address fails too many signature checks (README "Rate limits").
const SIGNED_BODY_ERRORS = [400, 401, 404, 413, 415, 429] as const;

/** Every REST operation Kassa serves. */
export const ROUTES: readonly RouteDoc[] = [
  {
    method: 'post',
    path: '/checkout-sessions',
    summary: 'Create a checkout session (spec §4.1)',
    signed: 'body',
    body: createBodySchema(),
    ok: { status: 201, description: 'The merchant view; a replayed Idempotency-Key answers the same with Idempotent-Replayed: true', schema: ref('MerchantSession') },
    errors: [400, 401, 409, 413, 415, 422, 429, 503],
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
    errors: [400, 404, 409, 413, 415, 429],
  },
  {
    method: 'post',
    path: '/webhook-endpoints',
    summary: 'Register a webhook endpoint; the signing secret is in this answer only',
    signed: 'request',
    body: createWebhookEndpointSchema,
    ok: { status: 201, description: 'The endpoint and its secret', schema: ref('WebhookEndpointWithSecret') },
    errors: SIGNED_BODY_ERRORS,
  },
  {
    method: 'get',
    path: '/webhook-endpoints',
    summary: "The organisation's webhook endpoints",
    signed: 'request',
    ok: { status: 200, description: 'All endpoints (never secrets)', schema: exact({ data: { type: 'array', items: ref('WebhookEndpoint') } }) },
    errors: [401, 429],
  },
  {
    method: 'get',
    path: '/webhook-endpoints/:id',
    summary: 'One webhook endpoint',
    signed: 'request',
    ok: { status: 200, description: 'The endpoint', schema: ref('WebhookEndpoint') },
    errors: [400, 401, 404, 429],
  },
  {
    method: 'patch',
    path: '/webhook-endpoints/:id',
    summary: 'Change the URL, the event filter or enabled',
    signed: 'request',
    body: updateWebhookEndpointSchema,
    ok: { status: 200, description: 'The endpoint as it now is', schema: ref('WebhookEndpoint') },
    errors: SIGNED_BODY_ERRORS,
  },
  {
    method: 'delete',
    path: '/webhook-endpoints/:id',
    summary: 'Delete a webhook endpoint and its delivery history',
    signed: 'request',
    ok: { status: 204, description: 'Deleted' },
    errors: [400, 401, 404, 429],
  },
  {
    method: 'post',
    path: '/webhook-endpoints/:id/rotate-secret',
    summary: 'Issue a new secret; the previous one keeps signing during the overlap',
    signed: 'request',
    ok: { status: 200, description: 'The endpoint and its new secret', schema: ref('WebhookEndpointWithSecret') },
    errors: [400, 401, 404, 429],
  },
  {
    method: 'get',
    path: '/events',
    summary: 'The events feed, for reconciliation',
    signed: 'request',
    query: listEventsQuerySchema,
    ok: { status: 200, description: 'A page of events, oldest first', schema: ref('EventPage') },
    errors: [400, 401, 429],
  },
  {
    method: 'post',
    path: '/payment-links',
    summary: 'Create a reusable payment link: a fixed basket (items) or an open amount (amount_fiat)',
    signed: 'request',
    body: createPaymentLinkBodySchema(),
    ok: { status: 201, description: 'The link; `url` is {checkout_base_url}/l/<payment_link_id>', schema: ref('PaymentLink') },
    errors: [...SIGNED_BODY_ERRORS, 422],
  },
  {
    method: 'get',
    path: '/payment-links',
    summary: "The organisation's payment links, newest first",
    signed: 'request',
    ok: { status: 200, description: 'All links', schema: exact({ data: { type: 'array', items: ref('PaymentLink') } }) },
    errors: [401, 429],
  },
  {
    method: 'get',
    path: '/payment-links/:id',
    summary: 'One payment link',
    signed: 'request',
    ok: { status: 200, description: 'The link', schema: ref('PaymentLink') },
    errors: [400, 401, 404, 429],
  },
  {
    method: 'patch',
    path: '/payment-links/:id',
    summary: 'Rename, (de)activate, change max_uses, expires_at or metadata',
    signed: 'request',
    body: updatePaymentLinkSchema,
    ok: { status: 200, description: 'The link as it now is', schema: ref('PaymentLink') },
    errors: SIGNED_BODY_ERRORS,
  },
  {
    method: 'post',
    path: '/payment-links/:id/sessions',
    summary: "The payer's visit: starts a checkout session from the link (public, throttled per address)",
    signed: false,
    body: linkSessionSchema,
    ok: {
      status: 201,
      description: 'The public view of the new session (spec §2.1) and its checkout_url; a replayed Idempotency-Key answers the same with Idempotent-Replayed: true',
      schema: ref('LinkSession'),
    },
    errors: [400, 404, 409, 410, 413, 415, 429, 503],
    headers: [{ name: 'Idempotency-Key', description: '16–255 printable ASCII characters (a random value, such as a UUID), scoped to the link and to what the payer sends: the same key with other details is another visit' }],
  },
  {
    method: 'get',
    path: '/brand/logo/:sha256',
    summary: "An organisation's logo, named by its sha256 (README \"Branding and languages\")",
    signed: false,
    ok: { status: 200, description: 'The PNG or WebP image, cacheable for good', contentType: 'image/png' },
    errors: [400, 404],
  },
  { method: 'get', path: '/health', summary: 'Liveness', signed: false, ok: { status: 200, description: 'The process serves HTTP', schema: exact({ status: { const: 'ok' } }) }, errors: [] },
  { method: 'get', path: '/ready', summary: 'Readiness', signed: false, ok: { status: 200, description: 'The database answers', schema: exact({ status: { const: 'ready' } }) }, errors: [503] },
  { method: 'get', path: '/metrics', summary: 'Prometheus metrics', signed: false, ok: { status: 200, description: 'Prometheus text format', contentType: 'text/plain' }, errors: [] },
  { method: 'get', path: '/openapi.json', summary: 'This document', signed: false, ok: { status: 200, description: 'OpenAPI 3.1', schema: { type: 'object' } }, errors: [] },
  { method: 'get', path: '/docs', summary: 'This document as an HTML page', signed: false, ok: { status: 200, description: 'HTML', contentType: 'text/html' }, errors: [] },
];
