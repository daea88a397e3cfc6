// What the bench scripts share: the Kassa they start (its environment, its CLI, npm start's command), ports,
// waiting for a server, stopping a child, reading a process's CPU time and memory from /proc (Linux), and the
// requests the loads send (signed creates, binds, the page's GraphQL query).
import { execFileSync, fork } from 'node:child_process';
import { createHmac, randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

/** `npm start`'s command (package.json), so a measured Kassa runs with the heap an operator's does. */
export const START_COMMAND = JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8')).scripts.start.split(' ');

/**
 * The environment of a Kassa under measurement: development, as `npm start` runs it, without demo data, the sandbox
 * chain or the watcher, logging warnings only, the create limit on but far above any load; `extra` on top (a key
 * given as undefined is removed, e.g. DATABASE_URL for the embedded database).
 */
export function benchKassaEnv(extra = {}) {
  const env = {
    ...process.env,
    KASSA_ENV: 'development',
    KASSA_DEMO: 'false',
    KASSA_SANDBOX: 'false',
    KASSA_WATCHER: 'false',
    LOG_LEVEL: 'warn',
    KASSA_RATE_LIMIT_CREATE: '1000000/1m',
    ...extra,
  };
  for (const [name, value] of Object.entries(env)) if (value === undefined) delete env[name];
  return env;
}

/** `kassa <args> --json` with `env`, its JSON answer parsed. */
export function kassaCli(env) {
  return (...args) =>
    JSON.parse(execFileSync('node', [path.join(root, 'bin/kassa.js'), ...args, '--json'], { env, encoding: 'utf8' }));
}

/** The hosted page's `checkoutSession` query (what the GraphQL targets ask). */
export const GRAPHQL_QUERY = `query($id: ID!) { checkoutSession(id: $id) { sessionId status cryptoCurrency totalAmountCrypto amountReceived amountDue
  cryptoOptions { ticker amount } fiatCurrency totalAmountFiat walletAddress supportedNetworks secondsUntilExpiry boundTxHash chainId
  items { name quantity unitPrice totalPrice } } }`;

/**
 * Autocannon's options for GRAPHQL_QUERY about `sessionId` on the Kassa at `baseUrl`, sent as the hosted page sends
 * its queries (web/checkout-live.js): GET, the query in the URL, Apollo's preflight header.
 */
export function graphqlGetOptions(baseUrl, sessionId) {
  return {
    url: `${baseUrl}/graphql?${new URLSearchParams({ query: GRAPHQL_QUERY, variables: JSON.stringify({ id: sessionId }) })}`,
    headers: { 'apollo-require-preflight': 'true' },
  };
}

/**
 * Autocannon's options for the hosted page's own poll of `sessionId` (web/checkout-live.js: refresh, when it has no WebSocket):
 * GET of its `CheckoutPoll` document by id (src/graphql/page-documents.ts), no preflight header. Needs `npm run build`.
 */
export async function graphqlDocumentOptions(baseUrl, sessionId) {
  const { PAGE_DOCUMENT_DATA } = await import('../dist/graphql/page-documents.js');
  const params = new URLSearchParams({
    documentId: PAGE_DOCUMENT_DATA.CheckoutPoll.id,
    variables: JSON.stringify({ id: sessionId }),
  });
  return { url: `${baseUrl}/graphql?${params}` };
}

/**
 * The path of the page's poll for any session id, made from the poll of `sessionId` by putting the id where that one
 * was: the same bytes URLSearchParams writes (a UUID needs no escaping), without re-serialising the query string for
 * every request in the load generator, which shares the machine with the servers it measures.
 */
export function pollPathFor(pollUrl, sessionId) {
  const url = new URL(pollUrl);
  const [before, after, ...more] = (url.pathname + url.search).split(sessionId);
  if (after === undefined || more.length > 0) throw new Error(`the poll's URL names ${sessionId} other than once`);
  return (id) => before + id + after;
}

/** A bind of a fresh hash no chain knows to `sessionId` (an autocannon request). */
export function bindRequest(sessionId) {
  return {
    method: 'POST',
    path: `/checkout-sessions/${sessionId}/bind-tx`,
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({
      tx_hash: `0x${randomBytes(32).toString('hex')}`,
      chain_id: '31337',
      crypto_currency: 'USDT',
    }),
  };
}

/** A TCP port free on 127.0.0.1 right now. */
export function freePort() {
  return new Promise((resolve) => {
    const server = net.createServer().listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

/** The PostgreSQL server the bench scripts make their databases on. */
export const ADMIN_URL = process.env.KASSA_BENCH_ADMIN_URL ?? 'postgresql://postgres@127.0.0.1:5432/postgres';

/** Runs `sql` (CREATE DATABASE, DROP DATABASE…) on ADMIN_URL, in a connection of its own. */
export async function admin(sql) {
  const client = new pg.Client({ connectionString: ADMIN_URL });
  await client.connect();
  try {
    await client.query(sql);
  } finally {
    await client.end();
  }
}

/** The URL of database `name` on ADMIN_URL's server. */
export function databaseUrl(name) {
  return Object.assign(new URL(ADMIN_URL), { pathname: `/${name}` }).toString();
}

/** Resolves once `url` answers as `ok` says (by default, any 2xx); gives up after `seconds` (a minute). */
export async function waitFor(url, ok = (response) => response.ok, seconds = 60) {
  for (let i = 0; i < seconds * 10; i++) {
    try {
      if (ok(await fetch(url))) return;
    } catch {}
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`${url} did not answer`);
}

/** Stops a child process with SIGTERM and resolves when it has exited. */
export function stopChild(child) {
  return new Promise((resolve) => {
    if (child.exitCode !== null) return resolve();
    child.once('exit', resolve);
    child.kill('SIGTERM');
  });
}

/** CPU time a process has used, in ms (user + system). */
export function cpuMs(pid) {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
    return (Number(fields[11]) + Number(fields[12])) * 10;
  } catch {
    return 0;
  }
}

/** CPU time a process has spent in the kernel, in ms. */
export function systemCpuMs(pid) {
  try {
    return Number(readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ')[12]) * 10;
  } catch {
    return 0;
  }
}

/** Resident set size of a process in MB. */
export function rssMb(pid) {
  try {
    const line = readFileSync(`/proc/${pid}/status`, 'utf8')
      .split('\n')
      .find((l) => l.startsWith('VmRSS:'));
    return Math.round(Number(line.split(/\s+/)[1]) / 1024);
  } catch {
    return null;
  }
}

/**
 * A basket: the quantity varies per request, as real baskets do, so quoted amounts differ. The customer id is
 * random too: each half-load run signs from a worker of its own, whose timestamps start again at the clock, and above
 * 1,000 creates a second the previous run's ran ahead of it; a body that repeated (1 in 999 by quantity alone) at a
 * reused timestamp is the same signature, refused by Kassa as a replay (401).
 */
export function basket() {
  const quantity = 1 + Math.floor(Math.random() * 999);
  return JSON.stringify({
    user: { id: `bench-${randomBytes(6).toString('hex')}`, email: 'bench@example.com' },
    items: [{ name: 'Bench item', quantity, unit_price: 19.99 }],
    currency: 'USD',
  });
}

/** Signed create requests, each with a timestamp of its own (Kassa accepts a signature once). */
export function signer(key) {
  let lastTimestamp = 0;
  return () => {
    const body = basket();
    lastTimestamp = Math.max(Date.now(), lastTimestamp + 1);
    const timestamp = String(lastTimestamp);
    return {
      method: 'POST',
      body,
      headers: {
        'content-type': 'application/json',
        'x-service-key': key.api_key,
        'x-service-timestamp': timestamp,
        'x-service-signature': createHmac('sha256', key.api_secret).update(`${timestamp}.${body}`).digest('hex'),
      },
    };
  };
}

/** The one-round-trip reference server on Kassa's database, with the create template taken from Kassa's first session. */
export async function startReference(kassa, env, children) {
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const template = {
    organisationId: kassa.org.id,
    apiKey: kassa.key.api_key,
    apiSecret: kassa.key.api_secret,
    total: kassa.created.total_amount_fiat,
    networks: kassa.created.supported_networks,
    chainId: '31337',
    wallet: kassa.created.wallet_address,
    quotes: kassa.created.crypto_options,
  };
  const child = fork(path.join(root, 'bench/reference-server.mjs'), {
    env: { ...env, PORT: String(port), BENCH_TEMPLATE: JSON.stringify(template) },
    stdio: 'inherit',
  });
  children.add(child);
  await waitFor(`${url}/checkout-sessions/${kassa.created.session_id}`);
  return { url, child };
}
