// The chain watcher at scale (issue 34): one watcher tick over a range of 1,000 USDT transfers to open deposit
// addresses (100 per block), with 100 and with 100,000 deposit sessions open (copied with SQL in bulk from one real
// session, each given an address of its own). Counted per range: JSON-RPC calls by method (through a counting proxy
// in front of a real anvil) and the CPU of the watching process (this one: Kassa's domain, Prisma and viem).
// Goal: CPU grows by less than 5 × from 100 to 100,000 open addresses, for the same transfers (to 100 sessions);
// the same with the transfers spread over 1,000 sessions is shown beside it. Counts and ratios, not timings.
// Runs alone too: `node bench/watcher-scale.mjs` (needs a PostgreSQL and `npm run build`).
import { fork } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { createServer } from 'node:http';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { encodeFunctionData, parseAbi } from 'viem';
import { seed } from './cold-reads.mjs';
import { admin, benchKassaEnv, databaseUrl, freePort, kassaCli, stopChild } from './support.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const ERC20 = parseAbi(['function transfer(address to, uint256 amount) returns (bool)']);
const TRANSFERS = Number(process.env.BENCH_WATCHER_TRANSFERS ?? 1000);
const PER_BLOCK = 100;
const debug = (message) => process.env.BENCH_DEBUG && process.stderr.write(`watcher bench: ${message}\n`);

/**
 * A JSON-RPC proxy that counts the calls by method (a batch counts each of its calls), in a child process so that its
 * CPU is not the watcher's; `GET /counts` answers them and zeroes them.
 */
function serveCountingProxy(target, port) {
  let counts = {};
  const server = createServer((req, res) => {
    if (req.method === 'GET') {
      res.end(JSON.stringify(counts));
      counts = {};
      return;
    }
    const chunks = [];
    req.on('data', (chunk) => chunks.push(chunk));
    req.on('end', async () => {
      const body = Buffer.concat(chunks).toString();
      const parsed = JSON.parse(body);
      for (const call of Array.isArray(parsed) ? parsed : [parsed])
        counts[call.method] = (counts[call.method] ?? 0) + 1;
      const answer = await fetch(target, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
      res.writeHead(answer.status, { 'content-type': 'application/json' });
      res.end(await answer.text());
    });
  });
  server.listen(port, '127.0.0.1', () => process.send?.('ready'));
}

async function countingProxy(target) {
  const port = await freePort();
  const child = fork(fileURLToPath(import.meta.url), ['--count-rpc', target, String(port)], { stdio: 'inherit' });
  await new Promise((resolve, reject) => {
    child.once('message', resolve);
    child.once('exit', () => reject(new Error('the counting proxy exited')));
  });
  const url = `http://127.0.0.1:${port}`;
  return {
    url,
    counts: async () => (await fetch(url)).json(),
    close: () => stopChild(child),
  };
}

/** BENCH_WATCHER_PROFILE=<path prefix>: the measured tick under the V8 profiler; answers a function that saves it. */
async function startProfile() {
  const { Session } = await import('node:inspector/promises');
  const { writeFileSync } = await import('node:fs');
  const session = new Session();
  session.connect();
  await session.post('Profiler.enable');
  await session.post('Profiler.start');
  return async (file) => {
    const { profile } = await session.post('Profiler.stop');
    writeFileSync(file, JSON.stringify(profile));
    session.disconnect();
  };
}

async function rpc(url, method, params = []) {
  const response = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
  });
  const answer = await response.json();
  if (answer.error) throw new Error(`${method}: ${answer.error.message}`);
  return answer.result;
}

