import { execFile } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import pg from 'pg';
import { PACKAGE_ROOT } from '../../src/config.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { adminQuery, openEmbeddedDatabase, urlFor } from '../support/databases.js';
import { listeningTcpPorts } from '../support/proc-sockets.js';
import {
  assertCliBuilt,
  freePort,
  hasStackTrace,
  killAllKassaProcesses,
  parseJsonOutput,
  runKassa,
  runKassaInProcess as kassa,
  signedCreate,
  startKassaServer,
  type KassaRun,
  type KassaServer,
} from '../support/cli-process.js';

/**
 * The operator CLI contract (docs/operations.md#cli-reference) on PostgreSQL and on the embedded database,
 * and the first-run experience of `npm start` in development mode. `kassa serve` runs as a
 * real child process (`node bin/kassa.js serve`), and so do the checks of the binary's own
 * exit codes and messages; the other commands run in-process (`kassa(…)`, the same code
 * the binary runs), which saves a Node start-up per command.
 */

const WALLET = '0x70997970C51812dc3A010C7d01b50e0d17dc79C8';
const WALLET_LOWER = WALLET.toLowerCase();
const OTHER_WALLET = '0x3c44cdddb6a900fa2b585dd299e03d12fa4293bc';
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const ISO_TIME = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;
const BASE_ENV = { KASSA_ENV: 'test', LOG_LEVEL: 'silent', KASSA_NETWORKS: 'local,bsc' } as const;

interface OrganisationJson {
  id: string;
  name: string;
  wallets: Record<string, string>;
  receiving_mode: string;
  underpayment_tolerance_percent: string;
  late_payment_window_minutes: number;
  created_at: string;
}

interface IssuedKeyJson {
  id: string;
  api_key: string;
  api_secret: string;
  organisation_id: string;
  created_at: string;
}

const execFileAsync = promisify(execFile);
const credentials = (key: IssuedKeyJson) => ({ apiKey: key.api_key, apiSecret: key.api_secret });

const tempDirs: string[] = [];
function tempDir(prefix: string): string {
  const dir = mkdtempSync(path.join(tmpdir(), prefix));
  tempDirs.push(dir);
  return dir;
}

/** A successful command: exit 0, nothing on stderr. */
function expectSuccess(run: KassaRun): void {
  expect(run, `exit ${run.code}\nstdout: ${run.stdout}\nstderr: ${run.stderr}`).toMatchObject({ code: 0, stderr: '' });
}

/** A refused command: non-zero exit, nothing on stdout, one readable `kassa: …` message and no stack trace. */
function expectRefusal(run: KassaRun, code: number, message: string | RegExp): void {
  expect(run.code, `stdout: ${run.stdout}\nstderr: ${run.stderr}`).toBe(code);
  expect(run.stdout).toBe('');
  expect(hasStackTrace(run.stderr), run.stderr).toBe(false);
  if (typeof message === 'string') expect(run.stderr).toBe(`kassa: ${message}\n`);
  else expect(run.stderr).toMatch(message);
}

