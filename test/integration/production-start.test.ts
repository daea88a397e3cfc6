import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { cpSync, existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PACKAGE_ROOT } from '../../src/config.js';
import { readMigrations } from '../../src/db/migrate.js';
import { adminQuery, urlFor } from '../support/databases.js';
import {
  cleanEnv,
  freePort,
  hasStackTrace,
  parseJsonOutput,
  runKassaInProcess,
  signedCreate,
  type KassaRun,
} from '../support/cli-process.js';

/**
 * Production start (docs/operations.md#running-in-production): migrations only through `kassa migrate`,
 * and a copy of the checkout installed with `npm ci --omit=dev` (no compiler, no test tools)
 * that starts with `npm start` from the shipped dist/ and serves a signed create.
 */

const WALLET = '0x70997970C51812dc3A010C7d01b50e0d17dc79C8';
const MIGRATIONS = readMigrations().map((migration) => migration.name);
const databases: string[] = [];
const dirs: string[] = [];

async function emptyDatabase(): Promise<string> {
  const name = `kassa_prod_${process.pid}_${randomBytes(4).toString('hex')}`;
  await adminQuery(`CREATE DATABASE "${name}"`);
  databases.push(name);
  return urlFor(name);
}

function tempDir(prefix: string): string {
  const dir = mkdtempSync(path.join(tmpdir(), prefix));
  dirs.push(dir);
  return dir;
}

