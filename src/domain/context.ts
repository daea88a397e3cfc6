import type { Network } from './shared/networks.js';
import type { ChainReader } from './payments/chain-ports.js';
import type { Store } from './ports.js';
import type { SignatureReplayCache, TrustProxySetting } from './organisations/request-guard-ports.js';
import type { RatesProvider } from './rates/rates-ports.js';
import type { WebhookSettings } from './webhooks/webhook-settings.js';
import type { HostResolver } from './webhooks/webhook-url.js';
import type { MasterKeys } from './shared/secret-box.js';
import type { Throttle } from './organisations/throttle.js';
import type { DepositChain } from './dashboard/deposits/deposit-ports.js';

/** Everything a domain use-case depends on, wired once in src/app.ts. */
export interface DomainContext {
  readonly store: Store;
  readonly rates: RatesProvider;
  /** The networks enabled in config, in registry order. */
  readonly networks: readonly Network[];
  readonly checkoutBaseUrl: string;
  readonly inflightGraceMinutes: number;
  /** How long a quote is honoured before an unpaid session is re-priced (KASSA_QUOTE_TTL_MINUTES). */
  readonly quoteTtlMinutes: number;
  /**
   * How many unique amounts (whole smallest units above the base) one total may take per asset and wallet
   * (KASSA_UNIQUE_AMOUNT_STEPS, docs/payment-rules.md, rule 4): a create past them is refused.
   */
  readonly uniqueAmountSteps: number;
  /** Asks the networks about a bound transaction at bind time; absent where no chain is reachable. */
  readonly chain?: ChainReader;
  /** Deposit addresses' balances and collects for the dashboard (docs/dashboard.md#deposits-and-collecting). */
  readonly deposits?: DepositChain;
  /** Keys for AES-256-GCM encryption of stored secrets: the current one, and previous ones during a rotation. */
  readonly masterKey: MasterKeys;
  readonly clock: () => Date;
  /** Webhook policy: SSRF rule, retries, secret overlap. */
  readonly webhooks: WebhookSettings;
  /** How webhook URLs' host names are resolved for the SSRF rule (DNS, src/webhooks/dns-host-resolver.ts). */
  readonly resolveHost: HostResolver;
  /** Replay cache of merchant signatures, rate limits and the client-address rule (docs/api/rest.md#rate-limits). */
  readonly requestGuard: RequestGuard;
}

/** What the routes, GraphQL and src/app.ts guard requests with; built once per process in src/runtime.ts. */
export interface RequestGuard {
  readonly signatures: SignatureReplayCache;
  readonly throttle: Throttle;
  readonly trustProxy: TrustProxySetting;
}