async function waitFor(condition: () => boolean | Promise<boolean>, what: string, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

// Each step starts Node processes (and PGlite, in the embedded modes): give slow machines room.
const MODE = { timeout: 60_000 } as const;

beforeAll(() => {
  assertCliBuilt();
});

afterAll(async () => {
  await killAllKassaProcesses();
  for (const dir of tempDirs) rmSync(dir, { recursive: true, force: true });
});

describe('on PostgreSQL (DATABASE_URL)', MODE, () => {
  const database = `kassa_cli_${process.pid}_${randomBytes(4).toString('hex')}`;
  let env: Record<string, string>;
  let acme: OrganisationJson;
  let bscOnly: OrganisationJson;
  let keys: IssuedKeyJson[];
  let server: KassaServer | undefined;

  beforeAll(async () => {
    await adminQuery(`CREATE DATABASE "${database}"`);
    env = { ...BASE_ENV, KASSA_DATA_DIR: tempDir('kassa-cli-pg-'), DATABASE_URL: urlFor(database) };
  });

  afterAll(async () => {
    await server?.stop();
    await adminQuery(`DROP DATABASE IF EXISTS "${database}" WITH (FORCE)`);
  });

  it('`migrate` applies the migrations to an empty database, then finds nothing to do', async () => {
    const first = await kassa(['migrate'], env);
    expectSuccess(first);
    const migrations = readdirSync(path.join(PACKAGE_ROOT, 'prisma/migrations'), { withFileTypes: true })
      .filter((entry) => entry.isDirectory())
      .map((entry) => entry.name)
      .sort();
    expect(migrations[0]).toBe('20261121000000_init');
    expect(first.stdout).toBe(`applied: ${migrations.join(', ')}\n`);
    const again = await kassa(['migrate'], env);
    expectSuccess(again);
    expect(again.stdout).toBe('database is up to date\n');
  });

  it('`orgs create --json` prints one organisation with the wallet on every enabled network, or on --network only', async () => {
    const [all, bsc] = await Promise.all([
      kassa(['orgs', 'create', '--name', 'Acme Coffee', '--wallet', WALLET, '--receiving', 'shared', '--json'], env),
      kassa(
        [
          'orgs',
          'create',
          '--name',
          'BSC Only',
          '--wallet',
          OTHER_WALLET,
          '--network',
          'bsc',
          '--receiving',
          'shared',
          '--json',
        ],
        env,
      ),
    ]);
    expectSuccess(all);
    expectSuccess(bsc);
    acme = parseJsonOutput<OrganisationJson>(all);
    bscOnly = parseJsonOutput<OrganisationJson>(bsc);
    expect(acme).toEqual({
      id: expect.stringMatching(UUID),
      name: 'Acme Coffee',
      wallets: { local: WALLET_LOWER, bsc: WALLET_LOWER },
      receiving_mode: 'shared_wallet',
      underpayment_tolerance_percent: '0.00',
      late_payment_window_minutes: 1440,
      created_at: expect.stringMatching(ISO_TIME),
    });
    expect(bscOnly).toMatchObject({ name: 'BSC Only', wallets: { bsc: OTHER_WALLET } });
    expect(Object.keys(bscOnly.wallets)).toEqual(['bsc']);
  });

  it('`orgs list --json` lists them', async () => {
    const run = await kassa(['orgs', 'list', '--json'], env);
    expectSuccess(run);
    const listed = parseJsonOutput<OrganisationJson[]>(run);
    expect(listed).toEqual([acme, bscOnly].sort((a, b) => a.created_at.localeCompare(b.created_at)));
  });

  it('`wallets set --network local` changes that network only', async () => {
    const run = await kassa(['wallets', 'set', '--org', acme.id, '--network', 'local', '--address', OTHER_WALLET], env);
    expectSuccess(run);
    // Networks in alphabetical order, whatever order the wallets were set in.
    expect(run.stdout).toBe(`${acme.id}  Acme Coffee  bsc=${WALLET_LOWER} local=${OTHER_WALLET}\n`);
  });

  it('`keys create --json` prints api_key, api_secret and organisation_id', async () => {
    const runs = await Promise.all([0, 1].map(() => kassa(['keys', 'create', '--org', acme.id, '--json'], env)));
    runs.forEach(expectSuccess);
    keys = runs.map((run) => parseJsonOutput<IssuedKeyJson>(run));
    for (const key of keys) {
      expect(key).toEqual({
        id: expect.stringMatching(UUID),
        api_key: expect.stringMatching(/^pk_[0-9a-f]{32}$/),
        api_secret: expect.stringMatching(/^sk_[0-9a-f]{64}$/),
        organisation_id: acme.id,
        created_at: expect.stringMatching(ISO_TIME),
      });
    }
    expect(new Set(keys.map((key) => key.api_key)).size).toBe(2);
  });

  it('`keys list` shows the keys and never a secret', async () => {
    const run = await kassa(['keys', 'list', '--org', acme.id], env);
    expectSuccess(run);
    for (const key of keys) {
      expect(run.stdout).toContain(`${key.api_key}  active  created ${key.created_at}  last used never`);
      expect(run.stdout).not.toContain(key.api_secret);
    }
    expect(run.stdout).not.toMatch(/sk_[0-9a-f]/);
  });

  it('refuses bad input with a readable message and a non-zero exit', async () => {
    const unknownOrg = randomUUID();
    const badChecksum = '0x90F79BF6eb2c4F870365E785982E1f101E93b906'; // one letter's case changed
    const [badWallet, noSuchOrg, noSuchOrgWallet, notEnabled, unknownNetwork, noSuchKey, checksum, zero] =
      await Promise.all([
        kassa(['orgs', 'create', '--name', 'Bad', '--wallet', '0x1234'], env),
        kassa(['keys', 'create', '--org', unknownOrg], env),
        kassa(['wallets', 'set', '--org', unknownOrg, '--address', WALLET], env),
        kassa(['orgs', 'create', '--name', 'Bad', '--wallet', WALLET, '--network', 'polygon'], env),
        kassa(['wallets', 'set', '--org', acme.id, '--network', 'moon', '--address', WALLET], env),
        kassa(['keys', 'revoke', 'pk_00000000000000000000000000000000'], env),
        kassa(['orgs', 'create', '--name', 'Bad', '--wallet', badChecksum], env),
        kassa(['wallets', 'set', '--org', acme.id, '--address', `0x${'0'.repeat(40)}`], env),
      ]);
    expectRefusal(badWallet, 2, 'wallet address must match ^0x[a-fA-F0-9]{40}$');
    expectRefusal(
      checksum,
      2,
      `wallet address ${badChecksum} has an invalid EIP-55 checksum (mixed case): check it, or give it all in lower case`,
    );
    expectRefusal(zero, 2, 'wallet address must not be the zero address');
    expectRefusal(noSuchOrg, 4, `Organisation ${unknownOrg} not found`);
    expectRefusal(noSuchOrgWallet, 4, `Organisation ${unknownOrg} not found`);
    expectRefusal(notEnabled, 2, 'network polygon is not enabled (enabled: local, bsc)');
    expectRefusal(unknownNetwork, 2, 'network moon is not enabled (enabled: local, bsc)');
    expectRefusal(noSuchKey, 4, 'API key pk_00000000000000000000000000000000 not found');

    // The binary exits with the same codes and prints the same one line (no stack) as the in-process runs.
    const [binaryNotFound, binaryInvalid] = await Promise.all([
      runKassa(['keys', 'create', '--org', unknownOrg], env),
      runKassa(['orgs', 'create', '--name', 'Bad', '--wallet', '0x1234'], env),
    ]);
    expect(binaryNotFound).toEqual({ ...noSuchOrg, signal: null });
    expect(binaryInvalid).toEqual({ ...badWallet, signal: null });
  });

  it('an organisation id that is not a UUID is "not found", not a database error', async () => {
    const run = await kassa(['keys', 'create', '--org', 'acme'], env);
    expectRefusal(run, 4, 'Organisation acme not found');
  });

  it('`kassa serve` on the same database accepts a CLI key, and refuses it once revoked or rotated away', async () => {
    server = await startKassaServer({ ...env, HOST: '127.0.0.1' });
    await server.ready();
    const [toRevoke, toRotate] = keys;

    for (const key of [toRevoke!, toRotate!]) {
      const created = await signedCreate(server.url, credentials(key));
      expect(created.status, JSON.stringify(created.body)).toBe(201);
      expect(created.body).toMatchObject({
        session_id: expect.stringMatching(UUID),
        status: 'waiting_payment',
        total_amount_fiat: '25.00000000',
      });
    }

    const [revoke, rotate] = await Promise.all([
      kassa(['keys', 'revoke', toRevoke!.api_key], env),
      kassa(['keys', 'rotate', toRotate!.api_key, '--grace-minutes', '0', '--json'], env),
    ]);
    expectSuccess(revoke);
    expect(revoke.stdout).toBe(`revoked ${toRevoke!.api_key}\n`);
    expectSuccess(rotate);
    const rotated = parseJsonOutput<IssuedKeyJson & { replaces: string; old_key_expires_at: string }>(rotate);
    expect(rotated).toMatchObject({
      api_key: expect.stringMatching(/^pk_[0-9a-f]{32}$/),
      api_secret: expect.stringMatching(/^sk_[0-9a-f]{64}$/),
      organisation_id: acme.id,
      replaces: toRotate!.api_key,
      old_key_expires_at: expect.stringMatching(ISO_TIME),
    });

    const revoked = await signedCreate(server.url, credentials(toRevoke!));
    expect(revoked).toMatchObject({ status: 401, body: { statusCode: 401, message: 'API key has been revoked' } });
    const rotatedAway = await signedCreate(server.url, credentials(toRotate!));
    expect(rotatedAway).toMatchObject({
      status: 401,
      body: { statusCode: 401, message: 'API key has expired (it was rotated)' },
    });
    expect((await signedCreate(server.url, credentials(rotated))).status).toBe(201);

    const list = await kassa(['keys', 'list', '--org', acme.id], env);
    expectSuccess(list);
    expect(list.stdout).toContain(`${toRevoke!.api_key}  revoked`);
    expect(list.stdout).toContain(`${toRotate!.api_key}  expired`);
    expect(list.stdout).toMatch(new RegExp(`${rotated.api_key}  active  created \\S+  last used \\d{4}-`));

    expect(await server.stop()).toEqual({ code: 0, signal: null });
  });
});

describe('on the embedded database (no DATABASE_URL)', MODE, () => {
  let env: Record<string, string>;
  let dataDir: string;
  let first: OrganisationJson;
  let server: KassaServer | undefined;

  beforeAll(() => {
    dataDir = tempDir('kassa-cli-embedded-');
    env = { ...BASE_ENV, KASSA_DATA_DIR: dataDir, KASSA_DEMO: 'false' };
  });

  afterAll(async () => {
    await server?.stop();
  });

  it('CLI commands open the embedded database themselves when no server runs, and leave no lock behind', async () => {
    const created = await kassa(
      ['orgs', 'create', '--name', 'Offline Shop', '--wallet', WALLET, '--receiving', 'shared', '--json'],
      env,
    );
    expectSuccess(created);
    first = parseJsonOutput<OrganisationJson>(created);
    expect(first.wallets).toEqual({ local: WALLET_LOWER, bsc: WALLET_LOWER });
    expect(existsSync(path.join(dataDir, 'pgdata'))).toBe(true);
    expect(existsSync(path.join(dataDir, 'embedded.lock'))).toBe(false);
    expect(existsSync(path.join(dataDir, 'embedded.json'))).toBe(false);
  });

  it('a command that starts while another command has the database open keeps working after the other ends', async () => {
    // Two `kassa` commands at once with no server: the first opens PGlite as 'cli' and closes it when its own
    // work is done. With real processes the second failed about one time in three with "Server has closed
    // the connection"; here the test plays the first command, so the timing is certain.
    const firstCommand = await openEmbeddedDatabase(dataDir, 'cli');
    const secondOpening = openEmbeddedDatabase(dataDir, 'cli');
    const early = await Promise.race([
      secondOpening,
      new Promise<null>((resolve) => setTimeout(() => resolve(null), 1_000)),
    ]);
    const connect = async (url: string) => {
      const client = new pg.Client({ connectionString: url });
      client.on('error', () => {});
      await client.connect();
      return client;
    };
    // If the second command got the database at once, it is already at work when the first one ends.
    let client = early ? await connect(early.url) : null;
    if (client) expect((await client.query('SELECT 1 AS one')).rows).toEqual([{ one: 1 }]);
    await firstCommand.close();
    const second = await secondOpening;
    try {
      client ??= await connect(second.url);
      await expect(client.query('SELECT count(*)::int AS organisations FROM organisations')).resolves.toMatchObject({
        rows: [{ organisations: 1 }],
      });
    } finally {
      await client?.end().catch(() => {});
      await second.close();
    }
    expect(existsSync(path.join(dataDir, 'embedded.lock'))).toBe(false);
  });

  it('while `kassa serve` holds the data dir, CLI commands work through its socket', async () => {
    server = await startKassaServer({ ...env, HOST: '127.0.0.1' });
    await server.ready();
    const owner = JSON.parse(readFileSync(path.join(dataDir, 'embedded.json'), 'utf8')) as {
      pid: number;
      role: string;
    };
    // The database is served on an owner-only Unix socket in the data dir; the server's one TCP port is its HTTP.
    expect(owner).toEqual({ pid: server.child.pid, role: 'server', socket: path.join(dataDir, 'socket') });
    expect((statSync(path.join(dataDir, 'socket', '.s.PGSQL.5432')).mode & 0o777).toString(8)).toBe('600');
    expect(await listeningTcpPorts(server.child.pid!)).toEqual([server.port]);

    const created = await kassa(['orgs', 'create', '--name', 'Online Shop', '--receiving', 'shared', '--json'], env);
    expectSuccess(created);
    const shop = parseJsonOutput<OrganisationJson>(created);
    expect(shop.wallets).toEqual({});

    const [key, wallet] = await Promise.all([
      kassa(['keys', 'create', '--org', shop.id, '--json'], env),
      kassa(['wallets', 'set', '--org', shop.id, '--network', 'bsc', '--address', OTHER_WALLET], env),
    ]);
    expectSuccess(key);
    expectSuccess(wallet);
    expect(wallet.stdout).toBe(`${shop.id}  Online Shop  bsc=${OTHER_WALLET}\n`);
    const issued = parseJsonOutput<IssuedKeyJson>(key);

    const [keyList, orgList] = await Promise.all([
      kassa(['keys', 'list', '--org', shop.id], env),
      kassa(['orgs', 'list', '--json'], env),
    ]);
    expectSuccess(keyList);
    expect(keyList.stdout).toMatch(new RegExp(`^${issued.api_key}  active  `));
    expect(keyList.stdout).not.toContain(issued.api_secret);
    expectSuccess(orgList);
    expect(parseJsonOutput<OrganisationJson[]>(orgList).map((o) => [o.id, o.name])).toEqual([
      [first.id, 'Offline Shop'],
      [shop.id, 'Online Shop'],
    ]);

    // The server still owns the directory: the CLI never opened PGlite itself.
    expect(JSON.parse(readFileSync(path.join(dataDir, 'embedded.json'), 'utf8'))).toMatchObject({
      pid: server.child.pid,
      role: 'server',
    });

    const session = await signedCreate(server.url, credentials(issued));
    expect(session.status, JSON.stringify(session.body)).toBe(201);
    expect(session.body).toMatchObject({ status: 'waiting_payment' });
  });

  it('a second `kassa serve` on the same data dir fails with a clear message', async () => {
    const run = await runKassa(['serve'], { ...env, HOST: '127.0.0.1', PORT: '0' }, { timeoutMs: 20_000 });
    expect(run.code).not.toBe(0);
    expect(run.stdout).toBe('');
    expect(run.stderr).toBe(
      `kassa: Another Kassa server (pid ${server!.child.pid}) is already serving the embedded database in ${dataDir}. ` +
        'To run several instances, point them all at one PostgreSQL with DATABASE_URL.\n',
    );
    expect(hasStackTrace(run.stderr)).toBe(false);
  });

  it('stops on SIGTERM and releases the data dir', async () => {
    expect(await server!.stop()).toEqual({ code: 0, signal: null });
    expect(existsSync(path.join(dataDir, 'embedded.lock'))).toBe(false);
    expect(existsSync(path.join(dataDir, 'embedded.json'))).toBe(false);
  });
});

describe('first run in development mode (`npm start`)', MODE, () => {
  let env: Record<string, string>;
  let dataDir: string;
  let server: KassaServer | undefined;
  let demo: { organisationId: string; apiKey: string; secret: string; script: string };
  let paidSessionId = '';

  beforeAll(async () => {
    dataDir = tempDir('kassa-cli-dev-');
    // KASSA_DEMO and KASSA_SANDBOX are left at their development defaults; the sandbox
    // chain gets a port of its own so a developer's `npm start` on 8545 is not disturbed.
    const rpc = `http://127.0.0.1:${await freePort()}`;
    // Development refuses static rates and the demo organisation beside a mainnet network: `local` only.
    env = {
      KASSA_ENV: 'development',
      LOG_LEVEL: 'silent',
      KASSA_NETWORKS: 'local',
      KASSA_DATA_DIR: dataDir,
      KASSA_RPC_URLS_LOCAL: rpc,
    };
  });

  afterAll(async () => {
    await server?.stop();
  });

  function readDemoBlock(stderr: string) {
    const match =
      /Demo organisation (\S+)\n {2}X-Service-Key: (\S+)\n {2}secret: +(\S+)\n[^\n]*\n\n(KEY='[\s\S]*?-d "\$BODY")\n/.exec(
        stderr,
      );
    if (!match) throw new Error(`no demo block in the server's stderr:\n${stderr}`);
    return { organisationId: match[1]!, apiKey: match[2]!, secret: match[3]!, script: match[4]! };
  }

  it('prints a demo organisation, key and a signed curl that creates a session (201)', async () => {
    server = await startKassaServer(env);
    await server.ready();
    // Printed before the server answers anything (found by a review: /ready answered while the demo was being made,
    // and the block came after the sandbox chain had started, over a second later): at most a pipe's delivery later.
    await expect.poll(() => /-d "\$BODY"\n/.test(server!.stderr()), { timeout: 500, interval: 20 }).toBe(true);
    demo = readDemoBlock(server.stderr());
    expect(demo.organisationId).toMatch(UUID);
    expect(demo.apiKey).toMatch(/^pk_[0-9a-f]{32}$/);
    expect(demo.secret).toMatch(/^sk_[0-9a-f]{64}$/);
    expect(demo.script).toContain(`http://localhost:${server.port}/checkout-sessions`);
    // After it, a one-time sign-in link for the demo owner (docs/dashboard.md#first-run) that signs in once.
    const signInLink = /^ {2}(http:\/\/localhost:\d+\/dashboard\/sign-in-link#token=[\w-]{43})$/m.exec(
      server.stderr(),
    )?.[1];
    expect(signInLink, server.stderr()).toBeDefined();
    const token = new URL(signInLink!).hash.slice('#token='.length);
    const signedIn = await fetch(`http://127.0.0.1:${server.port}/dashboard/sign-in-link`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ token }),
    });
    expect(signedIn.status).toBe(200);
    const me = await fetch(`http://127.0.0.1:${server.port}/dashboard/api/me`, {
      headers: { Cookie: signedIn.headers.getSetCookie()[0]!.split(';')[0]! },
    }).then((r) => r.json());
    expect(me).toMatchObject({ organisations: [{ id: demo.organisationId, role: 'owner' }] });

    // The printed script as it is, with curl made to print the status code after the body.
    const scriptFile = path.join(tempDir('kassa-cli-curl-'), 'demo.sh');
    writeFileSync(scriptFile, `curl() { command curl --write-out '\\n%{http_code}' "$@"; }\n${demo.script}\n`);
    const curl = await execFileAsync('bash', [scriptFile], { timeout: 20_000 });
    const lines = curl.stdout.trimEnd().split('\n');
    expect(lines.at(-1), curl.stdout).toBe('201');
    expect(JSON.parse(lines.slice(0, -1).join('\n'))).toMatchObject({
      status: 'waiting_payment',
      fiat_currency: 'USD',
      total_amount_fiat: '39.98000000',
    });
  });

  it('the demo organisation receives by deposit addresses; the shared-wallet tests below switch it to the shared wallet', async () => {
    const shown = await kassa(['orgs', 'show', demo.organisationId, '--json'], env);
    expect(parseJsonOutput<OrganisationJson>(shown).receiving_mode).toBe('deposit_addresses');
    // Deposit mode's `dev pay` is tested in dev-pay-deposit.test.ts.
    const switched = await kassa(
      ['orgs', 'policy', '--org', demo.organisationId, '--receiving', 'shared', '--json'],
      env,
    );
    expect(parseJsonOutput<OrganisationJson>(switched).receiving_mode).toBe('shared_wallet');
  });

  it('`kassa demo` creates a session on the running server and prints its checkout_url', async () => {
    const run = await kassa(['demo'], { ...env, PORT: String(server!.port) });
    expectSuccess(run);
    expect(run.stdout).toMatch(/^session_id: +[0-9a-f-]{36}$/m);
    expect(run.stdout).toMatch(/^status: +waiting_payment$/m);
    expect(run.stdout).toMatch(new RegExp(`^checkout_url: http://localhost:${server!.port}/pay/[0-9a-f-]{36}$`, 'm'));
  });

  it('`kassa dev pay` pays a session on the sandbox chain the server started, and the server sees it paid', async () => {
    const created = await kassa(['demo', '--json'], { ...env, PORT: String(server!.port) });
    expectSuccess(created);
    const sessionId = parseJsonOutput<{ session_id: string }>(created).session_id;

    const paid = await kassa(['dev', 'pay', sessionId, '--wait', '20', '--json'], env);
    expectSuccess(paid);
    const payment = parseJsonOutput<Record<string, unknown>>(paid);
    // The first asset offered on local (BTC, as its sandbox token), what the quote asks, bound like a payer's page would.
    expect(payment).toMatchObject({
      session_id: sessionId,
      crypto_currency: 'BTC',
      chain_id: '31337',
      bound: true,
      status: 'paid',
    });
    expect(payment.tx_hash).toMatch(/^0x[0-9a-f]{64}$/);

    paidSessionId = sessionId;
    // `--wait` ends at `paid`; the bound transaction is verified by the watcher's next look at it (the watcher may have
    // credited the exact amount first), and only then does the session name it as bound_tx_hash.
    const url = `http://127.0.0.1:${server!.port}/checkout-sessions/${sessionId}`;
    const read = () => fetch(url).then((r) => r.json() as Promise<Record<string, unknown>>);
    await expect
      .poll(async () => (await read()).bound_tx_hash, { timeout: 20_000, interval: 100 })
      .toBe(payment.tx_hash)
      .catch(async (error: Error) => {
        // Which way it went wrong: the candidate never judged (unverified), or judged rejected (and why).
        const query = `{ checkoutSession(id: "${sessionId}") { transactions { txHash state reasonCode reason } } }`;
        const answer = await fetch(`http://127.0.0.1:${server!.port}/graphql`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'apollo-require-preflight': 'true' },
          body: JSON.stringify({ query }),
        }).then((r) => r.text());
        throw new Error(`${error.message}\nbound transactions: ${answer}`);
      });
    const view = await read();
    expect(view).toMatchObject({
      status: 'paid',
      overpaid: false,
      bound_tx_hash: payment.tx_hash,
      crypto_currency: 'BTC',
    });
    expect(view.total_amount_crypto).toBe(payment.amount);

    const listed = await kassa(['payments', 'list', '--session', sessionId, '--json'], env);
    expectSuccess(listed);
    expect(parseJsonOutput<Array<Record<string, unknown>>>(listed)).toEqual([
      expect.objectContaining({
        tx_hash: payment.tx_hash,
        state: 'confirmed',
        // `dev pay` broadcasts, then binds, as a payer's page does: the watcher may match the exact amount
        // first (a slow host), and the bind then finds the payment already on this session.
        attribution: expect.stringMatching(/^(bound_tx|exact_amount)$/),
        asset: 'BTC',
        network: 'local',
      }),
    ]);
  });

  it('a transfer that fits no session is listed by `kassa payments unattributed`', async () => {
    // A demo session keeps the wallet watched; an unbound transfer of an amount nobody quoted fits no session.
    const created = await kassa(['demo', '--json'], { ...env, PORT: String(server!.port) });
    const id = parseJsonOutput<{ session_id: string }>(created).session_id;
    const sent = await kassa(['dev', 'pay', id, '--asset', 'USDC', '--amount', '12.345', '--no-bind', '--json'], env);
    expectSuccess(sent);
    const txHash = parseJsonOutput<{ tx_hash: string; bound: boolean }>(sent).tx_hash;
    await waitFor(async () => {
      const listed = await kassa(['payments', 'unattributed', '--json'], env);
      return parseJsonOutput<Array<{ tx_hash: string }>>(listed).some((p) => p.tx_hash === txHash);
    }, 'the transfer among the unattributed payments');
    const text = await kassa(['payments', 'unattributed'], env);
    expectSuccess(text);
    expect(text.stdout).toMatch(
      new RegExp(`local +12\\.34500000 USDC .*${txHash}#0 +confirmed \\(\\d+ conf\\) +unattributed`),
    );
  });

  it('`kassa dev pay` refuses an unknown session (exit 4) and a bad asset (exit 2)', async () => {
    const unknown = await kassa(['dev', 'pay', randomUUID()], env);
    expect(unknown.code).toBe(4);
    expect(unknown.stderr).toMatch(/^kassa: Checkout session [0-9a-f-]{36} not found\n$/);
    const created = await kassa(['demo', '--json'], { ...env, PORT: String(server!.port) });
    const sessionId = parseJsonOutput<{ session_id: string }>(created).session_id;
    const bad = await kassa(['dev', 'pay', sessionId, '--asset', 'DOGE'], env);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('--asset must be one of');
    const [paid, tooPrecise, merchantAccount, noPayments, malformed] = await Promise.all([
      kassa(['dev', 'pay', paidSessionId], env),
      kassa(['dev', 'pay', sessionId, '--asset', 'USDT', '--amount', '0.0000001'], env),
      kassa(['dev', 'pay', sessionId, '--account', '1'], env),
      kassa(['payments', 'list', '--session', '00000000-0000-4000-8000-000000000000'], env),
      kassa(['payments', 'list', '--session', 'nope'], env),
    ]);
    expectRefusal(noPayments, 4, 'Checkout session 00000000-0000-4000-8000-000000000000 not found');
    expectRefusal(malformed, 4, 'Checkout session nope not found');
    expectRefusal(
      paid,
      2,
      `checkout session ${paidSessionId} is paid: nothing is owed (give --amount to send a late payment anyway)`,
    );
    expectRefusal(tooPrecise, 2, '--amount has more decimals than USDT has on local (6)');
    expectRefusal(merchantAccount, 2, '--account must be a sandbox payer account from 2 to 9');
    // A bind the session refuses (a first part under half of its quote: docs/payment-rules.md, rule 3) is reported
    // with the hash of the transfer that went out, and exits 1.
    const small = await kassa(['dev', 'pay', sessionId, '--asset', 'USDT', '--amount', '1', '--json'], env);
    expect(small.code, small.stderr).toBe(1);
    expect(parseJsonOutput<Record<string, unknown>>(small)).toMatchObject({
      tx_hash: expect.stringMatching(/^0x[0-9a-f]{64}$/),
      amount: '1',
      bound: false,
      not_bound_because: expect.stringMatching(/^too small: transaction 0x[0-9a-f]{64} pays 1 USDT, under half of/),
      status: 'waiting_payment',
    });
    // With --amount, a paid session gets a late payment, bound (and so recorded) as a payer's bind would be.
    const late = await kassa(['dev', 'pay', paidSessionId, '--amount', '1', '--json'], env);
    expectSuccess(late);
    expect(parseJsonOutput<{ bound: boolean; not_bound_because: string | null; status: string }>(late)).toMatchObject({
      bound: true,
      not_bound_because: null,
      status: 'paid',
    });
  });

  it('a restart reuses the demo organisation and key and continues the same sandbox chain: what was paid stays paid', async () => {
    expect(paidSessionId).not.toBe('');
    expect(await server!.stop()).toEqual({ code: 0, signal: null });
    const saved = readFileSync(path.join(dataDir, 'demo.json'), 'utf8');
    expect(existsSync(path.join(dataDir, 'sandbox-chain.json'))).toBe(true);

    server = await startKassaServer({ ...env, PORT: String(server!.port) });
    await server.ready();
    await waitFor(() => /-d "\$BODY"\n/.test(server!.stderr()), 'the demo block on stderr');
    expect(readDemoBlock(server.stderr())).toEqual(demo);
    expect(readFileSync(path.join(dataDir, 'demo.json'), 'utf8')).toBe(saved);
    const [orgs, keys] = await Promise.all([
      kassa(['orgs', 'list', '--json'], env),
      kassa(['keys', 'list', '--org', demo.organisationId, '--json'], env),
    ]);
    expectSuccess(orgs);
    expectSuccess(keys);
    expect(parseJsonOutput<OrganisationJson[]>(orgs)).toEqual([
      expect.objectContaining({ id: demo.organisationId, name: 'Demo Shop' }),
    ]);
    expect(parseJsonOutput<Array<{ api_key: string }>>(keys).map((key) => key.api_key)).toEqual([demo.apiKey]);

    // A new payment goes through after the restart, so the watcher has scanned the chain again by then.
    const created = await kassa(['demo', '--json'], { ...env, PORT: String(server.port) });
    const again = await kassa(
      ['dev', 'pay', parseJsonOutput<{ session_id: string }>(created).session_id, '--wait', '20', '--json'],
      env,
    );
    expect(parseJsonOutput<{ status: string }>(again).status).toBe('paid');
    const view = (await fetch(`http://127.0.0.1:${server.port}/checkout-sessions/${paidSessionId}`).then((r) =>
      r.json(),
    )) as Record<string, unknown>;
    expect(view.status).toBe('paid');
    const listed = await kassa(['payments', 'list', '--session', paidSessionId, '--json'], env);
    // The payment, and the late one `dev pay --amount` bound after it: both still there after the restart.
    expect(parseJsonOutput<Array<{ state: string; late: boolean }>>(listed).map((p) => [p.state, p.late])).toEqual([
      ['confirmed', false],
      ['confirmed', true],
    ]);
  });
});
