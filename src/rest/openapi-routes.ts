import { z } from 'zod';
import {
  bindResponseSchema,
  linkSessionViewSchema,
  merchantSessionViewSchema,
  publicSessionViewSchema,
} from '../domain/sessions/checkout-session.views.js';
import { paymentLinkViewSchema } from '../domain/payment-links/payment-link.views.js';
import {
  eventPageSchema,
  webhookEndpointViewSchema,
  webhookEndpointWithSecretSchema,
} from '../domain/webhooks/webhook.views.js';
import { bindTransactionBodySchema } from './bind-transaction.schema.js';
import { createCheckoutSchema } from './create-checkout.schema.js';
import { createRefundSchema } from './refunds.schema.js';
import { refundListSchema, refundViewSchema } from '../domain/refunds/refund.views.js';
import { paymentLinkListSchema, webhookEndpointListSchema } from './openapi-components.js';
import { createPaymentLinkSchema, linkSessionSchema, updatePaymentLinkSchema } from './payment-links.schema.js';
import {
  createWebhookEndpointBodySchema,
  listEventsQuerySchema,
  updateWebhookEndpointBodySchema,
} from './webhook-endpoints.schema.js';

export interface RouteDoc {
  readonly method: 'get' | 'post' | 'patch' | 'delete';
  /** Express path, e.g. /checkout-sessions/:id */
  readonly path: string;
  readonly summary: string;
  /**
   * false: public. 'body': create, `{timestamp}.{rawBody}`. 'request':
   * `{timestamp}.{METHOD}.{path?query}.{rawBody}` (docs/api/rest.md#signing-a-merchant-call).
   */
  readonly signed: false | 'body' | 'request';
  /** The zod schema the route validates its body with (a request schema carries a `title`, its type's name). */
  readonly body?: z.ZodType;
  readonly query?: z.ZodObject;
  /** `schema`: a component of openapi-components.ts (a `$ref`), or a small schema written inline. */
  readonly ok: {
    status: number;
    description: string;
    schema?: z.ZodType;
    contentType?: string;
    /** Headers of the success answer, by name: their description. */
    headers?: Readonly<Record<string, string>>;
  };
  /** Answers with an ETag and honours If-None-Match with a 304 (docs/api/rest.md#caching). */
  readonly conditional?: boolean;
  /** Error statuses this operation answers (500 is added to all). */
  readonly errors: readonly number[];
  readonly headers?: readonly { name: string; description: string }[];
}

// Every signed route answers its failing calls 429 once their address or key id failed too many signature checks
// (docs/api/rest.md#rate-limits); a correctly signed call never.
const SIGNED_BODY_ERRORS = [400, 401, 404, 413, 415, 429] as const;

