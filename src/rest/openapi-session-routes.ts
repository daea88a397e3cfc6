import {
  bindResponseSchema,
  merchantSessionViewSchema,
  publicSessionViewSchema,
} from '../domain/sessions/checkout-session.views.js';
import { refundListSchema, refundViewSchema } from '../domain/refunds/refund.views.js';
import { bindTransactionBodySchema } from './bind-transaction.schema.js';
import { createCheckoutSchema } from './create-checkout.schema.js';
import { SIGNED_BODY_ERRORS, type RouteDoc } from './openapi-route-doc.js';
import { createRefundSchema } from './refunds.schema.js';

/** Checkout sessions: create, the public read, the payer's bind. */
export const SESSION_ROUTES: readonly RouteDoc[] = [
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
];

/** Refunds of a session. */
export const REFUND_ROUTES: readonly RouteDoc[] = [
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
