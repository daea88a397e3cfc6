import { z } from 'zod';
import type { RouteDoc } from './openapi-route-doc.js';
import { PAYMENT_LINK_ROUTES, WEBHOOK_ROUTES } from './openapi-merchant-routes.js';
import { REFUND_ROUTES, SESSION_ROUTES } from './openapi-session-routes.js';

export type { RouteDoc } from './openapi-route-doc.js';

/** Every REST operation Kassa serves, in the OpenAPI document's order. */
export const ROUTES: readonly RouteDoc[] = [
  ...SESSION_ROUTES,
  ...WEBHOOK_ROUTES,
  ...PAYMENT_LINK_ROUTES,
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
  ...REFUND_ROUTES,
];