/** `count` USDT transfers to `addresses` in turn, sent from anvil's unlocked accounts and mined in as few blocks. */
async function payAddresses(anvilUrl, usdt, addresses, count, sandboxAccount) {
  const payers = [2, 3, 4, 5].map((index) => sandboxAccount(index).address);
  const nonces = await Promise.all(payers.map((a) => rpc(anvilUrl, 'eth_getTransactionCount', [a, 'pending'])));
  await rpc(anvilUrl, 'evm_setAutomine', [false]);
  try {
    const calls = [];
    for (let i = 0; i < count; i += 1) {
      const p = i % payers.length;
      const data = encodeFunctionData({
        abi: ERC20,
        functionName: 'transfer',
        args: [addresses[i % addresses.length], 1_000_000n],
      });
      const nonce = `0x${(Number(BigInt(nonces[p])) + Math.floor(i / payers.length)).toString(16)}`;
      calls.push({
        jsonrpc: '2.0',
        id: i,
        method: 'eth_sendTransaction',
        params: [{ from: payers[p], to: usdt, data, gas: '0x186a0', nonce }],
      });
    }
    // A block per PER_BLOCK transfers: the range spreads over several blocks, as deposits do.
    let blocks = 0;
    for (let start = 0; start < count; start += PER_BLOCK) {
      const batch = calls.slice(start, start + PER_BLOCK);
      const answers = await (
        await fetch(anvilUrl, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify(batch),
        })
      ).json();
      const failed = answers.find((a) => a.error);
      if (failed) throw new Error(`eth_sendTransaction: ${failed.error.message}`);
      await rpc(anvilUrl, 'evm_mine');
      blocks += 1;
      const pool = await rpc(anvilUrl, 'txpool_status');
      if (Number(BigInt(pool.pending)) > 0) throw new Error('a block did not take all its transfers');
    }
    return blocks;
  } finally {
    await rpc(anvilUrl, 'evm_setAutomine', [true]);
  }
}

