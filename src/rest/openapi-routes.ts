import type { z } from 'zod';
import { ASSET_TICKERS } from '../domain/assets.js';
import { createBodySchema, exact, ref, type Json } from './openapi-schemas.js';
import { createWebhookEndpointSchema, listEventsQuerySchema, updateWebhookEndpointSchema } from './webhook-endpoints.schema.js';

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
