// `npm run bench`: Kassa against baselines measured in the same run, on a real PostgreSQL.
//   GET  /checkout-sessions/:id   Kassa  vs  bare Express 5 + pg returning the same JSON
//   POST /checkout-sessions       Kassa (signed, validated, quoted, Prisma, outbox)  vs  a raw pg insert of the same rows
//   chain watcher                 Transfer logs decoded and matched per second  vs  viem's generic decodeEventLog (bench/chain-decode.mjs)
// Env: BENCH_SECONDS (default 10), BENCH_CONNECTIONS (16), KASSA_BENCH_ADMIN_URL (postgresql://postgres@127.0.0.1:5432/postgres).
import { execFileSync, fork, spawn } from 'node:child_process';
import { createHmac } from 'node:crypto';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';
import pg from 'pg';
import { runChainDecodeBench } from './chain-decode.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const seconds = Number(process.env.BENCH_SECONDS ?? 10);
const connections = Number(process.env.BENCH_CONNECTIONS ?? 16);
const adminUrl = process.env.KASSA_BENCH_ADMIN_URL ?? 'postgresql://postgres@127.0.0.1:5432/postgres';
const database = `kassa_bench_${process.pid}`;
const databaseUrl = Object.assign(new URL(adminUrl), { pathname: `/${database}` }).toString();
const children = [];

async function admin(sql) {
  const client = new pg.Client({ connectionString: adminUrl });
  await client.connect();
  try { await client.query(sql); } finally { await client.end(); }
}

