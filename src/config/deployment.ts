import type { Network } from '../domain/shared/networks.js';
import type { TrustProxySetting } from '../domain/organisations/request-guard-ports.js';
import type { EnvReader } from './env-reader.js';
import type { KassaEnv } from './kassa-env.js';
import type { RatesSourceName } from './rates.js';
import { redactUrl } from './redact-url.js';

/** How this instance is exposed and started (docs/operations.md#running-in-production). */
export interface DeploymentConfig {
  /** Interface to listen on (HOST): 127.0.0.1 outside production unless set, 0.0.0.0 in production. */
  readonly host: string;
  /**
   * Apply pending migrations when a process opens the database (KASSA_MIGRATE_ON_START); off in production, where
   * `kassa migrate` does it.
   */
  readonly migrateOnStart: boolean;
  readonly metrics: MetricsConfig;
}

/** Who may read GET /metrics (src/metrics.ts). */
export interface MetricsConfig {
  /** The bearer token /metrics asks for (KASSA_METRICS_TOKEN), wherever it is served; null = none. */
  readonly token: string | null;
  /** A separate listener that serves only /metrics (KASSA_METRICS_PORT), on `host`; null = none. */
  readonly port: number | null;
  /** Interface of that listener (KASSA_METRICS_HOST, default 127.0.0.1). */
  readonly host: string;
  /**
   * Whether the main HTTP port serves /metrics: not with a separate port; without a token, only
   * outside production and while the main port listens on loopback alone (404 otherwise).
   */
  readonly onMainPort: boolean;
}

const METRICS_TOKEN_MIN_LENGTH = 16;

export function readDeploymentConfig(read: EnvReader, kassaEnv: KassaEnv): DeploymentConfig {
  const production = kassaEnv === 'production';
  const token = read.optional('KASSA_METRICS_TOKEN');
  if (token !== null && (token.length < METRICS_TOKEN_MIN_LENGTH || /\s/.test(token))) {
    read.problems.push(
      `KASSA_METRICS_TOKEN must be at least ${METRICS_TOKEN_MIN_LENGTH} characters without spaces (e.g. \`openssl ` +
        `rand -hex 32\`)`,
    );
  }
  const metricsPort =
    read.optional('KASSA_METRICS_PORT') === null ? null : read.integer('KASSA_METRICS_PORT', 0, 0, 65535);
  const host = read.string('HOST', production ? '0.0.0.0' : '127.0.0.1');
  return {
    host,
    migrateOnStart: read.boolean('KASSA_MIGRATE_ON_START', !production),
    metrics: {
      token,
      port: metricsPort,
      host: read.string('KASSA_METRICS_HOST', '127.0.0.1'),
      // Anyone who reaches the main port could read it otherwise (development with HOST=0.0.0.0 too).
      onMainPort: metricsPort === null && (token !== null || (!production && isLoopbackOnly(host))),
    },
  };
}

/** Whether a listener on `host` is reachable from this machine only: 127.0.0.0/8, ::1 or localhost. */
export function isLoopbackOnly(host: string): boolean {
  const bare = host.replace(/^\[(.*)\]$/, '$1').toLowerCase();
  return bare === 'localhost' || bare === '::1' || /^(?:::ffff:)?127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(bare);
}

/** The `local` sandbox (anvil, chain id 31337) is the one network that is not a mainnet: anyone can mint its tokens. */
export const SANDBOX_CHAIN_ID = 31337;

export function isMainnet(network: Network): boolean {
  return network.chainId !== SANDBOX_CHAIN_ID;
}

export interface SafetyFacts {
  readonly env: KassaEnv;
  readonly networks: readonly Network[];
  readonly rateSources: readonly RatesSourceName[];
  readonly demo: boolean;
  readonly sandbox: boolean;
  readonly databaseUrl: string | null;
  /** The interface the HTTP server listens on (HOST). */
  readonly host: string;
}

/**
 * Combinations Kassa refuses to start with, one message each; the rules by environment are the table in
 * docs/operations.md#running-in-production.
 */
