import type { Network } from './networks.js';
import type { Store } from './ports.js';
import type { RatesProvider } from '../rates/rates-source.js';
import type { WebhookConfig } from '../config.js';

/** Everything a domain use-case depends on, wired once in src/app.ts. */
export interface DomainContext {
  readonly store: Store;
  readonly rates: RatesProvider;
  /** The networks enabled in config, in registry order. */
  readonly networks: readonly Network[];
  readonly checkoutBaseUrl: string;
  readonly inflightGraceMinutes: number;
  /** Key for AES-256-GCM encryption of API secrets. */
  readonly masterKey: Buffer;
  readonly clock: () => Date;
  /** Webhook policy: SSRF rule, retries, secret overlap. */
  readonly webhooks: WebhookConfig;
}