/** Every REST operation Kassa serves. */
export const ROUTES: readonly RouteDoc[] = [
  {
    method: 'post',
    path: '/checkout-sessions',
    summary: 'Create a checkout session',
    signed: 'body',
    body: createCheckoutSchema,
    ok: {
      status: 201,
      description: 'The merchant view; a replayed Idempotency-Key answers the same with Idempotent-Replayed: true',
      schema: merchantSessionViewSchema,
      headers: { 'Idempotent-Replayed': '`true` on the answer to a replayed Idempotency-Key; absent otherwise' },
    },
    errors: [400, 401, 409, 413, 415, 422, 429, 503],
    headers: [
      {
        name: 'Idempotency-Key',
        description: '1–255 printable ASCII characters, scoped to the organisation, remembered ≥ 24 h',
      },
    ],
  },
  {
    method: 'get',
    path: '/checkout-sessions/:id',
    summary: 'Read a session: the public view',
    signed: false,
    ok: {
      status: 200,
      description: 'The public view',
      schema: publicSessionViewSchema,
      headers: {
        ETag: 'The version of this answer; send it in If-None-Match to be answered 304 while it is current',
        'Cache-Control': '`no-cache`: a cache may store the answer but checks it with its ETag on every use',
      },
    },
    conditional: true,
    // 429 only for reads of unknown ids past their limit (docs/api/rest.md#rate-limits).
    errors: [400, 404, 429],
  },
  {
    method: 'post',
    path: '/checkout-sessions/:id/bind-tx',
    summary: "Bind the payer's transaction (docs/api/rest.md#bind-rules)",
    signed: false,
    body: bindTransactionBodySchema,
    ok: {
      status: 200,
      description: 'Bound (idempotent: false) or bound before (idempotent: true)',
      schema: bindResponseSchema,
    },
    errors: [400, 404, 409, 413, 415, 429],
  },
  {
    method: 'post',
    path: '/webhook-endpoints',
    summary: 'Register a webhook endpoint; the signing secret is in this answer only',
    signed: 'request',
    body: createWebhookEndpointBodySchema,
    ok: { status: 201, description: 'The endpoint and its secret', schema: webhookEndpointWithSecretSchema },
    // 409: the organisation has the most endpoints it may (MAX_WEBHOOK_ENDPOINTS).
    errors: [...SIGNED_BODY_ERRORS, 409],
  },
  {
    method: 'get',
    path: '/webhook-endpoints',
    summary: "The organisation's webhook endpoints",
    signed: 'request',
    ok: { status: 200, description: 'All endpoints (never secrets)', schema: webhookEndpointListSchema },
    errors: [401, 429],
  },
  {
    method: 'get',
    path: '/webhook-endpoints/:id',
    summary: 'One webhook endpoint',
    signed: 'request',
    ok: { status: 200, description: 'The endpoint', schema: webhookEndpointViewSchema },
    errors: [400, 401, 404, 429],
  },
  {
    method: 'patch',
    path: '/webhook-endpoints/:id',
    summary: 'Change the URL, the event filter or enabled',
    signed: 'request',
    body: updateWebhookEndpointBodySchema,
    ok: { status: 200, description: 'The endpoint as it now is', schema: webhookEndpointViewSchema },
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
    ok: { status: 200, description: 'The endpoint and its new secret', schema: webhookEndpointWithSecretSchema },
    errors: [400, 401, 404, 429],
  },
  {
    method: 'get',
    path: '/events',
    summary: 'The events feed, for reconciliation',
    signed: 'request',
    query: listEventsQuerySchema,
    ok: { status: 200, description: 'A page of events, oldest first', schema: eventPageSchema },
    errors: [400, 401, 429],
  },
  {
    method: 'post',
    path: '/payment-links',
    summary: 'Create a reusable payment link: a fixed basket (items) or an open amount (amount_fiat)',
    signed: 'request',
    body: createPaymentLinkSchema,
    ok: {
      status: 201,
      description: 'The link; `url` is {checkout_base_url}/l/<payment_link_id>',
      schema: paymentLinkViewSchema,
    },
    errors: [...SIGNED_BODY_ERRORS, 422],
  },
  {
    method: 'get',
    path: '/payment-links',
    summary: "The organisation's payment links, newest first",
    signed: 'request',
    ok: { status: 200, description: 'All links', schema: paymentLinkListSchema },
    errors: [401, 429],
  },
  {
    method: 'get',
    path: '/payment-links/:id',
    summary: 'One payment link',
    signed: 'request',
    ok: { status: 200, description: 'The link', schema: paymentLinkViewSchema },
    errors: [400, 401, 404, 429],
  },
  {
    method: 'patch',
    path: '/payment-links/:id',
    summary: 'Rename, (de)activate, change max_uses, expires_at or metadata',
    signed: 'request',
    body: updatePaymentLinkSchema,
    ok: { status: 200, description: 'The link as it now is', schema: paymentLinkViewSchema },
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
      description:
        'The public view of the new session and its checkout_url; ' +
        'a replayed Idempotency-Key answers the same with Idempotent-Replayed: true',
      schema: linkSessionViewSchema,
    },
    errors: [400, 404, 409, 410, 413, 415, 429, 503],
    headers: [
      {
        name: 'Idempotency-Key',
        description:
          '16–255 printable ASCII characters (a random value, such as a UUID), scoped to the link and to what ' +
          'the payer sends: the same key with other details is another visit',
      },
    ],
  },
  {
    method: 'get',
    path: '/brand/logo/:sha256',
    summary: "An organisation's logo, named by its sha256 (docs/hosted-pages.md#branding-and-languages)",
    signed: false,
    ok: { status: 200, description: 'The PNG or WebP image, cacheable for good', contentType: 'image/png' },
    errors: [400, 404],
  },
  {
    method: 'get',
    path: '/health',
    summary: 'Liveness',
    signed: false,
    ok: { status: 200, description: 'The process serves HTTP', schema: z.strictObject({ status: z.literal('ok') }) },
    errors: [],
  },
  {
    method: 'get',
    path: '/ready',
    summary: 'Readiness',
    signed: false,
    ok: { status: 200, description: 'The database answers', schema: z.strictObject({ status: z.literal('ready') }) },
    errors: [503],
  },
  {
    method: 'get',
    path: '/metrics',
    summary: 'Prometheus metrics',
    signed: false,
    ok: { status: 200, description: 'Prometheus text format', contentType: 'text/plain' },
    errors: [],
  },
  {
    method: 'get',
    path: '/openapi.json',
    summary: 'This document',
    signed: false,
    ok: { status: 200, description: 'OpenAPI 3.1', schema: z.record(z.string(), z.unknown()) },
    errors: [],
  },
  {
    method: 'get',
    path: '/docs',
    summary: 'This document as an HTML page',
    signed: false,
    ok: { status: 200, description: 'HTML', contentType: 'text/html' },
    errors: [],
  },
  {
    method: 'post',
    path: '/checkout-sessions/:id/refunds',
    summary: 'Refund a session: all received, the overpaid excess or a part, to an address or through a claim link',
    signed: 'request',
    body: createRefundSchema,
    ok: {
      status: 201,
      description: 'The refund; a replayed Idempotency-Key answers the same with Idempotent-Replayed: true',
      schema: refundViewSchema,
      headers: { 'Idempotent-Replayed': '`true` on the answer to a replayed Idempotency-Key; absent otherwise' },
    },
    errors: [...SIGNED_BODY_ERRORS, 409, 422, 503],
    headers: [
      {
        name: 'Idempotency-Key',
        description: '1–255 printable ASCII characters, scoped to the organisation, remembered with the refund',
      },
    ],
  },
  {
    method: 'get',
    path: '/checkout-sessions/:id/refunds',
    summary: "A session's refunds, oldest first",
    signed: 'request',
    ok: { status: 200, description: 'The refunds', schema: refundListSchema },
    errors: [400, 401, 404, 429],
  },
  {
    method: 'get',
    path: '/refunds/:id',
    summary: 'One refund',
    signed: 'request',
    ok: { status: 200, description: 'The refund', schema: refundViewSchema },
    errors: [400, 401, 404, 429],
  },
  {
    method: 'post',
    path: '/refunds/:id/cancel',
    summary: 'Cancel a refund before it is sent',
    signed: 'request',
    ok: { status: 200, description: 'The cancelled refund', schema: refundViewSchema },
    errors: [400, 401, 404, 409, 429],
  },
];