export function unsafeCombinations(read: EnvReader, facts: SafetyFacts): string[] {
  const problems: string[] = [];
  const allowEmbedded = read.boolean('KASSA_ALLOW_EMBEDDED_IN_PRODUCTION', false);
  const mainnets = facts.networks.filter(isMainnet).map((network) => network.slug);
  const production = facts.env === 'production';
  if (mainnets.length > 0 && facts.rateSources.includes('static') && facts.env !== 'test') {
    problems.push(
      `KASSA_RATES_SOURCES: the static source (fixture rates that never go stale) cannot price payments on mainnet ` +
        `networks (${mainnets.join(', ')}); ` +
        'use coingecko and/or coinbase, or enable only the local sandbox network',
    );
  }
  if (mainnets.length > 0 && facts.demo) {
    problems.push(
      `KASSA_DEMO: the demo organisation's wallet is anvil's public test account, whose private key is published, so ` +
        `it cannot be used beside mainnet networks (${mainnets.join(', ')}); ` +
        'set KASSA_DEMO=false or enable only the local sandbox network',
    );
  }
  if (facts.env === 'development' && mainnets.length > 0 && !isLoopbackOnly(facts.host)) {
    problems.push(
      `HOST: development mode (KASSA_ENV unset) relaxes what production checks (webhook addresses, the master key, ` +
        `CHECKOUT_BASE_URL), so with mainnet networks (${mainnets.join(', ')}) it serves this machine only, not ` +
        `HOST=${facts.host}; set KASSA_ENV=production, or HOST=127.0.0.1`,
    );
  }
  if (production && facts.networks.some((network) => !isMainnet(network))) {
    problems.push(
      'KASSA_NETWORKS: the local sandbox network cannot be enabled in production (anyone can mint its test tokens); ' +
        'enable mainnet networks only',
    );
  } else if (production && facts.sandbox) {
    problems.push('KASSA_SANDBOX: the sandbox chain cannot run in production; set KASSA_SANDBOX=false');
  }
  if (production) {
    const checkoutBaseUrl = read.optional('CHECKOUT_BASE_URL');
    if (checkoutBaseUrl === null) {
      problems.push(
        'CHECKOUT_BASE_URL is required in production: the public https URL payers open (e.g. https://pay.example.com)',
      );
    } else if (!/^https:\/\//i.test(checkoutBaseUrl)) {
      problems.push(
        `CHECKOUT_BASE_URL must use https in production, so payers see the wallet to pay untampered (got ` +
          `"${redactUrl(checkoutBaseUrl)}")`,
      );
    }
    if (facts.databaseUrl === null && !allowEmbedded) {
      problems.push(
        'DATABASE_URL is required in production (PostgreSQL): the embedded database serves one connection and one ' +
          'instance. ' +
          'To run on it anyway, set KASSA_ALLOW_EMBEDDED_IN_PRODUCTION=true',
      );
    }
  }
  return problems;
}

/** What production was told to relax, one warning line each at start: an operator may mean it, but never unnoticed. */
export function productionOptIns(config: {
  readonly env: KassaEnv;
  readonly webhooks: { readonly allowPrivate: boolean };
  readonly graphqlSandbox: boolean;
  readonly graphqlIntrospection: boolean;
  readonly requestGuard: {
    readonly trustProxy: TrustProxySetting;
    readonly rateLimits: Readonly<Record<string, unknown>>;
  };
}): string[] {
  if (config.env !== 'production') return [];
  const warnings: string[] = [];
  if (config.webhooks.allowPrivate)
    warnings.push('KASSA_WEBHOOK_ALLOW_PRIVATE=true: webhook URLs may reach private and loopback addresses (SSRF)');
  if (config.graphqlSandbox) warnings.push('KASSA_GRAPHQL_SANDBOX=true: Apollo Sandbox is served on GET /graphql');
  else if (config.graphqlIntrospection)
    warnings.push('KASSA_GRAPHQL_INTROSPECTION=true: anyone can read the GraphQL schema');
  if (config.requestGuard.trustProxy === true)
    warnings.push(
      'TRUST_PROXY=true: every X-Forwarded-For is believed, so any client can choose the address rate limits count ' +
        '(name the proxies, or their number, instead)',
    );
  const off = Object.entries(config.requestGuard.rateLimits)
    .filter(([, rule]) => rule === null)
    .map(([name]) => `KASSA_RATE_LIMIT_${name.toUpperCase()}`);
  if (off.length > 0) warnings.push(`${off.join(', ')}=off: no limit`);
  return warnings;
}
