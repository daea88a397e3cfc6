import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Worker } from 'node:worker_threads';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { ConfigError, loadConfig, PACKAGE_ROOT } from '../../src/config.js';
import { assertCliBuilt, hasStackTrace, killAllKassaProcesses, runKassa } from '../support/cli-process.js';

/** loadConfig (DESIGN.md §5: config only from the environment, validated at start with clear errors). */

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
      expect.stringMatching(/^KASSA_NETWORKS: unknown network "moon" \(known: ethereum, bsc, polygon, base, arbitrum, local\)$/),
      expect.stringMatching(/^KASSA_RATES_SOURCES: unknown source "oracle" \(known: static, coingecko, coinbase\)$/),
      expect.stringMatching(/^LOG_LEVEL must be one of trace, debug, info, warn, error, fatal, silent \(got "loud"\)$/),
    ]);
    expect(message).toBe(`Invalid configuration:\n${problems.map((problem) => `  - ${problem}`).join('\n')}`);
  });

  it.each(['abc', '-1', '65536', '3000.5', '1e3'])('rejects PORT=%s', (port) => {
    expect(problemsOf(env({ PORT: port }))).toEqual([`PORT must be a whole number from 0 to 65535 (got "${port}")`]);
  });

  it('rejects an unknown network and an empty network list', () => {
    expect(problemsOf(env({ KASSA_NETWORKS: 'bsc,solana' }))).toEqual([expect.stringContaining('KASSA_NETWORKS: unknown network "solana"')]);
    expect(problemsOf(env({ KASSA_NETWORKS: ' , ' }))).toEqual(['KASSA_NETWORKS: enable at least one network']);
  });

  it('rejects an unknown rates source', () => {
    expect(problemsOf(env({ KASSA_RATES_SOURCES: 'coingecko,kraken' }))).toEqual([
      'KASSA_RATES_SOURCES: unknown source "kraken" (known: static, coingecko, coinbase)',
    ]);
  });

  it('requires KASSA_MASTER_KEY in production and writes no key file there', () => {
    const dir = dataDir();
    const problems = problemsOf({ KASSA_ENV: 'production', KASSA_DATA_DIR: dir });
    expect(problems).toEqual([expect.stringMatching(/^KASSA_MASTER_KEY is required in production \(32 bytes as hex or base64, e\.g\. `openssl rand -hex 32`\)$/)]);
    expect(existsSync(path.join(dir, 'master.key'))).toBe(false);
  });

  it.each([
    ['too short', 'abc123'],
    ['64 characters, not hex', 'z'.repeat(64)],
    ['16 bytes of base64', randomBytes(16).toString('base64')],
    ['33 bytes of hex', randomBytes(33).toString('hex')],
  ])('rejects a master key that is %s', (_what, key) => {
    expect(problemsOf(env({ KASSA_MASTER_KEY: key }))).toEqual(['KASSA_MASTER_KEY must be 32 bytes, as 64 hex characters or base64']);
  });

  it('accepts a master key as hex or base64', () => {
    const key = randomBytes(32);
    expect(loadConfig(env({ KASSA_MASTER_KEY: key.toString('hex') })).masterKey.equals(key)).toBe(true);
    expect(loadConfig(env({ KASSA_MASTER_KEY: key.toString('base64'), KASSA_ENV: 'production' })).masterKey.equals(key)).toBe(true);
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
    expect(problemsOf(env({ DATABASE_URL: 'mysql://root@db/kassa' }))).toEqual(['DATABASE_URL must start with postgresql://']);
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
    // DESIGN.md §5 "validated at start": a typo in an RPC URL must not surface later as a watcher failure.
    expect(problemsOf(env({ KASSA_NETWORKS: 'bsc', KASSA_RPC_URLS_BSC: 'https://bsc.example/rpc,bsc-node:8545' }))).toEqual([
      expect.stringMatching(/^KASSA_RPC_URLS_BSC\b.*bsc-node:8545/),
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

  it('production: ethereum and bsc, market rates, no demo', () => {
    const config = loadConfig({ KASSA_ENV: 'production', KASSA_MASTER_KEY: HEX_KEY, KASSA_DATA_DIR: dataDir() });
    expect(config.networks.map((n) => n.slug)).toEqual(['ethereum', 'bsc']);
    expect(config.rates.sources).toEqual(['coingecko']);
    expect(config.demo).toBe(false);
  });

  it('NODE_ENV chooses the mode when KASSA_ENV is not set', () => {
    expect(loadConfig({ NODE_ENV: 'production', KASSA_MASTER_KEY: HEX_KEY, KASSA_DATA_DIR: dataDir() }).env).toBe('production');
    expect(loadConfig({ NODE_ENV: 'test', KASSA_DATA_DIR: dataDir() }).env).toBe('test');
    expect(loadConfig({ NODE_ENV: 'test', KASSA_ENV: 'development', KASSA_DATA_DIR: dataDir() }).env).toBe('development');
  });

  it('test mode: the local sandbox and no demo', () => {
    const config = loadConfig(env());
    expect(config.networks.map((n) => n.slug)).toEqual(['local']);
    expect(config.demo).toBe(false);
  });

  it('confirmations per network from the registry (DESIGN.md §4)', () => {
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
    const config = loadConfig(env({ CHECKOUT_BASE_URL: 'https://pay.example.com///', KASSA_NETWORKS: ' bsc , local ' }));
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
    expect(loadConfig({ KASSA_ENV: 'development', KASSA_DATA_DIR: dir, KASSA_MASTER_KEY: HEX_KEY }).masterKey.toString('hex')).toBe(HEX_KEY);
    expect(existsSync(path.join(dir, 'master.key'))).toBe(false);
  });

  it('a damaged key file is a readable problem naming the file', () => {
    const dir = dataDir();
    writeFileSync(path.join(dir, 'master.key'), 'not a key\n');
    expect(problemsOf({ KASSA_ENV: 'test', KASSA_DATA_DIR: dir })).toEqual([`${path.join(dir, 'master.key')} does not hold a 32-byte key`]);
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
    const config = loadConfig(env({ KASSA_NETWORKS: 'bsc,local', KASSA_RPC_URLS_BSC: ' https://a.example/rpc , https://b.example/rpc ' }));
    const bySlug = Object.fromEntries(config.networks.map((n) => [n.slug, n]));
    expect(bySlug.bsc!.rpcUrls).toEqual(['https://a.example/rpc', 'https://b.example/rpc']);
    expect(bySlug.local!.rpcUrls).toEqual(['http://127.0.0.1:8545']);
    expect(loadConfig(env({ KASSA_RPC_URLS_LOCAL: 'http://127.0.0.1:9545' })).networks[0]!.rpcUrls).toEqual(['http://127.0.0.1:9545']);
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
    const config = loadConfig(env({ KASSA_NETWORKS: 'local', KASSA_CONFIRMATIONS_BSC: 'three', KASSA_RPC_URLS_BSC: 'x' }));
    expect(config.networks.map((n) => n.slug)).toEqual(['local']);
  });
});

describe('`kassa serve` with a bad configuration', () => {
  it('exits non-zero with the readable list of problems and no stack trace', async () => {
    const run = await runKassa(['serve'], { KASSA_ENV: 'test', KASSA_DATA_DIR: dataDir(), PORT: 'eighty', KASSA_NETWORKS: 'local,moon' });
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
    expect(run.stderr).toMatch(/^kassa: Invalid configuration:\n {2}- KASSA_MASTER_KEY is required in production .*openssl rand -hex 32/);
    expect(hasStackTrace(run.stderr)).toBe(false);
  });
});

/** Runs loadConfig in `threads` worker threads at once, `rounds` times, each round on a fresh data dir. */
async function loadConfigConcurrently(threads: number, rounds: number): Promise<{ errors: string[]; roundsWithDifferentKeys: number[] }> {
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
  const workers = Array.from({ length: threads }, () => new Worker(source, { eval: true, workerData: { gate: gate.buffer, rounds, base, configModule } }));
  try {
    const done = workers.map((worker) => new Promise<{ keys: Array<string | null>; errors: string[] }>((resolve) => worker.once('message', resolve)));
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

