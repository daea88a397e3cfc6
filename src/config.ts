import path from 'node:path';
import type { Network } from './domain/shared/networks.js';
import { EnvReader, type Env } from './config/env-reader.js';
import { readDeploymentConfig, unsafeCombinations, type DeploymentConfig } from './config/deployment.js';
import { readGraphqlConfig, type GraphqlConfig } from './config/graphql.js';
import { readKassaEnv, type KassaEnv } from './config/kassa-env.js';
import { readMasterKey, readPreviousMasterKeys } from './config/master-key.js';
import { readNetworks } from './config/network-registry.js';
import { readPaymentsConfig, type PaymentsConfig } from './config/payments.js';
import { PACKAGE_ROOT } from './config/package-root.js';
import { readRatesConfig, type RatesConfig } from './config/rates.js';
import { readRequestGuardConfig, type RequestGuardConfig } from './config/request-guard.js';
import { readWatcherConfig, type WatcherConfig } from './config/watcher.js';
import { readWebhookConfig, type WebhookConfig } from './config/webhooks.js';

export { PACKAGE_ROOT };
export type { RatesConfig, RatesSourceName } from './config/rates.js';
export type { WatcherConfig } from './config/watcher.js';
export type { WebhookConfig } from './config/webhooks.js';
export type { PaymentsConfig } from './config/payments.js';
export type { MetricsConfig } from './config/deployment.js';

export type { KassaEnv } from './config/kassa-env.js';

/**
 * Everything Kassa reads from the environment, validated once at start. Each
 * concern reads its own variables in src/config/; this file composes them.
 */
export interface Config extends GraphqlConfig, DeploymentConfig {
  readonly env: KassaEnv;
  readonly port: number;
  readonly databaseUrl: string | null;
  readonly dataDir: string;
  /** 32-byte key for AES-256-GCM encryption of API secrets. */
  readonly masterKey: Buffer;
  /** Older master keys that still open stored secrets during a rotation (KASSA_MASTER_KEY_PREVIOUS). */
  readonly previousMasterKeys: readonly Buffer[];
  /** KASSA_SECRETS_V1: whether stored secrets in the v1 format (no key id, no row binding) still open. */
  readonly secretsV1: 'accept' | 'refuse';
  readonly checkoutBaseUrl: string;
  readonly networks: readonly Network[];
  readonly rates: RatesConfig;
  readonly inflightGraceMinutes: number;
  readonly expirySweepSeconds: number;
  readonly idempotencyTtlHours: number;
  /** Sessions each `kassa serve` keeps in memory for reads (docs/benchmarks.md); 0 turns the cache off. */
  readonly sessionCacheSize: number;
  readonly demo: boolean;
  readonly logLevel: string;
  readonly watcher: WatcherConfig;
  /** Development: start (or reuse) the offline anvil chain for the `local` network and deploy its tokens. */
  readonly sandbox: boolean;
  readonly webhooks: WebhookConfig;
  readonly payments: PaymentsConfig;
  readonly requestGuard: RequestGuardConfig;
}

export class ConfigError extends Error {
  constructor(readonly problems: readonly string[]) {
    super(`Invalid configuration:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
    this.name = 'ConfigError';
  }
}

/** Reads and validates the environment once; every problem is reported together. */
export function loadConfig(env: Env = process.env): Config {
  const problems: string[] = [];
  const read = new EnvReader(env, problems);

  const kassaEnv = readKassaEnv(read, env);
  const production = kassaEnv === 'production';
  const port = read.integer('PORT', 3000, 0, 65535);
  const databaseUrl = read.optional('DATABASE_URL');
  if (databaseUrl && !/^postgres(ql)?:\/\//.test(databaseUrl))
    problems.push('DATABASE_URL must start with postgresql://');
  // Relative to the Kassa checkout, not the cwd: `npx kassa` from a subfolder must find the same database.
  const dataDir = path.resolve(PACKAGE_ROOT, read.string('KASSA_DATA_DIR', '.kassa'));
  const checkoutBaseUrl = read.url('CHECKOUT_BASE_URL', `http://localhost:${port}`).replace(/\/+$/, '');

  const masterKey = readMasterKey(env, production, dataDir, problems);
  const networks = readNetworks(read, production);

  const config: Config = {
    env: kassaEnv,
    port,
    ...readDeploymentConfig(read, kassaEnv),
    databaseUrl,
    dataDir,
    masterKey: masterKey ?? Buffer.alloc(32),
    previousMasterKeys: readPreviousMasterKeys(env, problems),
    secretsV1: read.oneOf('KASSA_SECRETS_V1', ['accept', 'refuse'] as const, 'accept'),
    checkoutBaseUrl,
    networks,
    rates: readRatesConfig(read, production),
    inflightGraceMinutes: read.integer('KASSA_INFLIGHT_GRACE_MINUTES', 60, 0, 10080),
    expirySweepSeconds: read.integer('KASSA_EXPIRY_SWEEP_SECONDS', 15, 1, 3600),
    idempotencyTtlHours: read.integer('KASSA_IDEMPOTENCY_TTL_HOURS', 48, 24, 8760),
    sessionCacheSize: read.integer('KASSA_SESSION_CACHE_SIZE', 10_000, 0, 1_000_000),
    demo: read.boolean('KASSA_DEMO', kassaEnv === 'development'),
    logLevel: read.oneOf('LOG_LEVEL', ['trace', 'debug', 'info', 'warn', 'error', 'fatal', 'silent'] as const, 'info'),
    watcher: readWatcherConfig(read, kassaEnv === 'development'),
    sandbox: read.boolean('KASSA_SANDBOX', kassaEnv === 'development' && networks.some((n) => n.slug === 'local')),
    ...readGraphqlConfig(read, production),
    webhooks: readWebhookConfig(read, production),
    payments: readPaymentsConfig(read),
    requestGuard: readRequestGuardConfig(read),
  };
  problems.push(
    ...unsafeCombinations(read, {
      env: kassaEnv,
      networks,
      rateSources: config.rates.sources,
      demo: config.demo,
      sandbox: config.sandbox,
      databaseUrl,
      host: config.host,
    }),
  );
  if (problems.length > 0) throw new ConfigError(problems);
  return Object.freeze(config);
}