afterAll(async () => {
  for (const name of databases) await adminQuery(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

const missingMigrations = () =>
  `kassa: The database is missing ${MIGRATIONS.length} migrations (${MIGRATIONS.slice(0, 3).join(', ')} and ${MIGRATIONS.length - 3} more): ` +
  'run `kassa migrate` first (KASSA_MIGRATE_ON_START is off)\n';

describe('with KASSA_MIGRATE_ON_START off', () => {
  it('`kassa serve` and other commands refuse an unmigrated database with one message naming `kassa migrate`; after it they work', async () => {
    expect(MIGRATIONS.length).toBeGreaterThan(3);
    const env = {
      KASSA_ENV: 'test',
      LOG_LEVEL: 'silent',
      PORT: '0',
      KASSA_MIGRATE_ON_START: 'false',
      DATABASE_URL: await emptyDatabase(),
      KASSA_DATA_DIR: tempDir('kassa-prod-'),
    };
    for (const args of [['serve'], ['orgs', 'list']]) {
      expect(await runKassaInProcess(args, env)).toEqual({
        code: 1,
        signal: null,
        stdout: '',
        stderr: missingMigrations(),
      });
    }
    const migrated = await runKassaInProcess(['migrate', '--json'], env);
    expect(migrated.code, migrated.stderr).toBe(0);
    expect(parseJsonOutput<{ applied: string[] }>(migrated).applied).toEqual(MIGRATIONS);
    expect(await runKassaInProcess(['orgs', 'list', '--json'], env)).toEqual({
      code: 0,
      signal: null,
      stdout: '[]\n',
      stderr: '',
    });
  });
});

describe('a production install without devDependencies', { timeout: 240_000 }, () => {
  let copy: string;
  let coingecko: Server;
  let env: Record<string, string>;
  let server: ChildProcess | undefined;

  beforeAll(async () => {
    // CoinGecko's answer as recorded, priced now (a stale price would make create answer 503).
    const recorded = JSON.parse(
      readFileSync(path.join(PACKAGE_ROOT, 'test/fixtures/rates/coingecko-simple-price-usd.json'), 'utf8'),
    ) as Record<string, { usd: number }>;
    coingecko = createServer((_request, response) => {
      const now = Math.floor(Date.now() / 1000);
      const body = Object.fromEntries(
        Object.entries(recorded).map(([id, price]) => [id, { usd: price.usd, last_updated_at: now }]),
      );
      response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(body));
    });
    await new Promise<void>((resolve) => coingecko.listen(0, '127.0.0.1', resolve));
    env = {
      KASSA_ENV: 'production',
      LOG_LEVEL: 'warn',
      DATABASE_URL: await emptyDatabase(),
      KASSA_DATA_DIR: tempDir('kassa-prod-data-'),
      KASSA_MASTER_KEY: randomBytes(32).toString('hex'),
      CHECKOUT_BASE_URL: 'https://pay.example.com',
      KASSA_NETWORKS: 'bsc',
      // Never reached here (the watcher is off, nothing is bound): production asks for one per network.
      KASSA_RPC_URLS_BSC: 'http://127.0.0.1:9',
      KASSA_WATCHER: 'false',
      KASSA_COINGECKO_URL: `http://127.0.0.1:${(coingecko.address() as AddressInfo).port}/api/v3`,
      // One source, knowingly (production asks for two by default: docs/payment-rules.md, rule 8).
      KASSA_RATES_SOURCES: 'coingecko',
      KASSA_RATES_MIN_SOURCES: '1',
      KASSA_METRICS_TOKEN: randomBytes(16).toString('hex'),
    };
  });

  afterAll(async () => {
    if (server?.exitCode === null) process.kill(-server.pid!, 'SIGKILL');
    coingecko?.closeAllConnections();
    await new Promise((resolve) => coingecko?.close(resolve));
  });

  it('installs with `npm ci --omit=dev` from the shipped dist/, without compiling and without the test tools', async () => {
    // What an operator ships: the checkout after `npm run build`, without node_modules.
    copy = path.join(tempDir('kassa-prod-copy-'), 'kassa');
    const skipped = new Set(
      ['node_modules', '.git', '.kassa', 'coverage'].map((name) => path.join(PACKAGE_ROOT, name)),
    );
    cpSync(PACKAGE_ROOT, copy, { recursive: true, filter: (source) => !skipped.has(source) });
    const shipped = readFileSync(path.join(copy, 'dist/cli/program.js'), 'utf8');

    const install = await run(
      'npm',
      ['ci', '--omit=dev', '--prefer-offline', '--no-audit', '--no-fund', '--foreground-scripts'],
      copy,
      {},
      180_000,
    );
    expect(install.code, install.stderr).toBe(0);
    expect(install.stderr).toContain(
      'kassa: installed without devDependencies, so nothing is compiled: using the dist/ built before by `npm run build`.',
    );
    for (const devOnly of ['@types/express', 'vitest', 'supertest', 'playwright-core', '@sparticuz/chromium']) {
      expect(existsSync(path.join(copy, 'node_modules', devOnly)), devOnly).toBe(false);
    }
    expect(readFileSync(path.join(copy, 'dist/cli/program.js'), 'utf8')).toBe(shipped);
  });

  it('refuses to start on the unmigrated database, naming `kassa migrate`; migrates; issues a key', async () => {
    const refused = await run(process.execPath, ['bin/kassa.js', 'serve'], copy, { ...env, PORT: '0' });
    expect(refused).toMatchObject({ code: 1, stdout: '', stderr: missingMigrations() });
    expect(hasStackTrace(refused.stderr)).toBe(false);
    const migrated = await run(process.execPath, ['bin/kassa.js', 'migrate'], copy, env);
    expect(migrated).toMatchObject({ code: 0, stdout: `applied: ${MIGRATIONS.join(', ')}\n` });
  });

  it('`npm start` serves a signed create (201) from dist/, and stops on SIGTERM', async () => {
    const org = parseJsonOutput<{ id: string }>(
      await run(
        process.execPath,
        ['bin/kassa.js', 'orgs', 'create', '--name', 'Shop', '--wallet', WALLET, '--receiving', 'shared', '--json'],
        copy,
        env,
      ),
    );
    const key = parseJsonOutput<{ api_key: string; api_secret: string }>(
      await run(process.execPath, ['bin/kassa.js', 'keys', 'create', '--org', org.id, '--json'], copy, env),
    );

    const port = await freePort();
    let output = '';
    // Its own process group: npm and the node it starts are stopped together.
    server = spawn('npm', ['start'], {
      cwd: copy,
      env: cleanEnv({ ...env, PORT: String(port) }),
      detached: true,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    server.stdout!.on('data', (chunk) => (output += chunk));
    server.stderr!.on('data', (chunk) => (output += chunk));
    const base = `http://127.0.0.1:${port}`;
    const deadline = Date.now() + 60_000;
    while (
      (await fetch(`${base}/ready`).then(
        (r) => r.status,
        () => 0,
      )) !== 200
    ) {
      if (server.exitCode !== null || Date.now() > deadline)
        throw new Error(`npm start did not become ready:\n${output}`);
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    const created = await signedCreate(base, { apiKey: key.api_key, apiSecret: key.api_secret });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    expect(created.body).toMatchObject({
      status: 'waiting_payment',
      supported_networks: ['bsc'],
      checkout_url: expect.stringMatching(/^https:\/\/pay\.example\.com\/pay\//),
    });
    expect((await fetch(`${base}/metrics`)).status).toBe(401);

    const exited = new Promise<number | null>((resolve) => server!.once('exit', (code) => resolve(code)));
    process.kill(-server.pid!, 'SIGTERM');
    await exited;
    expect(output).not.toMatch(/"level":(50|60)/);
  });
});

function run(
  command: string,
  args: string[],
  cwd: string,
  env: Record<string, string>,
  timeoutMs = 60_000,
): Promise<KassaRun> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd, env: cleanEnv(env), stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`${command} ${args.join(' ')} did not finish within ${timeoutMs} ms\n${stdout}\n${stderr}`));
    }, timeoutMs);
    child.once('error', reject);
    child.once('close', (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, stdout, stderr });
    });
  });
}
