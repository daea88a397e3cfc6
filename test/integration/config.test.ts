import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Worker } from 'node:worker_threads';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { ConfigError, loadConfig, PACKAGE_ROOT } from '../../src/config.js';
import { productionOptIns } from '../../src/config/deployment.js';
import {
  assertCliBuilt,
  hasStackTrace,
  killAllKassaProcesses,
  runKassa,
  runKassaInProcess,
} from '../support/cli-process.js';

/** loadConfig (docs/operations.md#configuration: only from the environment, validated at start with clear errors). */

const dirs: string[] = [];
function dataDir(): string {
  const dir = mkdtempSync(path.join(tmpdir(), 'kassa-config-'));
  dirs.push(dir);
  return dir;
}

type Env = Record<string, string | undefined>;
const HEX_KEY = randomBytes(32).toString('hex');

/** A test-mode environment of its own data dir, plus `extra`. */
const env = (extra: Env = {}): Env => ({ KASSA_ENV: 'test', KASSA_DATA_DIR: dataDir(), ...extra });

/** The least a production start needs (docs/operations.md#running-in-production). */
const productionEnv = (extra: Env = {}): Env => ({
  KASSA_ENV: 'production',
  KASSA_DATA_DIR: dataDir(),
  KASSA_MASTER_KEY: HEX_KEY,
  CHECKOUT_BASE_URL: 'https://pay.example.com',
  DATABASE_URL: 'postgresql://kassa@db.example/kassa',
  KASSA_RPC_URLS_ETHEREUM: 'https://ethereum.rpc.example',
  KASSA_RPC_URLS_BSC: 'https://bsc.rpc.example',
  ...extra,
});

function problemsOf(environment: Env): string[] {
  try {
    loadConfig(environment);
  } catch (error) {
    if (error instanceof ConfigError) return [...error.problems];
    throw error;
  }
  throw new Error(`loadConfig accepted ${JSON.stringify(environment)}`);
}

afterEach(async () => {
  await killAllKassaProcesses();
});

afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

