// `npm run bench`: Kassa against a hand-written reference measured in the same run (issue 10).
//
//   postgres   GET /checkout-sessions/:id, POST /checkout-sessions (signed), GraphQL checkoutSession (the
//              page's poll by documentId; with its text over GET and over POST) and bind-tx on Kassa over
//              PostgreSQL; GET and create on the one-round-trip reference (bench/reference-server.mjs); p99 at
//              half of each measured maximum; RSS of each server; and the floor a bare node:http server sets on
//              the same machine (bench/bare-server.mjs): GET against GraphQL's three shapes for the GraphQL
//              ratio, and its p99 at the rate of Kassa's GET half-load row.
//   embedded   GET and create on Kassa over its embedded database (PGlite), with RSS.
//   chain      Transfer logs decoded and matched per second vs viem's generic decoder (bench/chain-decode.mjs),
//              and matched transfers per second end to end on anvil (bench/chain-e2e.mjs).
//   webhooks   deliveries per second to a fast local receiver (bench/webhooks.mjs).
//   capacity   open sessions one price can hold on one wallet, by the merchant's creates and by a payment link's
//              visits, per KASSA_UNIQUE_AMOUNT_STEPS (bench/capacity.mjs); counted, not timed.
//   deposits   gas per session collected from deposit addresses, token and native, batches of 1 and 50
//              (bench/deposits.mjs).
//   deposit-create  create in deposit mode against the shared wallet, interleaved (bench/deposit-create.mjs).
//   dashboard  the dashboard's sessions list at a million sessions and a 100,000-row export (bench/dashboard.mjs).
//   cold       reads of sessions nobody has read yet, and with 1,000,000 more stored (bench/cold-reads.mjs).
//   watcher    RPC calls and CPU of one watcher range, 100 against 100,000 open deposit addresses (bench/watcher-scale.mjs).
//
// Env: BENCH_SECONDS (10), BENCH_CONNECTIONS (16), BENCH_ONLY (comma-separated sections),
//      BENCH_CAPACITY_STEPS (100,250: the KASSA_UNIQUE_AMOUNT_STEPS values the capacity section counts with),
//      KASSA_BENCH_ADMIN_URL (postgresql://postgres@127.0.0.1:5432/postgres).
import { fork, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';
import pg from 'pg';
import { runChainDecodeBench } from './chain-decode.mjs';
import { printDashboard, runDashboardBench } from './dashboard.mjs';
import { pacedLoad } from './paced-load.mjs';
import { coldReadsSection, printColdReads } from './cold-reads.mjs';
import {
  ADMIN_URL,
  GRAPHQL_QUERY,
  graphqlDocumentOptions,
  graphqlGetOptions,
  START_COMMAND,
  admin,
  benchKassaEnv,
  bindRequest,
  cpuMs,
  databaseUrl,
  freePort,
  kassaCli,
  rssMb,
  signer,
  startReference,
  stopChild,
  waitFor,
} from './support.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const seconds = Number(process.env.BENCH_SECONDS ?? 10);
const connections = Number(process.env.BENCH_CONNECTIONS ?? 16);
const only = new Set(
  (process.env.BENCH_ONLY ?? 'postgres,cold,embedded,chain,webhooks,capacity,deposits,deposit-create,dashboard,watcher')
    .split(',')
    .map((s) => s.trim()),
);
const children = new Set();
const databases = [];

async function freshDatabase(name) {
  await admin(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
  await admin(`CREATE DATABASE "${name}"`);
  databases.push(name);
  return databaseUrl(name);
}

/** The PostgreSQL backends serving `database` (their CPU is the database's share of a request). */
async function backendPids(database) {
  if (!database) return [];
  const client = new pg.Client({ connectionString: ADMIN_URL });
  await client.connect();
  try {
    return (await client.query('SELECT pid FROM pg_stat_activity WHERE datname = $1', [database])).rows.map(
      (row) => row.pid,
    );
  } finally {
    await client.end();
  }
}

/**
 * CPU per request, of the server process, of its database backends and of the load generator (this process, where
 * autocannon runs): unlike req/s, the server's hardly moves when something else runs on the machine, so it is what
 * changes are judged by. The generator's shows what the request's own shape costs the client on the same two cores
 * (docs/benchmarks.md: a long GraphQL URL against a short REST path).
 */
async function metered(meter, run) {
  if (!meter) return run();
  const before = {
    server: cpuMs(meter.pid),
    backends: new Map((await backendPids(meter.database)).map((pid) => [pid, cpuMs(pid)])),
  };
  const client = process.cpuUsage();
  const result = await run();
  const { user, system } = process.cpuUsage(client);
  const backends = await backendPids(meter.database);
  const database = backends.reduce((sum, pid) => sum + cpuMs(pid) - (before.backends.get(pid) ?? 0), 0);
  return {
    ...result,
    cpu: {
      server: (cpuMs(meter.pid) - before.server) / result.total,
      database: meter.database ? database / result.total : null,
      client: (user + system) / 1000 / result.total,
    },
  };
}

/** Samples a process's RSS while `work` runs; returns work's result and the peak. */
async function withPeakRss(pid, work) {
  let peak = rssMb(pid) ?? 0;
  const timer = setInterval(() => (peak = Math.max(peak, rssMb(pid) ?? 0)), 200);
  try {
    return { result: await work(), peakRss: peak };
  } finally {
    clearInterval(timer);
    peak = Math.max(peak, rssMb(pid) ?? 0);
  }
}

function load(name, options, meter) {
  return metered(meter, () => loadOnce(name, options));
}

function loadOnce(name, options) {
  return new Promise((resolve, reject) => {
    autocannon({ connections, duration: seconds, ...options }, (error, result) => {
      if (error) return reject(error);
      const bad = result.non2xx + result.errors + result.timeouts;
      if (bad > 0) return reject(new Error(`${name}: ${bad} failed requests of ${result.requests.total}`));
      resolve({
        name,
        rps: result.requests.average,
        p50: result.latency.p50,
        p99: result.latency.p99,
        total: result.requests.total,
      });
    });
  });
}

/** Pairs of 1 s slices of the GraphQL goal's measurement (paired). */
const PAIRED_SLICES = Number(process.env.BENCH_PAIRED_SLICES ?? 30);

/**
 * Two targets of one server that cost about alike, in turn, `slices` times for 1 s each (every other pair in the
 * opposite order): the median of the pairs' ratios b / a, the ratio of their totals, and each one's server CPU per
 * request. A round of `interleaved` moved by a third with the host's speed, far more than such a ratio differs by.
 */
async function paired(a, b, slices = PAIRED_SLICES) {
  const { base, targets } = await slicedPairs(a, [b], slices);
  const [pair] = targets;
  return {
    median: pair.median,
    totals: pair.totals,
    pairs: pair.pairs,
    cpu: { a: base.cpu.server, b: pair.row.cpu.server },
  };
}

/**
 * Each of `targets` against `base` in pairs of 1 s slices, `slices` pairs a target, the targets' pairs taken in turn
 * (base, first; second, base; base, third; …: every other pair in the opposite order), so a change in the host's
 * speed falls on both sides of a pair within two seconds. For each target: the median of its pairs' ratios to the
 * base's slice next to it, the ratio of the totals, every pair's ratio, and a row (its median slice's req/s, p50 and
 * p99, CPU per request over all its slices); `base` is the base's row over all its slices.
 */
async function slicedPairs(base, targets, slices) {
  const baseRuns = targets.map(() => []);
  const runs = targets.map(() => []);
  const pairs = targets.map(() => []);
  let turn = 0;
  for (let i = 0; i < slices; i++) {
    for (const [index, target] of targets.entries()) {
      const got = {};
      for (const side of turn++ % 2 === 0 ? ['base', 'target'] : ['target', 'base']) {
        const which = side === 'base' ? base : target;
        got[side] = await metered(which.meter, () => loadOnce(which.name, { ...which.options, duration: 1 }));
      }
      baseRuns[index].push(got.base);
      runs[index].push(got.target);
      pairs[index].push(got.target.total / got.base.total);
    }
  }
  const totalOf = (list) => list.reduce((sum, run) => sum + run.total, 0);
  return {
    base: sliceRow(baseRuns.flat()),
    targets: targets.map((target, index) => ({
      row: sliceRow(runs[index]),
      median: median(pairs[index]),
      totals: totalOf(runs[index]) / totalOf(baseRuns[index]),
      pairs: [...pairs[index]].sort((x, y) => x - y),
    })),
  };
}

/** One target's row from its slices: the median slice's req/s, p50 and p99, CPU per request over all of them. */
function sliceRow(list) {
  const middle = (key) => median(list.map((run) => run[key]));
  return {
    name: list[0].name,
    rps: middle('total'),
    p50: middle('p50'),
    p99: middle('p99'),
    total: list.reduce((sum, run) => sum + run.total, 0),
    cpu: cpuOver(list),
    slices: list.length,
  };
}

/** CPU per request over several runs of one target (each weighted by its requests); undefined when not metered. */
function cpuOver(list) {
  if (!list[0].cpu) return undefined;
  const total = list.reduce((sum, run) => sum + run.total, 0);
  const cpuOf = (part) =>
    list.every((run) => typeof run.cpu?.[part] === 'number')
      ? list.reduce((sum, run) => sum + run.cpu[part] * run.total, 0) / total
      : null;
  return { server: cpuOf('server'), database: cpuOf('database'), client: cpuOf('client') };
}

const median = (values) => [...values].sort((x, y) => x - y)[Math.floor(values.length / 2)];

/** Rounds of each interleaved measurement (interleaved). */
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);

/**
 * The targets of the ratios, measured in turn, `rounds` times over, each for BENCH_SECONDS / rounds a round: a
 * change in the machine's speed (this shared 2-core machine's varies by a third within minutes) then falls on both
 * sides of a ratio alike. Every other round runs the targets in the opposite order, so a drift in speed during a
 * round does not favour the target that runs first; the two sides of a ratio are listed next to each other. Each
 * target's row is its median round (req/s, p50, p99) with CPU per request over all its rounds; `rounds` keeps every
 * round's req/s for medianRatio.
 */
async function interleaved(targets, rounds = ROUNDS) {
  const runs = targets.map(() => []);
  const duration = Math.max(2, Math.round(seconds / rounds));
  for (let round = 0; round < rounds; round++) {
    const order = [...targets.entries()];
    if (round % 2 === 1) order.reverse();
    for (const [index, target] of order) {
      runs[index].push(await metered(target.meter, () => loadOnce(target.name, { duration, ...target.options })));
    }
  }
  return runs.map((list) => {
    const middle = [...list].sort((a, b) => a.rps - b.rps)[Math.floor(list.length / 2)];
    return {
      ...middle,
      total: list.reduce((sum, run) => sum + run.total, 0),
      cpu: cpuOver(list),
      rounds: list.map((run) => run.rps),
    };
  });
}

/** The median over rounds of a's req/s over b's in the same round. */
function medianRatio(a, b) {
  return median(a.rounds.map((rps, round) => rps / b.rounds[round]));
}

/**
 * Lets the database finish what the run before left it (autovacuum of the rows it wrote, dirty
 * pages), so a half-load row measures the server, not that: VACUUM ANALYZE, then CHECKPOINT.
 */
async function settle(database) {
  const client = new pg.Client({
    connectionString: databaseUrl(database),
  });
  await client.connect();
  try {
    await client.query('VACUUM ANALYZE');
    await client.query('CHECKPOINT');
  } finally {
    await client.end();
  }
}

/** Runs of each half-load row; the row shows the median run's p99 (and p50), and every run's p99 besides. */
const HALF_LOAD_RUNS = 3;
const HALF_LOAD_WARMUP_SECONDS = Number(process.env.BENCH_HALF_WARMUP ?? 1);

/**
 * Half the measured maximum rate, sent at a steady pace (bench/paced-load.mjs): the latency an
 * operator sees with headroom, measured from when each request was due, right after the maximum
 * was measured. The database is settled first (settle), the rate runs HALF_LOAD_WARMUP_SECONDS uncounted (its p99
 * is printed beside the row), then HALF_LOAD_RUNS times for seconds / 2 each: on a shared 2-core machine one run's
 * p99 moves with whatever else the machine did then.
 */
async function halfLoad(name, max, url, request, database) {
  const rate = Math.max(1, Math.floor(max.rps / 2));
  if (database) await settle(database);
  const paced = (runSeconds, label) =>
    pacedLoad({ url, rate, seconds: runSeconds, request }).catch((error) => {
      throw new Error(`${name} at ${rate} req/s${label}: ${error.message}`);
    });
  // The first second of a new pattern of traffic is not the steady state the row is about (docs/benchmarks.md).
  const warmup = await paced(HALF_LOAD_WARMUP_SECONDS, ' (warm-up)');
  const runs = [];
  for (let i = 0; i < HALF_LOAD_RUNS; i++) runs.push(await paced(Math.max(2, seconds / 2), ''));
  const median = [...runs].sort((a, b) => a.p99 - b.p99)[Math.floor(runs.length / 2)];
  return {
    name: `${name} at ${rate} req/s`,
    warmupP99: warmup.p99,
    rps: median.rps,
    p50: median.p50,
    p99: median.p99,
    total: runs.reduce((sum, run) => sum + run.total, 0),
    p99s: runs.map((run) => run.p99),
  };
}

function spawnKassa(env, port) {
  const [command, ...args] = START_COMMAND;
  // BENCH_KASSA_NODE_ARGS: extra Node flags for Kassa (e.g. --cpu-prof), for looking into a result.
  const child = spawn(command, [...(process.env.BENCH_KASSA_NODE_ARGS ?? '').split(' ').filter(Boolean), ...args], {
    cwd: root,
    env: { ...env, PORT: String(port), HOST: '127.0.0.1' },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  children.add(child);
  return child;
}

function stop(child) {
  children.delete(child);
  return stopChild(child);
}

/** Kassa on one database: org, key, a session to read; returns what the targets need. */
async function startKassaFor(label, env) {
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const cli = kassaCli(env);
  if (env.DATABASE_URL) cli('migrate');
  const child = spawnKassa(env, port);
  await waitFor(`${url}/ready`);
  const org = cli(
    'orgs',
    'create',
    '--name',
    `Bench Shop ${label}`,
    '--wallet',
    `0x${randomBytes(20).toString('hex')}`,
  );
  const key = cli('keys', 'create', '--org', org.id);
  const sign = signer(key);
  const first = sign();
  const created = await (await fetch(`${url}/checkout-sessions`, first)).json();
  if (!created.session_id) throw new Error(`${label}: could not create a session: ${JSON.stringify(created)}`);
  return { child, url, org, key, sign, created, idleRss: rssMb(child.pid) };
}

async function postgresSection(report) {
  const databaseUrl = await freshDatabase(`kassa_bench_${process.pid}`);
  const dataDir = mkdtempSync(path.join(tmpdir(), 'kassa-bench-'));
  // A live chain (anvil) on the local network, so a bind asks a node as it would in use.
  const { startAnvil } = await import('../dist/chain/anvil.js');
  const anvil = await startAnvil({ port: await freePort() });
  // The create limit stays on (its counter is part of what a create costs) but far above what the bench sends.
  const env = benchKassaEnv({
    DATABASE_URL: databaseUrl,
    KASSA_DATA_DIR: dataDir,
    // The GraphQL POST rounds send tens of thousands a second (a GET served from a kept answer is not counted): at a
    // million a minute they would reach the limit's last twentieth within some minutes, where every hit is written at
    // once (a round trip each), and measure that instead.
    KASSA_RATE_LIMIT_GRAPHQL: '1000000000/1m',
    KASSA_RATE_LIMIT_BIND_ADDRESS: '1000000/1m',
    KASSA_RPC_URLS_LOCAL: anvil.url,
  });
  const kassa = await startKassaFor('postgres', env);

  const { url: refUrl, child: reference } = await startReference(kassa, env, children);
  const getPath = `/checkout-sessions/${kassa.created.session_id}`;
  const refIdle = rssMb(reference.pid);
  // The bare server answers Kassa's own bodies, so the floor rows move the same bytes.
  const graphqlBody = JSON.stringify({ query: GRAPHQL_QUERY, variables: { id: kassa.created.session_id } });
  const barePort = await freePort();
  const bareUrl = `http://127.0.0.1:${barePort}`;
  // The hosted page's own poll (its CheckoutSession document by id, src/graphql/page-documents.ts).
  const pageQuery = await graphqlDocumentOptions(kassa.url, kassa.created.session_id);
  const barePageQuery = await graphqlDocumentOptions(bareUrl, kassa.created.session_id);
  const bare = fork(path.join(root, 'bench/bare-server.mjs'), {
    env: {
      ...process.env,
      PORT: String(barePort),
      BENCH_BARE_GET: await (await fetch(kassa.url + getPath)).text(),
      BENCH_BARE_POST: await (
        await fetch(`${kassa.url}/graphql`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: graphqlBody,
        })
      ).text(),
      BENCH_BARE_DOCUMENT: await (await fetch(pageQuery.url)).text(),
    },
    stdio: 'inherit',
  });
  children.add(bare);
  await waitFor(bareUrl);
  const bareMeter = { pid: bare.pid, database: null };
  const refSign = signer(kassa.key);

  // Warm both up so JIT, pools and caches are comparable.
  for (const url of [kassa.url, refUrl, bareUrl]) await load('warmup', { url: url + getPath, duration: 2 });
  await load('warmup', {
    url: `${kassa.url}/checkout-sessions`,
    duration: 2,
    requests: [{ setupRequest: (r) => ({ ...r, ...kassa.sign() }) }],
  });
  await load('warmup', {
    url: `${refUrl}/checkout-sessions`,
    duration: 2,
    requests: [{ setupRequest: (r) => ({ ...r, ...refSign() }) }],
  });

  const results = {};
  const database = new URL(databaseUrl).pathname.slice(1);
  const kassaMeter = { pid: kassa.child.pid, database };
  const refMeter = { pid: reference.pid, database };
  const createdIds = [];
  const peaks = await withPeakRss(kassa.child.pid, () =>
    withPeakRss(reference.pid, async () => {
      // Reads: each ratio's two sides in turn, round after round (interleaved).
      // Kassa's GET between the reference's (the GET ratio) and GraphQL's (the GraphQL ratio).
      [
        results.getRef,
        results.getKassa,
        results.graphqlPage,
        results.graphqlGet,
        results.graphql,
        results.getBare,
        results.graphqlPageBare,
        results.graphqlGetBare,
        results.postBare,
      ] = await interleaved([
        { name: 'GET session — reference', options: { url: refUrl + getPath }, meter: refMeter },
        { name: 'GET session — Kassa', options: { url: kassa.url + getPath }, meter: kassaMeter },
        { name: "GraphQL, GET by documentId (the page's poll) — Kassa", options: pageQuery, meter: kassaMeter },
        {
          name: 'GraphQL checkoutSession, GET with its text — Kassa',
          options: graphqlGetOptions(kassa.url, kassa.created.session_id),
          meter: kassaMeter,
        },
        {
          name: 'GraphQL checkoutSession, POST — Kassa',
          options: {
            url: `${kassa.url}/graphql`,
            method: 'POST',
            headers: { 'content-type': 'application/json' },
            body: graphqlBody,
          },
          meter: kassaMeter,
        },
        // The floor of the GraphQL ratio: the same four shapes on a server that does nothing else.
        { name: 'GET — bare node:http (same body)', options: { url: bareUrl + getPath }, meter: bareMeter },
        { name: 'GraphQL GET by documentId — bare (same URL, answer)', options: barePageQuery, meter: bareMeter },
        {
          name: 'GraphQL GET — bare node:http (same URL, answer)',
          options: graphqlGetOptions(bareUrl, kassa.created.session_id),
          meter: bareMeter,
        },
        {
          name: 'POST with body — bare node:http (same bodies)',
          options: {
            url: `${bareUrl}/graphql`,
            method: 'POST',
            headers: { 'content-type': 'application/json' },
            body: graphqlBody,
          },
          meter: bareMeter,
        },
      ]);
      // The GraphQL goal's figure: the page's poll against REST GET in paired slices (paired says why).
      results.graphqlPagePaired = await paired(
        { name: 'GET session — Kassa', options: { url: kassa.url + getPath }, meter: kassaMeter },
        { name: "GraphQL, GET by documentId (the page's poll) — Kassa", options: pageQuery, meter: kassaMeter },
      );
      results.getKassaHalf = await halfLoad(
        'GET session — Kassa',
        results.getKassa,
        kassa.url,
        { path: getPath },
        database,
      );
      results.getBareHalf = await halfLoad(
        'GET — bare node:http (the floor)',
        results.getKassa,
        bareUrl,
        { path: getPath },
        null,
      );
      results.getRefHalf = await halfLoad(
        'GET session — reference',
        results.getRef,
        refUrl,
        { path: getPath },
        database,
      );
      [results.createKassa, results.createRef] = await interleaved([
        {
          name: 'POST create — Kassa (signed)',
          options: {
            url: `${kassa.url}/checkout-sessions`,
            requests: [
              {
                setupRequest: (r) => ({ ...r, ...kassa.sign() }),
                onResponse: (status, body) => {
                  if (status === 201) createdIds.push(JSON.parse(body).session_id);
                },
              },
            ],
          },
          meter: kassaMeter,
        },
        {
          name: 'POST create — reference (signed)',
          options: {
            url: `${refUrl}/checkout-sessions`,
            requests: [{ setupRequest: (q) => ({ ...q, ...refSign() }) }],
          },
          meter: refMeter,
        },
      ]);
      results.createKassaHalf = await halfLoad(
        'POST create — Kassa',
        results.createKassa,
        kassa.url,
        { path: '/checkout-sessions', signedBy: kassa.key },
        database,
      );
      results.createRefHalf = await halfLoad(
        'POST create — reference',
        results.createRef,
        refUrl,
        { path: '/checkout-sessions', signedBy: kassa.key },
        database,
      );
      // A fresh bind of a hash no chain knows on each session just created (the first candidate of each).
      let next = 0;
      results.bind = await load(
        'POST bind-tx — Kassa',
        {
          url: kassa.url,
          requests: [
            {
              setupRequest: (r) => ({ ...r, ...bindRequest(createdIds[next++ % createdIds.length]) }),
            },
          ],
        },
        kassaMeter,
      );
    }),
  );
  report.postgres = {
    results,
    rss: {
      kassa: { idle: kassa.idleRss, peak: peaks.peakRss },
      reference: { idle: refIdle, peak: peaks.result.peakRss },
    },
    ratios: {
      get: medianRatio(results.getKassa, results.getRef),
      create: medianRatio(results.createKassa, results.createRef),
      graphqlPageVsRest: results.graphqlPagePaired.median,
      graphqlPageVsRestTotals: results.graphqlPagePaired.totals,
      graphqlPageVsRestRounds: medianRatio(results.graphqlPage, results.getKassa),
      graphqlGetVsRest: medianRatio(results.graphqlGet, results.getKassa),
      graphqlVsRest: medianRatio(results.graphql, results.getKassa),
      barePostVsGet: medianRatio(results.postBare, results.getBare),
      bareGraphqlGetVsGet: medianRatio(results.graphqlGetBare, results.getBare),
      bareGraphqlPageVsGet: medianRatio(results.graphqlPageBare, results.getBare),
    },
  };
  await stop(kassa.child);
  await stop(reference);
  await stop(bare);
  await anvil.stop();
}

async function embeddedSection(report) {
  const dataDir = mkdtempSync(path.join(tmpdir(), 'kassa-bench-embedded-'));
  const env = benchKassaEnv({ DATABASE_URL: undefined, KASSA_DATA_DIR: dataDir });
  const kassa = await startKassaFor('embedded', env);
  const getPath = `/checkout-sessions/${kassa.created.session_id}`;
  await load('warmup', { url: kassa.url + getPath, duration: 2 });
  const results = {};
  const k = await withPeakRss(kassa.child.pid, async () => {
    const meter = { pid: kassa.child.pid, database: null };
    results.get = await load('GET session — Kassa embedded', { url: kassa.url + getPath }, meter);
    results.create = await load(
      'POST create — Kassa embedded (signed)',
      { url: `${kassa.url}/checkout-sessions`, requests: [{ setupRequest: (r) => ({ ...r, ...kassa.sign() }) }] },
      meter,
    );
  });
  report.embedded = { results, rss: { idle: kassa.idleRss, peak: k.peakRss } };
  await stop(kassa.child);
}

async function chainSection(report) {
  const decode = runChainDecodeBench(Math.min(seconds, 5));
  const { runChainE2eBench } = await import('./chain-e2e.mjs');
  const e2e = await runChainE2eBench({ databaseUrl: await freshDatabase(`kassa_bench_chain_${process.pid}`) });
  report.chain = { decode, e2e };
}

async function webhooksSection(report) {
  const { runWebhooksBench } = await import('./webhooks.mjs');
  report.webhooks = await runWebhooksBench({ databaseUrl: await freshDatabase(`kassa_bench_hooks_${process.pid}`) });
}

async function capacitySection(report) {
  const { runCapacityBench } = await import('./capacity.mjs');
  const stepsList = (process.env.BENCH_CAPACITY_STEPS ?? '100,250').split(',').map((s) => Number(s.trim()));
  const start = async (extra, label) => {
    const dataDir = mkdtempSync(path.join(tmpdir(), 'kassa-bench-capacity-'));
    const name = `kassa_bench_${label.replace(/-/g, '_')}_${process.pid}`;
    const env = benchKassaEnv({ DATABASE_URL: await freshDatabase(name), KASSA_DATA_DIR: dataDir, ...extra });
    const kassa = await startKassaFor(label, env);
    return { url: kassa.url, cli: kassaCli(env), org: kassa.org, key: kassa.key, stop: () => stop(kassa.child) };
  };
  report.capacity = await runCapacityBench(start, stepsList);
}

async function depositsSection(report) {
  const { runDepositsBench } = await import('./deposits.mjs');
  report.deposits = await runDepositsBench();
}

function print(report) {
  const pad = (text, width) => String(text).padEnd(width);
  const cpu = (r) =>
    r.cpu
      ? `${r.cpu.server.toFixed(3)}${r.cpu.database === null ? '' : ` + ${r.cpu.database.toFixed(3)}`}` +
        (r.cpu.client === null || r.cpu.client === undefined ? '' : ` (client ${r.cpu.client.toFixed(3)})`)
      : '';
  const row = (r) =>
    console.log(
      `${pad(r.name, 52)}${pad(r.rps.toFixed(0), 9)}${pad(r.p50, 8)}${pad(r.p99, 8)}${cpu(r)}` +
        (r.p99s
          ? `(p99 of each run: ${r.p99s.join(', ')}; of the ${HALF_LOAD_WARMUP_SECONDS} s warm-up: ${r.warmupP99})`
          : '') +
        (r.rounds ? ` (req/s of each round: ${r.rounds.map((rps) => Math.round(rps)).join(', ')})` : ''),
    );
  const header = `${pad('target', 52)}${pad('req/s', 9)}${pad('p50 ms', 8)}${pad('p99 ms', 8)}CPU ms/request (server + PostgreSQL; the load generator)`;
  console.log(`\nKassa benchmark — ${seconds} s per target, ${connections} connections, Node ${process.version}`);
  if (report.postgres) {
    const { results, rss, ratios } = report.postgres;
    console.log(`\nPostgreSQL\n${header}`);
    for (const key of [
      'getKassa',
      'getRef',
      'graphqlPage',
      'graphqlGet',
      'graphql',
      'getBare',
      'graphqlPageBare',
      'graphqlGetBare',
      'postBare',
      'createKassa',
      'createRef',
      'bind',
      'getKassaHalf',
      'getBareHalf',
      'getRefHalf',
      'createKassaHalf',
      'createRefHalf',
    ])
      row(results[key]);
    console.log(
      `RSS MB: Kassa idle ${rss.kassa.idle}, peak ${rss.kassa.peak}; reference idle ${rss.reference.idle}, peak ${rss.reference.peak}`,
    );
    console.log(
      `ratios (median of the ${ROUNDS} rounds' ratios): GET ${ratios.get.toFixed(2)} × reference, create ${ratios.create.toFixed(2)} × reference, GraphQL ${ratios.graphqlPageVsRestRounds.toFixed(2)} × REST GET as the page sends it (GET by documentId), ${ratios.graphqlGetVsRest.toFixed(2)} × over GET with the query text, ${ratios.graphqlVsRest.toFixed(2)} × over POST (bare node:http with the same requests and answers: ${ratios.bareGraphqlPageVsGet.toFixed(2)}, ${ratios.bareGraphqlGetVsGet.toFixed(2)} and ${ratios.barePostVsGet.toFixed(2)} × its GET)`,
    );
  }
  if (report.postgres) {
    const p = report.postgres.results.graphqlPagePaired;
    console.log(
      `GraphQL goal (≥ 1.0 × REST GET), the page's poll against REST GET in ${p.pairs.length} pairs of 1 s slices: ` +
        `median ${p.median.toFixed(3)} × (totals ${p.totals.toFixed(3)} ×; server CPU ms/request: poll ` +
        `${p.cpu.b.toFixed(4)}, GET ${p.cpu.a.toFixed(4)}; pairs ${p.pairs[0].toFixed(2)}–${p.pairs.at(-1).toFixed(2)})`,
    );
  }
  if (report.cold) printColdReads(report.cold, row, header);
  if (report.embedded) {
    const { results, rss } = report.embedded;
    console.log(`\nEmbedded database (PGlite)\n${header}`);
    row(results.get);
    row(results.create);
    console.log(`RSS MB: idle ${rss.idle}, peak under load ${rss.peak}`);
  }
  if (report.chain) {
    const { decode, e2e } = report.chain;
    console.log(
      `\nChain\n${pad('Transfer logs decoded and matched — Kassa', 52)}${Math.round(decode.kassa.logsPerSecond)} logs/s`,
    );
    console.log(
      `${pad('Transfer logs — viem decodeEventLog baseline', 52)}${Math.round(decode.baseline.logsPerSecond)} logs/s (ratio ${decode.ratio.toFixed(1)})`,
    );
    console.log(
      `${pad(`Matched transfers end to end (${e2e.transfers} sessions, one wallet)`, 52)}${e2e.perSecond.toFixed(1)} transfers/s (${e2e.seconds.toFixed(1)} s)`,
    );
  }
  if (report.capacity) {
    console.log('\nCapacity of one price (77.77 USD) on one wallet: open sessions until the first 409');
    console.log(
      `${pad('KASSA_UNIQUE_AMOUNT_STEPS', 28)}${pad('API creates', 14)}${pad('link visits', 14)}API creates after them`,
    );
    for (const row of report.capacity)
      console.log(`${pad(row.steps, 28)}${pad(row.api, 14)}${pad(row.link, 14)}${row.apiAfterLink}`);
    const [first] = report.capacity;
    if (first?.refusal) console.log(`409 of a create: ${first.refusal}`);
    if (first?.linkRefusal) console.log(`409 of a link visit: ${first.linkRefusal}`);
  }
  if (report.webhooks) {
    const w = report.webhooks;
    console.log(
      `\nWebhooks\n${pad(`Deliveries to a local receiver (${w.deliveries} events)`, 52)}${w.perSecond.toFixed(1)} deliveries/s (${w.seconds.toFixed(1)} s)`,
    );
  }
  if (report.dashboard) printDashboard(report.dashboard);
  if (report.deposits) {
    const d = report.deposits;
    const label = { token: '6-decimal token', registry: 'same, every registry token listed', native: 'native coin' };
    console.log(`\nDeposit addresses: gas per collected session (goal: token, batch of 50 ≤ ${d.goal})`);
    for (const r of d.rows) {
      console.log(`${pad(`${label[r.kind]}, batch of ${r.batch}`, 52)}${Math.round(r.perSession)} gas/session`);
    }
  }
}

async function main() {
  const report = { at: new Date().toISOString(), seconds, connections, node: process.version };
  if (only.has('postgres')) await postgresSection(report);
  const tools = { freshDatabase, startKassaFor, slicedPairs, stop, connections, children };
  if (only.has('cold')) await coldReadsSection(report, tools);
  if (only.has('embedded')) await embeddedSection(report);
  if (only.has('chain')) await chainSection(report);
  if (only.has('webhooks')) await webhooksSection(report);
  if (only.has('capacity')) await capacitySection(report);
  if (only.has('deposits')) await depositsSection(report);
  const depositCreate = only.has('deposit-create') ? await import('./deposit-create.mjs') : null;
  if (depositCreate) {
    const databaseUrl = await freshDatabase(`kassa_bench_deposit_create_${process.pid}`);
    report.depositCreate = await depositCreate.runDepositCreateBench({ databaseUrl, seconds, connections });
  }
  if (only.has('dashboard')) report.dashboard = await runDashboardBench();
  const watcher = only.has('watcher') ? await import('./watcher-scale.mjs') : null;
  if (watcher) report.watcher = await watcher.runWatcherScaleBench();
  print(report);
  if (watcher) watcher.printWatcherScale(report.watcher, (text, width) => String(text).padEnd(width));
  if (depositCreate) depositCreate.printDepositCreate(report.depositCreate);
  mkdirSync(path.join(root, 'bench/results'), { recursive: true });
  writeFileSync(path.join(root, 'bench/results/latest.json'), JSON.stringify(report, null, 2));
}

try {
  await main();
} finally {
  for (const child of [...children]) await stop(child);
  for (const name of databases) await admin(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`).catch(() => {});
}
