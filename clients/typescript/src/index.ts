/**
 * @kassa/client — a dependency-free client for Kassa's REST API (Node 20+:
 * node:crypto and the global fetch). Signs merchant calls (the body for create,
 * method, path and query too for the others: docs/api/rest.md#signing-a-merchant-call),
 * sends idempotency keys on create, pages the events feed and verifies webhooks.
 *
 * The wire types are generated from Kassa's OpenAPI document (types.ts, `npm run
 * client:types` in the Kassa checkout); the names below are this package's own.
 */
export { KassaClient, type KassaClientOptions } from './client.js';
export { KassaError, KassaNetworkError, WebhookVerificationError, type KassaErrorCode } from './errors.js';
export { sign, signRequest, verifyWebhook, type VerifyWebhookInput } from './signing.js';
export type {
  CheckoutStatus,
  CheckoutUser,
  CryptoTicker,
  EventPage,
  EventType,
  MerchantSession,
  PaymentLink,
  PublicSession,
  Refund,
  WebhookEndpoint,
  WebhookEndpointWithSecret,
  // Under the names this package has always used:
  BindResponse as BindResult,
  BindTransactionRequest as BindTransactionInput,
  CreateCheckoutRequest as CreateCheckoutSessionInput,
  CreateRefundRequest as CreateRefundInput,
  CreateWebhookEndpointRequest as CreateWebhookEndpointInput,
  CryptoPaymentOption as CryptoOption,
  Error as ErrorBody,
  Event as KassaEvent,
  LineItem as SessionItem,
  UpdateWebhookEndpointRequest as UpdateWebhookEndpointInput,
} from './types.js';