describe('validation', () => {
  it('reports every problem at once, one readable line each, naming the variable and the value', () => {
    let error: unknown;
    try {
      loadConfig({
        KASSA_ENV: 'production',
        KASSA_DATA_DIR: dataDir(),
        PORT: 'eighty',
        KASSA_NETWORKS: 'local,moon',
        KASSA_RATES_SOURCES: 'static,oracle',
        CHECKOUT_BASE_URL: 'pay.example.com',
        DATABASE_URL: 'mysql://db.example/kassa',
        LOG_LEVEL: 'loud',
      });
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(ConfigError);
    const { problems, message } = error as ConfigError;
    expect(problems).toEqual([
      expect.stringMatching(/^PORT must be a whole number from 0 to 65535 \(got "eighty"\)$/),
      expect.stringMatching(/^DATABASE_URL must start with postgresql:\/\//),
      expect.stringMatching(/^CHECKOUT_BASE_URL must be an http\(s\) URL \(got "pay\.example\.com"\)$/),
      expect.stringMatching(/^KASSA_MASTER_KEY is required in production/),
      expect.stringMatching(
        /^KASSA_NETWORKS: unknown network "moon" \(known: ethereum, bsc, polygon, base, arbitrum, local\)$/,
      ),
      expect.stringMatching(/^KASSA_RATES_SOURCES: unknown source "oracle" \(known: static, coingecko, coinbase\)$/),
      expect.stringMatching(/^LOG_LEVEL must be one of trace, debug, info, warn, error, fatal, silent \(got "loud"\)$/),
      expect.stringMatching(/^KASSA_NETWORKS: the local sandbox network cannot be enabled in production/),
      expect.stringMatching(/^CHECKOUT_BASE_URL must use https in production/),
    ]);
    expect(message).toBe(`Invalid configuration:\n${problems.map((problem) => `  - ${problem}`).join('\n')}`);
  });

  it.each(['abc', '-1', '65536', '3000.5', '1e3'])('rejects PORT=%s', (port) => {
    expect(problemsOf(env({ PORT: port }))).toEqual([`PORT must be a whole number from 0 to 65535 (got "${port}")`]);
  });

  it('rejects an unknown network and an empty network list', () => {
    expect(problemsOf(env({ KASSA_NETWORKS: 'bsc,solana' }))).toEqual([
      expect.stringContaining('KASSA_NETWORKS: unknown network "solana"'),
    ]);
    expect(problemsOf(env({ KASSA_NETWORKS: ' , ' }))).toEqual(['KASSA_NETWORKS: enable at least one network']);
  });

  it('rejects an unknown rates source', () => {
    expect(problemsOf(env({ KASSA_RATES_SOURCES: 'coingecko,kraken' }))).toEqual([
      'KASSA_RATES_SOURCES: unknown source "kraken" (known: static, coingecko, coinbase)',
    ]);
  });

  it('requires KASSA_MASTER_KEY in production and writes no key file there', () => {
    const dir = dataDir();
    const problems = problemsOf(productionEnv({ KASSA_DATA_DIR: dir, KASSA_MASTER_KEY: undefined }));
    expect(problems).toEqual([
      expect.stringMatching(
        /^KASSA_MASTER_KEY is required in production \(32 bytes as hex or base64, e\.g\. `openssl rand -hex 32`\)$/,
      ),
    ]);
    expect(existsSync(path.join(dir, 'master.key'))).toBe(false);
  });

  it.each([
    ['too short', 'abc123'],
    ['64 characters, not hex', 'z'.repeat(64)],
    ['16 bytes of base64', randomBytes(16).toString('base64')],
    ['33 bytes of hex', randomBytes(33).toString('hex')],
  ])('rejects a master key that is %s', (_what, key) => {
    expect(problemsOf(env({ KASSA_MASTER_KEY: key }))).toEqual([
      'KASSA_MASTER_KEY must be 32 bytes, as 64 hex characters or base64',
    ]);
  });

  it('KASSA_MASTER_KEY_PREVIOUS: comma-separated older keys (hex or base64), each checked', () => {
    const [first, second] = [randomBytes(32), randomBytes(32)];
    const config = loadConfig(
      env({
        KASSA_MASTER_KEY: HEX_KEY,
        KASSA_MASTER_KEY_PREVIOUS: ` ${first.toString('hex')} , ${second.toString('base64')} `,
      }),
    );
    expect(config.previousMasterKeys.map((key) => key.toString('hex'))).toEqual([
      first.toString('hex'),
      second.toString('hex'),
    ]);
    expect(loadConfig(env()).previousMasterKeys).toEqual([]);
    expect(problemsOf(env({ KASSA_MASTER_KEY_PREVIOUS: `${first.toString('hex')},abc` }))).toEqual([
      'KASSA_MASTER_KEY_PREVIOUS: key 2 must be 32 bytes, as 64 hex characters or base64',
    ]);
  });

  it('accepts a master key as hex or base64', () => {
    const key = randomBytes(32);
    expect(loadConfig(env({ KASSA_MASTER_KEY: key.toString('hex') })).masterKey.equals(key)).toBe(true);
    expect(loadConfig(productionEnv({ KASSA_MASTER_KEY: key.toString('base64') })).masterKey.equals(key)).toBe(true);
  });

  it.each([
    ['CHECKOUT_BASE_URL', 'ftp://pay.example.com'],
    ['CHECKOUT_BASE_URL', 'not a url'],
    ['KASSA_COINGECKO_URL', 'javascript:alert(1)'],
    ['KASSA_COINBASE_URL', 'api.coinbase.com'],
  ])('rejects %s=%s', (name, value) => {
    expect(problemsOf(env({ [name]: value }))).toEqual([`${name} must be an http(s) URL (got "${value}")`]);
  });

  it('rejects a DATABASE_URL that is not PostgreSQL', () => {
    expect(problemsOf(env({ DATABASE_URL: 'mysql://root@db/kassa' }))).toEqual([
      'DATABASE_URL must start with postgresql://',
    ]);
    expect(loadConfig(env({ DATABASE_URL: 'postgres://db/kassa' })).databaseUrl).toBe('postgres://db/kassa');
  });

  it('rejects unknown KASSA_ENV, LOG_LEVEL and KASSA_DEMO values', () => {
    expect(problemsOf(env({ KASSA_ENV: 'staging', LOG_LEVEL: 'verbose', KASSA_DEMO: 'maybe' }))).toEqual([
      'KASSA_ENV must be one of development, test, production (got "staging")',
      'KASSA_DEMO must be true or false (got "maybe")',
      'LOG_LEVEL must be one of trace, debug, info, warn, error, fatal, silent (got "verbose")',
    ]);
  });

  it('rejects an RPC URL that is not a URL', () => {
    // Validated at start (docs/operations.md#configuration): a typo in an RPC URL must not surface later as a
    // watcher failure.
    expect(
      problemsOf(env({ KASSA_NETWORKS: 'bsc', KASSA_RPC_URLS_BSC: 'https://bsc.example/rpc,bsc-node:8545' })),
    ).toEqual(['KASSA_RPC_URLS_BSC must be comma-separated http(s) or ws(s) URLs (got "bsc-node:8545")']);
  });

  it("never prints an RPC URL's credentials: user info, path and query are masked", () => {
    const urls = [
      'bsc.example/v3/KEYINPATH123',
      'ftp://alice:PASSWORD123@bsc.example:8545/rpc?apikey=KEYINQUERY123',
      'https//bsc.example/KEYTYPO123',
    ];
    const problems = problemsOf(env({ KASSA_NETWORKS: 'bsc', KASSA_RPC_URLS_BSC: urls.join(',') }));
    expect(problems).toEqual([
      'KASSA_RPC_URLS_BSC must be comma-separated http(s) or ws(s) URLs (got "bsc.example/***")',
      'KASSA_RPC_URLS_BSC must be comma-separated http(s) or ws(s) URLs (got "ftp://bsc.example:8545/***")',
      'KASSA_RPC_URLS_BSC must be comma-separated http(s) or ws(s) URLs (got "https/***")',
    ]);
    expect(problems.join('\n')).not.toMatch(/KEYINPATH|PASSWORD|KEYINQUERY|KEYTYPO|alice/);
  });

  it('refuses an RPC URL whose user info holds an unencoded / ? # or @, without printing any of it', () => {
    const urls = [
      'https://alice:pa/ss@bsc.example/x',
      'https://alice:1234/PASS@bsc.example/v3/KEYINPATH',
      'wss://alice:s3cr#et@bsc.example',
      'https://alice:p?ss@bsc.example:8545',
      'https://bsc.example/rpc?owner=ops@mail.example',
    ];
    const problems = problemsOf(env({ KASSA_NETWORKS: 'bsc', KASSA_RPC_URLS_BSC: urls.join(',') }));
    const encode =
      'KASSA_RPC_URLS_BSC: percent-encode "/", "?", "#" and "@" inside a URL\'s user info, and "@" in its path or query (%2F, %3F, %23, %40): as written, part of the user info would be taken for the host';
    expect(problems).toEqual([
      `${encode} (got "https://bsc.example/***")`,
      `${encode} (got "https://bsc.example/***")`,
      `${encode} (got "wss://bsc.example/***")`,
      `${encode} (got "https://bsc.example:8545/***")`,
      // An `@` in the query is taken for the end of user info too: what follows it is shown when it looks like a host.
      `${encode} (got "https://mail.example/***")`,
    ]);
    // Percent-encoded, the same credentials are accepted (and the URL is what viem is given).
    const config = loadConfig(
      env({ KASSA_NETWORKS: 'bsc', KASSA_RPC_URLS_BSC: 'https://alice:pa%2Fss@bsc.example/v3/KEY' }),
    );
    expect(config.networks[0]!.rpcUrls).toEqual(['https://alice:pa%2Fss@bsc.example/v3/KEY']);
    // An `@` in the user info before the host is unambiguous: user info ends at the last `@` before the path.
    expect(
      loadConfig(env({ KASSA_NETWORKS: 'bsc', KASSA_RPC_URLS_BSC: 'https://alice:p@ss@bsc.example/rpc' })).networks[0]!
        .rpcUrls,
    ).toHaveLength(1);
  });

  it('never prints the credentials of another URL setting', () => {
    const problems = problemsOf(
      env({
        KASSA_COINGECKO_URL: 'htp://alice:PASSWORD@coingecko.example/api/v3?key=KEYINQUERY',
        CHECKOUT_BASE_URL: 'ftp://alice:PASSWORD@pay.example/KEYINPATH',
      }),
    );
    expect(problems).toEqual([
      'CHECKOUT_BASE_URL must be an http(s) URL (got "ftp://pay.example/***")',
      'KASSA_COINGECKO_URL must be an http(s) URL (got "htp://coingecko.example/***")',
    ]);
    const production = problemsOf(productionEnv({ CHECKOUT_BASE_URL: 'http://alice:PASSWORD@pay.example/KEYINPATH' }));
    expect(production).toEqual([
      'CHECKOUT_BASE_URL must use https in production, so payers see the wallet to pay untampered (got "http://pay.example/***")',
    ]);
  });
});

describe('defaults', () => {
  it('development (no KASSA_ENV, no NODE_ENV): the local sandbox, static rates, the demo', () => {
    const config = loadConfig({ KASSA_DATA_DIR: dataDir() });
    expect(config.env).toBe('development');
    expect(config.networks.map((n) => n.slug)).toEqual(['local']);
    expect(config.rates.sources).toEqual(['static']);
    expect(config.rates.staticFile).toBe(path.join(PACKAGE_ROOT, 'config/rates.static.json'));
    expect(config.demo).toBe(true);
    expect(config.port).toBe(3000);
    expect(config.checkoutBaseUrl).toBe('http://localhost:3000');
    expect(config.databaseUrl).toBeNull();
    expect(config.logLevel).toBe('info');
  });

  it('production: ethereum and bsc, market rates, no demo, listening on every interface, no migrations on start', () => {
    const config = loadConfig(productionEnv());
    expect(config.networks.map((n) => n.slug)).toEqual(['ethereum', 'bsc']);
    expect(config.rates.sources).toEqual(['coingecko', 'coinbase']);
    expect([config.rates.minSources, config.rates.maxSpreadPercent]).toEqual([2, 2]);
    expect(config.demo).toBe(false);
    expect(config.host).toBe('0.0.0.0');
    expect(config.migrateOnStart).toBe(false);
    expect(config.webhooks.httpsOnly).toBe(true);
    // No token and no port of its own: the main port does not serve /metrics (404).
    expect(config.metrics).toEqual({ token: null, port: null, host: '127.0.0.1', onMainPort: false });
  });

  it('development and test listen on 127.0.0.1 unless HOST is set, and migrate on start', () => {
    expect(loadConfig({ KASSA_DATA_DIR: dataDir() })).toMatchObject({
      env: 'development',
      host: '127.0.0.1',
      migrateOnStart: true,
    });
    expect(loadConfig(env())).toMatchObject({ host: '127.0.0.1', migrateOnStart: true });
    expect(loadConfig({ KASSA_DATA_DIR: dataDir(), HOST: '0.0.0.0' }).host).toBe('0.0.0.0');
    expect(loadConfig({ ...productionEnv(), HOST: '10.1.2.3' }).host).toBe('10.1.2.3');
    expect(loadConfig({ ...productionEnv(), KASSA_MIGRATE_ON_START: 'true' }).migrateOnStart).toBe(true);
    expect(loadConfig(env({ KASSA_MIGRATE_ON_START: 'false' })).migrateOnStart).toBe(false);
  });

  it('/metrics: open on the main port outside production; a token or a port of its own anywhere', () => {
    expect(loadConfig(env()).metrics).toEqual({ token: null, port: null, host: '127.0.0.1', onMainPort: true });
    const token = 'm'.repeat(32);
    expect(loadConfig({ ...productionEnv(), KASSA_METRICS_TOKEN: token }).metrics).toEqual({
      token,
      port: null,
      host: '127.0.0.1',
      onMainPort: true,
    });
    expect(loadConfig({ ...productionEnv(), KASSA_METRICS_PORT: '9464' }).metrics).toEqual({
      token: null,
      port: 9464,
      host: '127.0.0.1',
      onMainPort: false,
    });
    expect(problemsOf(env({ KASSA_METRICS_TOKEN: 'short' }))).toEqual([
      'KASSA_METRICS_TOKEN must be at least 16 characters without spaces (e.g. `openssl rand -hex 32`)',
    ]);
    expect(problemsOf(env({ KASSA_METRICS_PORT: 'x' }))).toEqual([
      'KASSA_METRICS_PORT must be a whole number from 0 to 65535 (got "x")',
    ]);
  });

  it('NODE_ENV=production chooses production when KASSA_ENV is not set; NODE_ENV=test is development', () => {
    expect(loadConfig({ ...productionEnv(), KASSA_ENV: undefined, NODE_ENV: 'production' }).env).toBe('production');
    // Test mode relaxes safety rules: only KASSA_ENV=test, which Kassa's own suite sets, chooses it (vitest sets NODE_ENV=test for everyone).
    expect(loadConfig({ NODE_ENV: 'test', KASSA_DATA_DIR: dataDir() }).env).toBe('development');
    expect(loadConfig({ NODE_ENV: 'test', KASSA_ENV: 'development', KASSA_DATA_DIR: dataDir() }).env).toBe(
      'development',
    );
    expect(loadConfig({ NODE_ENV: 'test', KASSA_ENV: 'test', KASSA_DATA_DIR: dataDir() }).env).toBe('test');
  });

  it('NODE_ENV=test alone does not open what test mode allows: mainnet networks from fixture rates are refused', () => {
    expect(
      problemsOf({ NODE_ENV: 'test', KASSA_DATA_DIR: dataDir(), KASSA_NETWORKS: 'bsc', KASSA_DEMO: 'false' }),
    ).toEqual([
      expect.stringMatching(
        /^KASSA_RATES_SOURCES: the static source \(fixture rates that never go stale\) cannot price payments on mainnet networks \(bsc\)/,
      ),
    ]);
  });

  // Found by a review of production defaults: NODE_ENV=production with KASSA_ENV=development ran development.
  it('KASSA_ENV=development beside NODE_ENV=production is refused', () => {
    expect(problemsOf({ NODE_ENV: 'production', KASSA_ENV: 'development', KASSA_DATA_DIR: dataDir() })).toEqual([
      'KASSA_ENV=development relaxes what production checks (webhook addresses, the master key, CHECKOUT_BASE_URL) ' +
        'and cannot run with NODE_ENV=production (set KASSA_ENV=production, or unset NODE_ENV)',
    ]);
  });

  it('production names each safety it was told to relax (logged as a warning at start)', () => {
    expect(productionOptIns(loadConfig(productionEnv()))).toEqual([]);
    expect(
      productionOptIns(
        loadConfig(
          productionEnv({
            KASSA_WEBHOOK_ALLOW_PRIVATE: 'true',
            KASSA_GRAPHQL_SANDBOX: 'true',
            TRUST_PROXY: 'true',
            KASSA_RATE_LIMIT_CREATE: 'off',
            KASSA_RATE_LIMIT_BIND_ADDRESS: 'off',
          }),
        ),
      ),
    ).toEqual([
      'KASSA_WEBHOOK_ALLOW_PRIVATE=true: webhook URLs may reach private and loopback addresses (SSRF)',
      'KASSA_GRAPHQL_SANDBOX=true: Apollo Sandbox is served on GET /graphql',
      'TRUST_PROXY=true: every X-Forwarded-For is believed, so any client can choose the address rate limits count ' +
        '(name the proxies, or their number, instead)',
      'KASSA_RATE_LIMIT_CREATE, KASSA_RATE_LIMIT_BIND_ADDRESS=off: no limit',
    ]);
    expect(productionOptIns(loadConfig(env({ KASSA_WEBHOOK_ALLOW_PRIVATE: 'true' })))).toEqual([]);
  });

  it('KASSA_ENV=test beside NODE_ENV=production is refused', () => {
    expect(problemsOf({ NODE_ENV: 'production', KASSA_ENV: 'test', KASSA_DATA_DIR: dataDir() })).toEqual([
      "KASSA_ENV=test is the mode of Kassa's own test suite and relaxes safety rules; it cannot run with NODE_ENV=production (set KASSA_ENV=production)",
    ]);
  });

  it('test mode: the local sandbox and no demo', () => {
    const config = loadConfig(env());
    expect(config.networks.map((n) => n.slug)).toEqual(['local']);
    expect(config.demo).toBe(false);
  });

  it('confirmations per network from the registry (docs/operations.md#configuration)', () => {
    const config = loadConfig(env({ KASSA_NETWORKS: 'ethereum,bsc,polygon,base,arbitrum,local' }));
    expect(Object.fromEntries(config.networks.map((n) => [n.slug, n.confirmations]))).toEqual({
      ethereum: 12,
      bsc: 15,
      polygon: 128,
      base: 20,
      arbitrum: 20,
      local: 1,
    });
  });

  it('trims the base URL and keeps the order of KASSA_NETWORKS', () => {
    const config = loadConfig(
      env({ CHECKOUT_BASE_URL: 'https://pay.example.com///', KASSA_NETWORKS: ' bsc , local ' }),
    );
    expect(config.checkoutBaseUrl).toBe('https://pay.example.com');
    expect(config.networks.map((n) => n.slug)).toEqual(['bsc', 'local']);
  });
});

describe('the master key in development and tests', () => {
  it('is generated once into the data dir (0600) and reused', () => {
    const dir = dataDir();
    const first = loadConfig({ KASSA_ENV: 'development', KASSA_DATA_DIR: dir });
    const file = path.join(dir, 'master.key');
    const written = readFileSync(file, 'utf8');
    expect(written).toMatch(/^[0-9a-f]{64}\n$/);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(first.masterKey.equals(Buffer.from(written.trim(), 'hex'))).toBe(true);

    const again = loadConfig({ KASSA_ENV: 'test', KASSA_DATA_DIR: dir });
    expect(again.masterKey.equals(first.masterKey)).toBe(true);
    expect(readFileSync(file, 'utf8')).toBe(written);
  });

  it('is different for another data dir', () => {
    expect(loadConfig(env()).masterKey.equals(loadConfig(env()).masterKey)).toBe(false);
  });

  it('is not written when KASSA_MASTER_KEY is given', () => {
    const dir = dataDir();
    expect(
      loadConfig({ KASSA_ENV: 'development', KASSA_DATA_DIR: dir, KASSA_MASTER_KEY: HEX_KEY }).masterKey.toString(
        'hex',
      ),
    ).toBe(HEX_KEY);
    expect(existsSync(path.join(dir, 'master.key'))).toBe(false);
  });

  it('a damaged key file is a readable problem naming the file', () => {
    const dir = dataDir();
    writeFileSync(path.join(dir, 'master.key'), 'not a key\n');
    expect(problemsOf({ KASSA_ENV: 'test', KASSA_DATA_DIR: dir })).toEqual([
      `${path.join(dir, 'master.key')} does not hold a 32-byte key`,
    ]);
  });

  it('processes starting together on a fresh data dir all get the one same key', async () => {
    // `npm start` and a `kassa` command (or two CLI commands) may start together on a fresh
    // data dir. Worker threads do the file system calls of separate processes, in parallel,
    // released together round after round onto a fresh data dir each.
    assertCliBuilt();
    const results = await loadConfigConcurrently(4, 300);
    expect(results.errors).toEqual([]);
    expect(results.roundsWithDifferentKeys).toEqual([]);
  });
});

describe('network overrides', () => {
  it('KASSA_RPC_URLS_<SLUG> replaces the registry RPC URLs of that network only', () => {
    const config = loadConfig(
      env({ KASSA_NETWORKS: 'bsc,local', KASSA_RPC_URLS_BSC: ' https://a.example/rpc , https://b.example/rpc ' }),
    );
    const bySlug = Object.fromEntries(config.networks.map((n) => [n.slug, n]));
    expect(bySlug.bsc!.rpcUrls).toEqual(['https://a.example/rpc', 'https://b.example/rpc']);
    expect(bySlug.local!.rpcUrls).toEqual(['http://127.0.0.1:8545']);
    expect(loadConfig(env({ KASSA_RPC_URLS_LOCAL: 'http://127.0.0.1:9545' })).networks[0]!.rpcUrls).toEqual([
      'http://127.0.0.1:9545',
    ]);
  });

  it('KASSA_CONFIRMATIONS_<SLUG> replaces the registry confirmations of that network only', () => {
    const config = loadConfig(env({ KASSA_NETWORKS: 'bsc,local', KASSA_CONFIRMATIONS_BSC: '3' }));
    expect(Object.fromEntries(config.networks.map((n) => [n.slug, n.confirmations]))).toEqual({ bsc: 3, local: 1 });
  });

  it('rejects confirmations that are not a whole number from 0 to 10000', () => {
    expect(problemsOf(env({ KASSA_NETWORKS: 'bsc', KASSA_CONFIRMATIONS_BSC: 'three' }))).toEqual([
      'KASSA_CONFIRMATIONS_BSC must be a whole number from 0 to 10000 (got "three")',
    ]);
    expect(problemsOf(env({ KASSA_NETWORKS: 'bsc', KASSA_CONFIRMATIONS_BSC: '-2' }))).toEqual([
      'KASSA_CONFIRMATIONS_BSC must be a whole number from 0 to 10000 (got "-2")',
    ]);
  });

  it('ignores overrides for networks that are not enabled', () => {
    const config = loadConfig(
      env({ KASSA_NETWORKS: 'local', KASSA_CONFIRMATIONS_BSC: 'three', KASSA_RPC_URLS_BSC: 'x' }),
    );
    expect(config.networks.map((n) => n.slug)).toEqual(['local']);
  });
});

describe('unsafe combinations are refused at start, one message each', () => {
  const FIXTURE_RATES =
    'KASSA_RATES_SOURCES: the static source (fixture rates that never go stale) cannot price payments on mainnet networks';
  const DEMO =
    "KASSA_DEMO: the demo organisation's wallet is anvil's public test account, whose private key is published, so it cannot be used beside mainnet networks";
  const cases: Array<[string, Env, string]> = [
    [
      'development: fixture rates beside a mainnet network',
      { KASSA_DATA_DIR: '', KASSA_NETWORKS: 'local,bsc', KASSA_DEMO: 'false' },
      `${FIXTURE_RATES} (bsc); use coingecko and/or coinbase, or enable only the local sandbox network`,
    ],
    [
      'development: the demo organisation beside a mainnet network',
      { KASSA_DATA_DIR: '', KASSA_NETWORKS: 'local,ethereum', KASSA_RATES_SOURCES: 'coingecko' },
      `${DEMO} (ethereum); set KASSA_DEMO=false or enable only the local sandbox network`,
    ],
    [
      'development: a mainnet network on a HOST other machines can reach (KASSA_ENV forgotten)',
      {
        KASSA_DATA_DIR: '',
        KASSA_NETWORKS: 'bsc',
        KASSA_DEMO: 'false',
        KASSA_RATES_SOURCES: 'coingecko',
        HOST: '0.0.0.0',
      },
      'HOST: development mode (KASSA_ENV unset) relaxes what production checks (webhook addresses, the master key, ' +
        'CHECKOUT_BASE_URL), so with mainnet networks (bsc) it serves this machine only, not HOST=0.0.0.0; ' +
        'set KASSA_ENV=production, or HOST=127.0.0.1',
    ],
    [
      'test: the demo organisation beside a mainnet network',
      { KASSA_ENV: 'test', KASSA_DATA_DIR: '', KASSA_NETWORKS: 'local,bsc', KASSA_DEMO: 'true' },
      `${DEMO} (bsc); set KASSA_DEMO=false or enable only the local sandbox network`,
    ],
    [
      'production: fixture rates',
      { ...productionEnv(), KASSA_RATES_SOURCES: 'coingecko,static' },
      `${FIXTURE_RATES} (ethereum, bsc); use coingecko and/or coinbase, or enable only the local sandbox network`,
    ],
    [
      'production: the demo organisation',
      { ...productionEnv(), KASSA_DEMO: 'true' },
      `${DEMO} (ethereum, bsc); set KASSA_DEMO=false or enable only the local sandbox network`,
    ],
    [
      'production: the local sandbox network',
      { ...productionEnv(), KASSA_NETWORKS: 'bsc,local' },
      'KASSA_NETWORKS: the local sandbox network cannot be enabled in production (anyone can mint its test tokens); enable mainnet networks only',
    ],
    [
      'production: the sandbox chain',
      { ...productionEnv(), KASSA_SANDBOX: 'true' },
      'KASSA_SANDBOX: the sandbox chain cannot run in production; set KASSA_SANDBOX=false',
    ],
    [
      'production: no CHECKOUT_BASE_URL',
      { ...productionEnv(), CHECKOUT_BASE_URL: undefined },
      'CHECKOUT_BASE_URL is required in production: the public https URL payers open (e.g. https://pay.example.com)',
    ],
    [
      'production: a plain-http CHECKOUT_BASE_URL',
      { ...productionEnv(), CHECKOUT_BASE_URL: 'http://pay.example.com' },
      'CHECKOUT_BASE_URL must use https in production, so payers see the wallet to pay untampered (got "http://pay.example.com")',
    ],
    [
      'production: no DATABASE_URL',
      { ...productionEnv(), DATABASE_URL: undefined },
      'DATABASE_URL is required in production (PostgreSQL): the embedded database serves one connection and one instance. To run on it anyway, set KASSA_ALLOW_EMBEDDED_IN_PRODUCTION=true',
    ],
    [
      'production: no master key',
      { ...productionEnv(), KASSA_MASTER_KEY: undefined },
      'KASSA_MASTER_KEY is required in production (32 bytes as hex or base64, e.g. `openssl rand -hex 32`)',
    ],
    // Found by a review of production defaults: each of these started production silently.
    [
      'production: an enabled network without an RPC URL',
      { ...productionEnv(), KASSA_RPC_URLS_BSC: undefined },
      'KASSA_RPC_URLS_BSC is required in production (bsc is enabled): without an RPC node its payments are never ' +
        'seen and binds never checked, so its sessions could be paid and never marked paid',
    ],
    [
      'production: a plain-http RPC URL off this machine',
      { ...productionEnv(), KASSA_RPC_URLS_BSC: 'http://10.0.0.9:8545' },
      "KASSA_RPC_URLS_BSC must use https or wss in production (a node's answers decide what is paid; only a " +
        'loopback address may be plain http): got "http://10.0.0.9:8545"',
    ],
    [
      'production: a plain-http rates source',
      { ...productionEnv(), KASSA_COINBASE_URL: 'http://rates.example.net' },
      'KASSA_COINBASE_URL must use https in production (its prices make every quote; only a loopback address may be ' +
        'plain http): got "http://rates.example.net"',
    ],
    [
      'production: a master key of 32 zero bytes',
      { ...productionEnv(), KASSA_MASTER_KEY: 'A'.repeat(43) },
      'KASSA_MASTER_KEY holds 1 distinct bytes of 32: it looks made by hand (zeros, a repeated pattern, a word), not ' +
        'random; use `openssl rand -hex 32`',
    ],
    [
      'production: a word for a master key',
      { ...productionEnv(), KASSA_MASTER_KEY: 'passwordpasswordpasswordpasswordpasswordpas' },
      'KASSA_MASTER_KEY holds 6 distinct bytes of 32: it looks made by hand (zeros, a repeated pattern, a word), not ' +
        'random; use `openssl rand -hex 32`',
    ],
    [
      'a master key in lenient base64 (any 43 letters)',
      { ...productionEnv(), KASSA_MASTER_KEY: 'not a key but forty-three characters long!!' },
      'KASSA_MASTER_KEY must be 32 bytes, as 64 hex characters or base64',
    ],
  ];

  it.each(cases)('%s', async (_what, environment, message) => {
    const withDir = { ...environment, KASSA_DATA_DIR: environment.KASSA_DATA_DIR || dataDir(), LOG_LEVEL: 'silent' };
    expect(problemsOf(withDir)).toEqual([message]);
    // What an operator sees: `kassa serve` exits 1 with that one message, before opening anything.
    const run = await runKassaInProcess(['serve'], withDir);
    expect(run).toEqual({
      code: 1,
      signal: null,
      stdout: '',
      stderr: `kassa: Invalid configuration:\n  - ${message}\n`,
    });
  });

  it('allows what is safe: the defaults of each environment, market rates on mainnets, the embedded database in production when asked', () => {
    expect(() => loadConfig({ KASSA_DATA_DIR: dataDir() })).not.toThrow();
    expect(() =>
      loadConfig({
        KASSA_DATA_DIR: dataDir(),
        KASSA_NETWORKS: 'local,bsc',
        KASSA_DEMO: 'false',
        KASSA_RATES_SOURCES: 'coinbase',
      }),
    ).not.toThrow();
    // Development beyond this machine with the sandbox network alone (a container's HOST=0.0.0.0).
    expect(() => loadConfig({ KASSA_DATA_DIR: dataDir(), HOST: '0.0.0.0' })).not.toThrow();
    expect(() => loadConfig(productionEnv())).not.toThrow();
    // A node or rates source on this machine may be plain http.
    expect(() =>
      loadConfig(
        productionEnv({ KASSA_RPC_URLS_BSC: 'http://127.0.0.1:8545', KASSA_COINGECKO_URL: 'http://[::1]:8080/v3' }),
      ),
    ).not.toThrow();
    expect(
      loadConfig(productionEnv({ DATABASE_URL: undefined, KASSA_ALLOW_EMBEDDED_IN_PRODUCTION: 'true' })).databaseUrl,
    ).toBeNull();
    // The test suite's own environment quotes bsc and ethereum from fixture rates (no internet).
    expect(() => loadConfig(env({ KASSA_NETWORKS: 'local,bsc,ethereum' }))).not.toThrow();
  });
});

describe('`kassa serve` with a bad configuration', () => {
  it('exits non-zero with the readable list of problems and no stack trace', async () => {
    const run = await runKassa(['serve'], {
      KASSA_ENV: 'test',
      KASSA_DATA_DIR: dataDir(),
      PORT: 'eighty',
      KASSA_NETWORKS: 'local,moon',
    });
    expect(run.code).toBe(1);
    expect(run.stdout).toBe('');
    expect(run.stderr).toBe(
      'kassa: Invalid configuration:\n' +
        '  - PORT must be a whole number from 0 to 65535 (got "eighty")\n' +
        '  - KASSA_NETWORKS: unknown network "moon" (known: ethereum, bsc, polygon, base, arbitrum, local)\n',
    );
    expect(hasStackTrace(run.stderr)).toBe(false);
  });

  it('in production without a master key, says how to make one', async () => {
    const run = await runKassa(['serve'], { KASSA_ENV: 'production', KASSA_DATA_DIR: dataDir(), PORT: '0' });
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(
      /^kassa: Invalid configuration:\n {2}- KASSA_MASTER_KEY is required in production .*openssl rand -hex 32/,
    );
    expect(hasStackTrace(run.stderr)).toBe(false);
  });
});

/** Runs loadConfig in `threads` worker threads at once, `rounds` times, each round on a fresh data dir. */
async function loadConfigConcurrently(
  threads: number,
  rounds: number,
): Promise<{ errors: string[]; roundsWithDifferentKeys: number[] }> {
  const base = dataDir();
  const gate = new Int32Array(new SharedArrayBuffer(8)); // [released round, arrivals]
  const configModule = path.join(PACKAGE_ROOT, 'dist/config.js');
  const source = `
    const { workerData, parentPort } = require('node:worker_threads');
    const path = require('node:path');
    import(workerData.configModule).then(({ loadConfig }) => {
      const gate = new Int32Array(workerData.gate);
      const keys = [];
      const errors = [];
      for (let round = 0; round < workerData.rounds; round++) {
        Atomics.add(gate, 1, 1);
        while (Atomics.load(gate, 0) <= round) Atomics.wait(gate, 0, round, 20);
        try {
          keys.push(loadConfig({ KASSA_ENV: 'test', KASSA_DATA_DIR: path.join(workerData.base, String(round)) }).masterKey.toString('hex'));
        } catch (error) {
          keys.push(null);
          errors.push(error.message);
        }
      }
      parentPort.postMessage({ keys, errors });
    }, (error) => parentPort.postMessage({ keys: [], errors: [String(error)] }));`;
  const workers = Array.from(
    { length: threads },
    () => new Worker(source, { eval: true, workerData: { gate: gate.buffer, rounds, base, configModule } }),
  );
  try {
    const done = workers.map(
      (worker) =>
        new Promise<{ keys: Array<string | null>; errors: string[] }>((resolve) => worker.once('message', resolve)),
    );
    for (let round = 0; round < rounds; round++) {
      const deadline = Date.now() + 10_000;
      while (Atomics.load(gate, 1) < threads * (round + 1)) {
        if (Date.now() > deadline) throw new Error('worker threads stopped arriving');
        await new Promise((resolve) => setImmediate(resolve));
      }
      Atomics.store(gate, 0, round + 1);
      Atomics.notify(gate, 0);
    }
    const results = await Promise.all(done);
    const roundsWithDifferentKeys: number[] = [];
    for (let round = 0; round < rounds; round++) {
      const keys = new Set(results.map((result) => result.keys[round]).filter((key): key is string => key !== null));
      if (keys.size > 1) roundsWithDifferentKeys.push(round);
    }
    return { errors: results.flatMap((result) => result.errors), roundsWithDifferentKeys };
  } finally {
    await Promise.all(workers.map((worker) => worker.terminate()));
  }
}
