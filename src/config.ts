import { randomBytes } from 'node:crypto';
import { existsSync, linkSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { isAssetTicker } from './domain/assets.js';
import type { Network } from './domain/networks.js';

/** Where the package lives: config/ and prisma/ are resolved from here, not from the cwd. */
export const PACKAGE_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

export type KassaEnv = 'development' | 'test' | 'production';
export type RatesSourceName = 'static' | 'coingecko' | 'coinbase';

export interface RatesConfig {
  readonly sources: readonly RatesSourceName[];
  readonly staticFile: string;
  readonly staticJson: string | null;
  readonly coingeckoUrl: string;
  readonly coingeckoApiKey: string | null;
  readonly coinbaseUrl: string;
  readonly maxAgeSeconds: number;
  readonly refreshSeconds: number;
  readonly timeoutMs: number;
}

export interface Config {
  readonly env: KassaEnv;
  readonly port: number;
  readonly host: string;
  readonly databaseUrl: string | null;
  readonly dataDir: string;
  /** 32-byte key for AES-256-GCM encryption of API secrets. */
  readonly masterKey: Buffer;
  readonly checkoutBaseUrl: string;
  readonly networks: readonly Network[];
  readonly rates: RatesConfig;
  readonly inflightGraceMinutes: number;
  readonly expirySweepSeconds: number;
  readonly idempotencyTtlHours: number;
  readonly demo: boolean;
  readonly logLevel: string;
  readonly watcher: WatcherConfig;
  /** Development: start (or reuse) the offline anvil chain for the `local` network and deploy its tokens. */
  readonly sandbox: boolean;
  /** GraphQL schema introspection (KASSA_GRAPHQL_INTROSPECTION); on outside production by default. */
  readonly graphqlIntrospection: boolean;
  /** Apollo Sandbox landing page on GET /graphql (KASSA_GRAPHQL_SANDBOX); on outside production by default. */
  readonly graphqlSandbox: boolean;
  /** Most GraphQL WebSocket connections one instance holds (KASSA_GRAPHQL_MAX_CONNECTIONS); more are refused with 503. */
  readonly graphqlMaxConnections: number;
  readonly webhooks: WebhookConfig;
}

export interface WatcherConfig {
  readonly enabled: boolean;
  readonly intervalMs: number;
  readonly maxBlocksPerRange: number;
  readonly backfillBlocks: number;
  readonly leaseSeconds: number;
  readonly rpcTimeoutMs: number;
}

/** Webhook delivery (src/webhooks, README "Webhooks and events"). */
export interface WebhookConfig {
  /** Timeout of one delivery attempt. */
  readonly timeoutMs: number;
  /** Exponential backoff with full jitter: attempt n waits random(0, min(max, base × 2^(n-1))). */
  readonly retryBaseMs: number;
  readonly retryMaxMs: number;
  /** After this long since the event, a delivery that still fails is marked failed. */
  readonly giveUpHours: number;
  /** How often an instance looks for events to fan out and deliveries that are due. */
  readonly pollMs: number;
  /** Allow endpoints on loopback, private, link-local and other non-public addresses (SSRF guard off). */
  readonly allowPrivate: boolean;
  /** How long the previous secret keeps signing after a rotation. */
  readonly secretOverlapHours: number;
  /** How long a gap in the outbox sequence may stay open before it is taken as a rolled-back transaction. */
  readonly outboxGapSeconds: number;
}

export class ConfigError extends Error {
  constructor(readonly problems: readonly string[]) {
    super(`Invalid configuration:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
    this.name = 'ConfigError';
  }
}

type Env = Readonly<Record<string, string | undefined>>;

/** Reads and validates the environment once; every problem is reported together. */
export function loadConfig(env: Env = process.env): Config {
  const problems: string[] = [];
  const read = new EnvReader(env, problems);

  const kassaEnv = read.oneOf('KASSA_ENV', ['development', 'test', 'production'] as const, defaultEnv(env));
  const production = kassaEnv === 'production';
  const port = read.integer('PORT', 3000, 0, 65535);
  const host = read.string('HOST', '0.0.0.0');
  const databaseUrl = read.optional('DATABASE_URL');
  if (databaseUrl && !/^postgres(ql)?:\/\//.test(databaseUrl)) problems.push('DATABASE_URL must start with postgresql://');
  // Relative to the Kassa checkout, not the cwd: `npx kassa` from a subfolder must find the same database.
  const dataDir = path.resolve(PACKAGE_ROOT, read.string('KASSA_DATA_DIR', '.kassa'));
  const checkoutBaseUrl = read.url('CHECKOUT_BASE_URL', `http://localhost:${port}`).replace(/\/+$/, '');

  const masterKey = readMasterKey(env, production, dataDir, problems);
  const networks = readNetworks(read, production, problems);

  const sources = read.list('KASSA_RATES_SOURCES', production ? ['coingecko'] : ['static']);
  for (const source of sources) {
    if (!['static', 'coingecko', 'coinbase'].includes(source)) {
      problems.push(`KASSA_RATES_SOURCES: unknown source "${source}" (known: static, coingecko, coinbase)`);
    }
  }
  const rates: RatesConfig = {
    sources: sources as RatesSourceName[],
    staticFile: path.resolve(read.string('KASSA_RATES_FILE', path.join(PACKAGE_ROOT, 'config/rates.static.json'))),
    staticJson: read.optional('KASSA_RATES_JSON'),
    coingeckoUrl: read.url('KASSA_COINGECKO_URL', 'https://api.coingecko.com/api/v3').replace(/\/+$/, ''),
    coingeckoApiKey: read.optional('KASSA_COINGECKO_API_KEY'),
    coinbaseUrl: read.url('KASSA_COINBASE_URL', 'https://api.coinbase.com').replace(/\/+$/, ''),
    maxAgeSeconds: read.integer('KASSA_RATES_MAX_AGE_SECONDS', 120, 1, 86400),
    refreshSeconds: read.integer('KASSA_RATES_REFRESH_SECONDS', 30, 1, 86400),
    timeoutMs: read.integer('KASSA_RATES_TIMEOUT_MS', 5000, 100, 60000),
  };

  const config: Config = {
    env: kassaEnv,
    port,
    host,
    databaseUrl,
    dataDir,
    masterKey: masterKey ?? Buffer.alloc(32),
    checkoutBaseUrl,
    networks,
    rates,
    inflightGraceMinutes: read.integer('KASSA_INFLIGHT_GRACE_MINUTES', 60, 0, 10080),
    expirySweepSeconds: read.integer('KASSA_EXPIRY_SWEEP_SECONDS', 15, 1, 3600),
    idempotencyTtlHours: read.integer('KASSA_IDEMPOTENCY_TTL_HOURS', 48, 24, 8760),
    demo: read.boolean('KASSA_DEMO', kassaEnv === 'development'),
    logLevel: read.oneOf('LOG_LEVEL', ['trace', 'debug', 'info', 'warn', 'error', 'fatal', 'silent'] as const, 'info'),
    watcher: {
      enabled: read.boolean('KASSA_WATCHER', true),
      intervalMs: read.integer('KASSA_WATCH_INTERVAL_MS', kassaEnv === 'development' ? 1000 : 4000, 20, 600_000),
      maxBlocksPerRange: read.integer('KASSA_SCAN_MAX_BLOCKS', 1000, 1, 100_000),
      backfillBlocks: read.integer('KASSA_SCAN_BACKFILL_BLOCKS', 100, 0, 1_000_000),
      leaseSeconds: read.integer('KASSA_WATCH_LEASE_SECONDS', 30, 2, 3600),
      rpcTimeoutMs: read.integer('KASSA_RPC_TIMEOUT_MS', 10_000, 100, 120_000),
    },
    sandbox: read.boolean('KASSA_SANDBOX', kassaEnv === 'development' && networks.some((n) => n.slug === 'local')),
    ...readGraphql(read, production, problems),
    webhooks: {
      timeoutMs: read.integer('KASSA_WEBHOOK_TIMEOUT_MS', 10_000, 100, 60_000),
      retryBaseMs: read.integer('KASSA_WEBHOOK_RETRY_BASE_MS', 10_000, 10, 3_600_000),
      retryMaxMs: read.integer('KASSA_WEBHOOK_RETRY_MAX_MS', 3_600_000, 10, 86_400_000),
      giveUpHours: read.number('KASSA_WEBHOOK_GIVE_UP_HOURS', 72, 0.0001, 720),
      pollMs: read.integer('KASSA_WEBHOOK_POLL_MS', 1_000, 10, 60_000),
      allowPrivate: read.boolean('KASSA_WEBHOOK_ALLOW_PRIVATE', !production),
      secretOverlapHours: read.number('KASSA_WEBHOOK_SECRET_OVERLAP_HOURS', 24, 0, 720),
      outboxGapSeconds: read.integer('KASSA_OUTBOX_GAP_SECONDS', 60, 1, 3600),
    },
  };
  if (problems.length > 0) throw new ConfigError(problems);
  return Object.freeze(config);
}

function readGraphql(read: EnvReader, production: boolean, problems: string[]) {
  const graphqlSandbox = read.boolean('KASSA_GRAPHQL_SANDBOX', !production);
  // Sandbox explores the schema by introspection, so enabling it enables introspection unless refused outright.
  const graphqlIntrospection = read.boolean('KASSA_GRAPHQL_INTROSPECTION', !production || graphqlSandbox);
  if (graphqlSandbox && !graphqlIntrospection) {
    problems.push('KASSA_GRAPHQL_SANDBOX needs KASSA_GRAPHQL_INTROSPECTION: Apollo Sandbox reads the schema by introspection');
  }
  const graphqlMaxConnections = read.integer('KASSA_GRAPHQL_MAX_CONNECTIONS', 1000, 1, 1_000_000);
  return { graphqlSandbox, graphqlIntrospection, graphqlMaxConnections };
}

function defaultEnv(env: Env): KassaEnv {
  const nodeEnv = env.NODE_ENV;
  return nodeEnv === 'production' || nodeEnv === 'test' ? nodeEnv : 'development';
}

function readMasterKey(env: Env, production: boolean, dataDir: string, problems: string[]): Buffer | null {
  const given = env.KASSA_MASTER_KEY?.trim();
  if (given) {
    const key = decodeKey(given);
    if (!key) problems.push('KASSA_MASTER_KEY must be 32 bytes, as 64 hex characters or base64');
    return key;
  }
  if (production) {
    problems.push('KASSA_MASTER_KEY is required in production (32 bytes as hex or base64, e.g. `openssl rand -hex 32`)');
    return null;
  }
  // Development and tests: one key per data dir, created on first use and kept.
  const file = path.join(dataDir, 'master.key');
  if (!existsSync(file)) {
    mkdirSync(dataDir, { recursive: true });
    // Written whole to a temp file, then linked into place: a process starting at
    // the same moment sees either no key or the complete key, never a half-written one.
    const temp = `${file}.${process.pid}.${randomBytes(4).toString('hex')}`;
    try {
      writeFileSync(temp, randomBytes(32).toString('hex') + '\n', { mode: 0o600 });
      linkSync(temp, file);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    } finally {
      rmSync(temp, { force: true });
    }
  }
  const key = decodeKey(readFileSync(file, 'utf8').trim());
  if (!key) problems.push(`${file} does not hold a 32-byte key`);
  return key;
}

function decodeKey(text: string): Buffer | null {
  if (/^[0-9a-fA-F]{64}$/.test(text)) return Buffer.from(text, 'hex');
  const buffer = Buffer.from(text, 'base64');
  return buffer.length === 32 ? buffer : null;
}

interface RegistryFile {
  networks: Array<Omit<Network, 'rpcUrls'> & { rpcUrls?: string[] }>;
}

function readNetworks(read: EnvReader, production: boolean, problems: string[]): Network[] {
  const file = path.resolve(read.string('KASSA_NETWORKS_FILE', path.join(PACKAGE_ROOT, 'config/networks.json')));
  let registry: RegistryFile;
  try {
    registry = JSON.parse(readFileSync(file, 'utf8')) as RegistryFile;
  } catch (error) {
    problems.push(`KASSA_NETWORKS_FILE: cannot read ${file}: ${(error as Error).message}`);
    return [];
  }
  const enabled = read.list('KASSA_NETWORKS', production ? ['ethereum', 'bsc'] : ['local']);
  const networks: Network[] = [];
  for (const slug of enabled) {
    const entry = registry.networks.find((network) => network.slug === slug);
    if (!entry) {
      problems.push(`KASSA_NETWORKS: unknown network "${slug}" (known: ${registry.networks.map((n) => n.slug).join(', ')})`);
      continue;
    }
    const upper = slug.toUpperCase().replace(/[^A-Z0-9]/g, '_');
    const rpcUrls = read.list(`KASSA_RPC_URLS_${upper}`, entry.rpcUrls ?? []);
    for (const url of rpcUrls) {
      if (!/^(https?|wss?):\/\/[^\s/]+/.test(url)) {
        problems.push(`KASSA_RPC_URLS_${upper} must be comma-separated http(s) or ws(s) URLs (got "${url}")`);
      }
    }
    const confirmations = read.integer(`KASSA_CONFIRMATIONS_${upper}`, entry.confirmations, 0, 10000);
    if (entry.nativeAsset !== null && !isAssetTicker(entry.nativeAsset)) {
      problems.push(`${file}: network ${slug} has an unknown native asset ${entry.nativeAsset}`);
    }
    for (const token of entry.tokens) {
      if (!isAssetTicker(token.ticker) || !/^0x[0-9a-fA-F]{40}$/.test(token.address)) {
        problems.push(`${file}: network ${slug} has an invalid token entry ${JSON.stringify(token)}`);
      }
    }
    networks.push(Object.freeze({ ...entry, rpcUrls, confirmations, tokens: Object.freeze([...entry.tokens]) }));
  }
  if (networks.length === 0 && problems.length === 0) problems.push('KASSA_NETWORKS: enable at least one network');
  return networks;
}

class EnvReader {
  constructor(
    private readonly env: Env,
    private readonly problems: string[],
  ) {}

  optional(name: string): string | null {
    const value = this.env[name]?.trim();
    return value ? value : null;
  }

  string(name: string, fallback: string): string {
    return this.optional(name) ?? fallback;
  }

  integer(name: string, fallback: number, min: number, max: number): number {
    const value = this.optional(name);
    if (value === null) return fallback;
    if (!/^-?\d+$/.test(value) || Number(value) < min || Number(value) > max) {
      this.problems.push(`${name} must be a whole number from ${min} to ${max} (got "${value}")`);
      return fallback;
    }
    return Number(value);
  }

  number(name: string, fallback: number, min: number, max: number): number {
    const value = this.optional(name);
    if (value === null) return fallback;
    if (!/^\d+(\.\d+)?$/.test(value) || Number(value) < min || Number(value) > max) {
      this.problems.push(`${name} must be a number from ${min} to ${max} (got "${value}")`);
      return fallback;
    }
    return Number(value);
  }

  boolean(name: string, fallback: boolean): boolean {
    const value = this.optional(name)?.toLowerCase();
    if (value === undefined || value === null) return fallback;
    if (['1', 'true', 'yes', 'on'].includes(value)) return true;
    if (['0', 'false', 'no', 'off'].includes(value)) return false;
    this.problems.push(`${name} must be true or false (got "${value}")`);
    return fallback;
  }

  oneOf<T extends string>(name: string, allowed: readonly T[], fallback: T): T {
    const value = this.optional(name);
    if (value === null) return fallback;
    if (!(allowed as readonly string[]).includes(value)) {
      this.problems.push(`${name} must be one of ${allowed.join(', ')} (got "${value}")`);
      return fallback;
    }
    return value as T;
  }

  url(name: string, fallback: string): string {
    const value = this.string(name, fallback);
    try {
      const url = new URL(value);
      if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new Error('not http');
    } catch {
      this.problems.push(`${name} must be an http(s) URL (got "${value}")`);
    }
    return value;
  }

  list(name: string, fallback: readonly string[]): string[] {
    const value = this.optional(name);
    if (value === null) return [...fallback];
    return value.split(',').map((item) => item.trim()).filter(Boolean);
  }
}