function freePort() {
  return new Promise((resolve) => {
    const server = net.createServer().listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

async function waitForReady(url) {
  for (let i = 0; i < 300; i++) {
    try { if ((await fetch(`${url}/ready`)).ok) return; } catch {}
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`${url} did not become ready`);
}

function run(name, options) {
  return new Promise((resolve, reject) => {
    autocannon({ connections, duration: seconds, ...options }, (error, result) => {
      if (error) return reject(error);
      const bad = result.non2xx + result.errors;
      if (bad > 0) return reject(new Error(`${name}: ${bad} failed requests of ${result.requests.total}`));
      resolve({ name, rps: result.requests.average, p50: result.latency.p50, p99: result.latency.p99, total: result.requests.total });
    });
  });
}

async function main() {
  await admin(`DROP DATABASE IF EXISTS "${database}" WITH (FORCE)`);
  await admin(`CREATE DATABASE "${database}"`);
  const dataDir = mkdtempSync(path.join(tmpdir(), 'kassa-bench-'));
  const env = { ...process.env, DATABASE_URL: databaseUrl, KASSA_DATA_DIR: dataDir, KASSA_ENV: 'development', KASSA_DEMO: 'false', KASSA_SANDBOX: 'false', KASSA_WATCHER: 'false', LOG_LEVEL: 'warn' };
  const cli = (...args) => JSON.parse(execFileSync('node', [path.join(root, 'bin/kassa.js'), ...args, '--json'], { env, encoding: 'utf8' }));
  cli('migrate');
  const org = cli('orgs', 'create', '--name', 'Bench Shop', '--wallet', '0x70997970c51812dc3a010c7d01b50e0d17dc79c8');
  const key = cli('keys', 'create', '--org', org.id);

  const kassaPort = await freePort();
  const kassaUrl = `http://127.0.0.1:${kassaPort}`;
  const kassa = spawn('node', [path.join(root, 'bin/kassa.js'), 'serve'], { env: { ...env, PORT: String(kassaPort), HOST: '127.0.0.1' }, stdio: ['ignore', 'ignore', 'inherit'] });
  children.push(kassa);
  await waitForReady(kassaUrl);

  const body = JSON.stringify({ user: { id: 'bench-customer', email: 'bench@example.com' }, items: [{ name: 'Bench item', quantity: 3, unit_price: 19.99 }], currency: 'USD' });
  const timestamp = String(Date.now());
  const headers = {
    'content-type': 'application/json',
    'x-service-key': key.api_key,
    'x-service-timestamp': timestamp,
    'x-service-signature': createHmac('sha256', key.api_secret).update(`${timestamp}.${body}`).digest('hex'),
  };
  const created = await (await fetch(`${kassaUrl}/checkout-sessions`, { method: 'POST', headers, body })).json();
  if (!created.session_id) throw new Error(`could not create a session: ${JSON.stringify(created)}`);

  const basePort = await freePort();
  const baseUrl = `http://127.0.0.1:${basePort}`;
  const template = { organisationId: org.id, total: created.total_amount_fiat, networks: created.supported_networks, wallet: created.wallet_address, quotes: created.crypto_options };
  const baseline = fork(path.join(root, 'bench/baseline-server.mjs'), { env: { ...env, PORT: String(basePort), BENCH_TEMPLATE: JSON.stringify(template) }, stdio: 'inherit' });
  children.push(baseline);
  await waitForReady(baseUrl).catch(async () => {
    // The baseline has no /ready; a GET of the session proves it is up.
    for (let i = 0; i < 100; i++) {
      try { if ((await fetch(`${baseUrl}/checkout-sessions/${created.session_id}`)).ok) return; } catch {}
      await new Promise((r) => setTimeout(r, 100));
    }
    throw new Error('baseline did not start');
  });

  const getPath = `/checkout-sessions/${created.session_id}`;
  const results = [];
  // Warm both up briefly so JIT and pools are comparable.
  await run('warmup', { url: kassaUrl + getPath, duration: 2 });
  await run('warmup', { url: baseUrl + getPath, duration: 2 });
  results.push(await run('GET session — Kassa', { url: kassaUrl + getPath }));
  results.push(await run('GET session — Express+pg baseline', { url: baseUrl + getPath }));
  results.push(await run('POST create — Kassa (signed)', { url: `${kassaUrl}/checkout-sessions`, method: 'POST', headers, body }));
  results.push(await run('POST create — raw pg insert baseline', { url: `${baseUrl}/checkout-sessions`, method: 'POST', headers: { 'content-type': 'application/json' }, body }));

  const pad = (text, width) => String(text).padEnd(width);
  console.log(`\nKassa benchmark — ${seconds}s per target, ${connections} connections, PostgreSQL, Node ${process.version}\n`);
  console.log(`${pad('target', 40)}${pad('req/s', 10)}${pad('p50 ms', 9)}${pad('p99 ms', 9)}`);
  for (const r of results) console.log(`${pad(r.name, 40)}${pad(r.rps.toFixed(0), 10)}${pad(r.p50, 9)}${pad(r.p99, 9)}`);
  const ratio = (a, b) => (a.rps / b.rps).toFixed(2);
  const chain = runChainDecodeBench(Math.min(seconds, 5));
  console.log(`\n${pad('target', 50)}logs/s`);
  for (const r of [chain.kassa, chain.baseline]) console.log(`${pad(r.name, 50)}${Math.round(r.logsPerSecond)}`);
  const ratios = { get: ratio(results[0], results[1]), create: ratio(results[2], results[3]), chainDecode: chain.ratio.toFixed(2) };
  console.log(`\nratios (Kassa ÷ baseline): GET ${ratios.get}, create ${ratios.create}, chain logs decoded+matched ${ratios.chainDecode}`);
  mkdirSync(path.join(root, 'bench/results'), { recursive: true });
  writeFileSync(path.join(root, 'bench/results/latest.json'), JSON.stringify({ at: new Date().toISOString(), seconds, connections, results, chain, ratios }, null, 2));
}

try {
  await main();
} finally {
  for (const child of children) child.kill('SIGTERM');
  await new Promise((r) => setTimeout(r, 500));
  await admin(`DROP DATABASE IF EXISTS "${database}" WITH (FORCE)`).catch(() => {});
}