async function scenario({ open, paidCount, anvilUrl, local, dist }) {
  const name = `kassa_bench_watcher_${open}_${process.pid}_${Date.now() % 100000}`;
  await admin(`CREATE DATABASE "${name}"`);
  const url = databaseUrl(name);
  const proxy = await countingProxy(anvilUrl);
  const env = benchKassaEnv({
    DATABASE_URL: url,
    KASSA_DATA_DIR: mkdtempSync(path.join(tmpdir(), 'kassa-bench-watcher-')),
    KASSA_NETWORKS: 'local',
    KASSA_RPC_URLS_LOCAL: proxy.url,
    KASSA_CONFIRMATIONS_LOCAL: '1',
  });
  kassaCli(env)('migrate');
  const config = dist.loadConfig(env);
  const logger = dist.createLogger(process.env.BENCH_DEBUG ? 'info' : 'silent');
  const runtime = await dist.openRuntime(config, logger, 'server');
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  let watchers;
  try {
    const { ctx } = runtime;
    const wallet = `0x${randomBytes(20).toString('hex')}`;
    const organisation = await dist.createOrganisation(ctx, { name: 'Watcher bench', wallet, receiving: 'deposit' });
    const key = await dist.createApiKey(ctx, organisation.id);
    const input = {
      user: { id: 'watcher-bench', email: 'w@example.com' },
      items: [{ name: 'Item', quantity: 1, unitPrice: '25' }],
      currency: 'USD',
    };
    const created = await dist.createCheckoutSession(ctx, { organisationId: organisation.id, apiKeyId: key.id }, input);
    const template = created.session?.id ?? created.id;
    const ids = [template, ...(open > 1 ? await seed(client, template, open - 1, { closed: false }) : [])];
    const addresses = ids.map(() => `0x${randomBytes(20).toString('hex')}`);
    await client.query(
      `UPDATE checkout_session_networks n SET wallet_address = v.address
         FROM unnest($1::text[], $2::text[]) AS v(id, address) WHERE n.session_id::text = v.id`,
      [ids, addresses],
    );
    await client.query('ANALYZE');
    debug(`${open} sessions open`);

    // Started at the head and brought up to date first, so the measured tick scans the transfers' range only.
    watchers = dist.startChainWatchers(
      ctx,
      {
        intervalMs: 3_600_000,
        maxBlocksPerRange: 1000,
        backfillBlocks: 0,
        leaseSeconds: 60,
        rpcTimeoutMs: 30_000,
        droppedAfterMinutes: 60,
      },
      logger,
    );
    await watchers.tick();
    const paid = addresses.slice(0, paidCount);
    const usdt = local.tokens.find((t) => t.ticker === 'USDT').address;
    const blocks = await payAddresses(anvilUrl, usdt, paid, TRANSFERS, dist.sandboxAccount);
    debug(`${TRANSFERS} transfers mined in ${blocks} blocks`);
    await proxy.counts();
    const profiler = process.env.BENCH_WATCHER_PROFILE ? await startProfile() : null;
    const before = process.cpuUsage();
    await watchers.tick();
    const used = process.cpuUsage(before);
    await profiler?.(`${process.env.BENCH_WATCHER_PROFILE}-${open}.cpuprofile`);
    const calls = Object.fromEntries(Object.entries(await proxy.counts()).sort(([a], [b]) => a.localeCompare(b)));
    const found = Number(
      (await client.query('SELECT count(*)::int AS n FROM payments WHERE token_address IS NOT NULL')).rows[0].n,
    );
    if (found !== TRANSFERS)
      throw new Error(`watcher bench: ${found} of ${TRANSFERS} transfers recorded (${open} open)`);
    return {
      open,
      paid: paidCount,
      transfers: TRANSFERS,
      blocks,
      cpuMs: (used.user + used.system) / 1000,
      calls,
      totalCalls: Object.values(calls).reduce((a, b) => a + b, 0),
    };
  } finally {
    await watchers?.stop();
    await client.end();
    await runtime.close();
    await proxy.close();
    await admin(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`).catch(() => {});
  }
}

// Open addresses in the large case (BENCH_WATCHER_OPEN); the small case has 100.
const LARGE = Number(process.env.BENCH_WATCHER_OPEN ?? 100_000);

export async function runWatcherScaleBench({ large = LARGE } = {}) {
  const dist = {
    ...(await import('../dist/config.js')),
    ...(await import('../dist/logging.js')),
    ...(await import('../dist/runtime.js')),
    ...(await import('../dist/chain/chain-watcher.js')),
    ...(await import('../dist/chain/sandbox.js')),
    ...(await import('../dist/domain/organisations/organisations.js')),
    ...(await import('../dist/domain/organisations/api-keys.js')),
    ...(await import('../dist/domain/sessions/create-checkout-session.js')),
  };
  const { startAnvil } = await import('../dist/chain/anvil.js');
  const registry = JSON.parse(readFileSync(path.join(root, 'config/networks.json'), 'utf8'));
  const anvil = await startAnvil({ port: await freePort() });
  try {
    const local = { ...registry.networks.find((n) => n.slug === 'local'), rpcUrls: [anvil.url] };
    await dist.ensureSandboxTokens(anvil.url, local);
    await dist.ensureDepositContracts(anvil.url, local);
    // The same 1,000 transfers to 100 addresses with 100 and with `large` open: the goal's ratio, the open addresses'
    // own cost. Then 1,000 transfers to 1,000 addresses, as many sessions settling. A first run warms the JIT.
    const cases = [
      { open: 100, paidCount: 100 },
      { open: 100, paidCount: 100 },
      { open: large, paidCount: 100 },
      { open: large, paidCount: 1_000 },
    ];
    const rows = [];
    for (const c of cases) rows.push(await scenario({ ...c, anvilUrl: anvil.url, local, dist }));
    const [warmUp, small, sameTransfers, manySessions] = rows;
    return {
      rows: [small, sameTransfers, manySessions],
      warmUp,
      goal: 5,
      cpuRatio: sameTransfers.cpuMs / small.cpuMs,
      cpuRatioManySessions: manySessions.cpuMs / small.cpuMs,
    };
  } finally {
    await anvil.stop();
  }
}

export function printWatcherScale(result, pad) {
  const { transfers } = result.rows[0];
  console.log(
    `\nThe watcher, one range of ${transfers} USDT transfers to deposit addresses (goal: CPU grows < ${result.goal} ×)`,
  );
  for (const r of result.rows) {
    const calls = Object.entries(r.calls)
      .map(([method, n]) => `${method} ${n}`)
      .join(', ');
    const label = `${r.open.toLocaleString('en')} open, ${r.paid.toLocaleString('en')} of them paid`;
    console.log(`${pad(label, 40)}${pad(`${Math.round(r.cpuMs)} ms CPU`, 16)}${r.totalCalls} calls: ${calls}`);
  }
  console.log(
    `CPU ratio, ${result.rows[1].open.toLocaleString('en')} over 100 open, the same transfers: ` +
      `${result.cpuRatio.toFixed(2)} × (${result.cpuRatioManySessions.toFixed(2)} × with ${transfers} sessions paid)`,
  );
}

if (process.argv[2] === '--count-rpc') {
  serveCountingProxy(process.argv[3], Number(process.argv[4]));
} else if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const result = await runWatcherScaleBench();
  console.log(JSON.stringify(result, null, 2));
  printWatcherScale(result, (text, width) => String(text).padEnd(width));
}
