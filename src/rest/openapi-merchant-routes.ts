import { linkSessionViewSchema } from '../domain/sessions/checkout-session.views.js';
import { paymentLinkViewSchema } from '../domain/payment-links/payment-link.views.js';
import {
  eventPageSchema,
  webhookEndpointViewSchema,
  webhookEndpointWithSecretSchema,
} from '../domain/webhooks/webhook.views.js';
import { paymentLinkListSchema, webhookEndpointListSchema } from './openapi-components.js';
import { signedResource, type RouteDoc } from './openapi-route-doc.js';
import { createPaymentLinkSchema, linkSessionSchema, updatePaymentLinkSchema } from './payment-links.schema.js';
import {
  createWebhookEndpointBodySchema,
  listEventsQuerySchema,
  updateWebhookEndpointBodySchema,
} from './webhook-endpoints.schema.js';

/** The merchant's webhook endpoints and events feed, and payment links (with the payer's visit to one). */
export const WEBHOOK_ROUTES: readonly RouteDoc[] = [
  ...signedResource('/webhook-endpoints', {
    create: {
      summary: 'Register a webhook endpoint; the signing secret is in this answer only',
      body: createWebhookEndpointBodySchema,
      ok: { status: 201, description: 'The endpoint and its secret', schema: webhookEndpointWithSecretSchema },
      // 409: the organisation has the most endpoints it may (MAX_WEBHOOK_ENDPOINTS).
      moreErrors: [409],
    },
    list: {
      summary: "The organisation's webhook endpoints",
      description: 'All endpoints (never secrets)',
      schema: webhookEndpointListSchema,
    },
    read: { summary: 'One webhook endpoint', description: 'The endpoint', schema: webhookEndpointViewSchema },
    change: {
      summary: 'Change the URL, the event filter or enabled',
      body: updateWebhookEndpointBodySchema,
      description: 'The endpoint as it now is',
      schema: webhookEndpointViewSchema,
    },
  }),
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
];

export const PAYMENT_LINK_ROUTES: readonly RouteDoc[] = [
  ...signedResource('/payment-links', {
    create: {
      summary: 'Create a reusable payment link: a fixed basket (items) or an open amount (amount_fiat)',
      body: createPaymentLinkSchema,
      ok: {
        status: 201,
        description: 'The link; `url` is {checkout_base_url}/l/<payment_link_id>',
        schema: paymentLinkViewSchema,
      },
      moreErrors: [422],
    },
    list: {
      summary: "The organisation's payment links, newest first",
      description: 'All links',
      schema: paymentLinkListSchema,
    },
    read: { summary: 'One payment link', description: 'The link', schema: paymentLinkViewSchema },
    change: {
      summary: 'Rename, (de)activate, change max_uses, expires_at or metadata',
      body: updatePaymentLinkSchema,
      description: 'The link as it now is',
      schema: paymentLinkViewSchema,
    },
  }),
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
];
