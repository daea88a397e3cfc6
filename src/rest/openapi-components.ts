import { z } from 'zod';
import {
  bindResponseSchema,
  checkoutStatusSchema,
  checkoutUserSchema,
  cryptoPaymentOptionSchema,
  cryptoTickerSchema,
  linkSessionViewSchema,
  lineItemSchema,
  merchantSessionViewSchema,
  publicSessionViewSchema,
} from '../domain/sessions/checkout-session.views.js';
import { paymentLinkViewSchema } from '../domain/payment-links/payment-link.views.js';
import {
  eventEnvelopeSchema,
  eventPageSchema,
  eventTypeSchema,
  webhookEndpointViewSchema,
  webhookEndpointWithSecretSchema,
} from '../domain/webhooks/webhook.views.js';
import { errorBodySchema } from '../http/http-error.js';
import { refundListSchema, refundViewSchema } from '../domain/refunds/refund.views.js';
import { componentSchemasOf, type Json } from './openapi-json-schema.js';

/**
 * The OpenAPI document's named response schemas, each generated from the zod schema its view is typed by (the domain's
 * views and the error body).
 */

export const webhookEndpointListSchema = z.strictObject({ data: z.array(webhookEndpointViewSchema) });
export const paymentLinkListSchema = z.strictObject({ data: z.array(paymentLinkViewSchema) });

const COMPONENTS = z.registry<{ id: string }>();
for (const [id, schema] of Object.entries({
  Error: errorBodySchema,
  CheckoutStatus: checkoutStatusSchema,
  CryptoTicker: cryptoTickerSchema,
  CryptoPaymentOption: cryptoPaymentOptionSchema,
  CheckoutUser: checkoutUserSchema,
  LineItem: lineItemSchema,
  PublicSession: publicSessionViewSchema,
  MerchantSession: merchantSessionViewSchema,
  LinkSession: linkSessionViewSchema,
  BindResponse: bindResponseSchema,
  EventType: eventTypeSchema,
  Event: eventEnvelopeSchema,
  EventPage: eventPageSchema,
  WebhookEndpoint: webhookEndpointViewSchema,
  WebhookEndpointWithSecret: webhookEndpointWithSecretSchema,
  WebhookEndpointList: webhookEndpointListSchema,
  PaymentLink: paymentLinkViewSchema,
  PaymentLinkList: paymentLinkListSchema,
  Refund: refundViewSchema,
  RefundList: refundListSchema,
} satisfies Record<string, z.ZodType>)) {
  COMPONENTS.add(schema, { id });
}

/** The component name of a registered response schema; undefined for one a route describes inline. */
export const componentName = (schema: z.ZodType): string | undefined => COMPONENTS.get(schema)?.id;

export const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });

const SIGNATURE_SCHEME =
  'Hex HMAC-SHA256 keyed with the sk_… secret. POST /checkout-sessions: of `{timestamp}.{rawBody}`. ' +
  'Every other signed operation: of `{timestamp}.{METHOD}.{path?query}.{rawBody}`, where the path and query are ' +
  'exactly as in the request line (as sent, not decoded; without `?` when there is no query) and the body is empty ' +
  'for GET and DELETE. Each signature is accepted once within its ±5 minute window: the same signature again, on ' +
  'any instance, answers 401 (sign every request, and every retry, afresh), except a create sent again verbatim ' +
  'with the Idempotency-Key of the session that signature was answered with: the same 201.';

export function components(): Json {
  return {
    securitySchemes: {
      ServiceKey: { type: 'apiKey', in: 'header', name: 'X-Service-Key', description: 'The pk_… key' },
      ServiceTimestamp: {
        type: 'apiKey',
        in: 'header',
        name: 'X-Service-Timestamp',
        description: 'Unix time in milliseconds, within ±5 minutes',
      },
      ServiceSignature: { type: 'apiKey', in: 'header', name: 'X-Service-Signature', description: SIGNATURE_SCHEME },
    },
    schemas: componentSchemasOf(COMPONENTS),
  };
}
