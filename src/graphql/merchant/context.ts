import type { DomainContext } from '../../domain/context.js';
import type { Principal } from '../../domain/dashboard/sign-in.js';
import type { WebhookPost } from '../../domain/dashboard/webhooks/webhooks.js';

/** What the merchant schema's resolvers get: the domain and the signed-in person (checked before execution). */
export interface MerchantContext {
  readonly domain: DomainContext;
  readonly principal: Principal;
  /** The client's address, for the audit log. */
  readonly clientAddress: string;
  /** Sends a test event to a webhook endpoint; absent where Kassa sends no webhooks. */
  readonly postWebhook?: WebhookPost;
}
