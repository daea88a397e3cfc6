// Profiles one Kassa target (create, get, graphql, graphql-get, graphql-doc, bind, cold-get or cold-graphql):
// `node bench/profile.mjs get`. Runs `kassa serve` under --cpu-prof on a fresh PostgreSQL database, drives it with
// autocannon for 8 s, prints CPU per request (Kassa and its PostgreSQL backends) and the top self-time entries by
// package and by function. PROF_FN names a function whose callers to print (default writev). The cold targets read
// each a session no request read before (bench/cold-reads.mjs: seed), the GraphQL one as the page polls. PROF_KEEP_DB
// keeps the database (its name and the created session's id are printed), for a look at what was written.
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import autocannon from 'autocannon';
import pg from 'pg';
import {
  GRAPHQL_QUERY,
  benchKassaEnv,
  graphqlDocumentOptions,
  graphqlGetOptions,
  bindRequest,
  pollPathFor,
  cpuMs,
  kassaCli,
  signer,
  systemCpuMs,
} from './support.mjs';
import { fileURLToPath } from 'node:url';
import { seed } from './cold-reads.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const target = process.argv[2] ?? 'create';
const admin = 'postgresql://postgres@127.0.0.1:5432/postgres';
const name = `kassa_prof_${process.pid}`;
const q = async (sql) => {
  const c = new pg.Client({ connectionString: admin });
  await c.connect();
  await c.query(sql);
  await c.end();
};
await q(`CREATE DATABASE "${name}"`);
await q(`ALTER DATABASE "${name}" SET track_functions = 'pl'`);
if (process.env.PROF_LOG) await q(`ALTER DATABASE "${name}" SET log_statement = 'all'`);
const profDir = mkdtempSync(path.join(tmpdir(), 'prof-'));
// bind asks a chain: a live anvil on the local network.
const anvil =
  target === 'bind'
    ? await (await import('../dist/chain/anvil.js')).startAnvil({ port: 9545 + (process.pid % 400) })
    : null;
const env = benchKassaEnv({
  DATABASE_URL: `postgresql://postgres@127.0.0.1:5432/${name}`,
  KASSA_DATA_DIR: mkdtempSync(path.join(tmpdir(), 'kp-')),
  KASSA_RATE_LIMIT_GRAPHQL: '1000000000/1m',
  KASSA_RATE_LIMIT_BIND_ADDRESS: '1000000/1m',
  PORT: String(3377 + (process.pid % 500)),
  HOST: '127.0.0.1',
  ...(anvil ? { KASSA_RPC_URLS_LOCAL: anvil.url } : {}),
});
const cli = kassaCli(env);
cli('migrate');
const org = cli(
  'orgs',
  'create',
  '--name',
  'P',
  '--receiving',
  'shared',
  '--wallet',
  `0x${randomBytes(20).toString('hex')}`,
);
const key = cli('keys', 'create', '--org', org.id);
const child = spawn(
  'node',
  [
    ...(process.env.PROF_NODE_ARGS ?? '').split(' ').filter(Boolean),
    ...(process.env.PROF_NO_CPU ? [] : ['--cpu-prof', `--cpu-prof-dir=${profDir}`]),
    path.join(root, 'bin/kassa.js'),
    'serve',
  ],
  { env, stdio: ['ignore', process.env.PROF_NODE_ARGS ? 'inherit' : 'ignore', 'inherit'] },
);
for (let i = 0; i < 200; i++) {
  try {
    if ((await fetch(`http://127.0.0.1:${env.PORT}/ready`)).ok) break;
  } catch {}
  await new Promise((r) => setTimeout(r, 100));
}
const sign = signer(key);
const created = await (await fetch(`http://127.0.0.1:${env.PORT}/checkout-sessions`, sign())).json();
// Binds go to sessions of their own (one candidate each, as payers bind): made first.
const bindTargets = [];
let nextTarget = 0;
if (target === 'bind') {
  await autocannon({
    connections: 16,
    amount: 3000,
    url: `http://127.0.0.1:${env.PORT}/checkout-sessions`,
    requests: [
      {
        setupRequest: (r) => ({ ...r, ...sign() }),
        onResponse: (status, body) => status === 201 && bindTargets.push(JSON.parse(body).session_id),
      },
    ],
  });
}
// Cold targets: sessions copied from the created one, each read once (the GraphQL lane learns the poll's shape first).
const coldIds = [];
let nextCold = 0;
if (target.startsWith('cold-')) {
  const c = new pg.Client({ connectionString: env.DATABASE_URL });
  await c.connect();
  coldIds.push(...(await seed(c, created.session_id, Number(process.env.PROF_COLD_POOL ?? 60_000), { closed: false })));
  await c.query('VACUUM ANALYZE');
  await c.end();
  const poll = await graphqlDocumentOptions(`http://127.0.0.1:${env.PORT}`, created.session_id);
  await (await fetch(poll.url)).text();
}
const coldPath = pollPathFor(
  (await graphqlDocumentOptions(`http://127.0.0.1:${env.PORT}`, created.session_id)).url,
  created.session_id,
);
const nextColdId = () => coldIds[nextCold++ % coldIds.length];
const opts =
  target === 'cold-get'
    ? {
        url: `http://127.0.0.1:${env.PORT}`,
        requests: [{ setupRequest: (r) => ({ ...r, path: `/checkout-sessions/${nextColdId()}` }) }],
      }
    : target === 'cold-graphql'
      ? {
          url: `http://127.0.0.1:${env.PORT}`,
          requests: [{ setupRequest: (r) => ({ ...r, path: coldPath(nextColdId()) }) }],
        }
      : target === 'create'
        ? {
            url: `http://127.0.0.1:${env.PORT}/checkout-sessions`,
            requests: [{ setupRequest: (r) => ({ ...r, ...sign() }) }],
          }
        : target === 'graphql'
          ? {
              url: `http://127.0.0.1:${env.PORT}/graphql`,
              method: 'POST',
              headers: { 'content-type': 'application/json' },
              body: JSON.stringify({ query: GRAPHQL_QUERY, variables: { id: created.session_id } }),
            }
          : target === 'graphql-get'
            ? graphqlGetOptions(`http://127.0.0.1:${env.PORT}`, created.session_id)
            : target === 'graphql-doc'
              ? await graphqlDocumentOptions(`http://127.0.0.1:${env.PORT}`, created.session_id)
              : target === 'bind'
                ? {
                    url: `http://127.0.0.1:${env.PORT}`,
                    requests: [
                      {
                        setupRequest: (r) => ({ ...r, ...bindRequest(bindTargets[nextTarget++ % bindTargets.length]) }),
                      },
                    ],
                  }
                : { url: `http://127.0.0.1:${env.PORT}/checkout-sessions/${created.session_id}` };
const pgPids = async () => {
  const c = new pg.Client({ connectionString: admin });
  await c.connect();
  const r = await c.query(`select pid from pg_stat_activity where datname = $1`, [name]);
  await c.end();
  return r.rows.map((x) => x.pid);
};
const before = {
  node: cpuMs(child.pid),
  nodeSys: systemCpuMs(child.pid),
  pg: new Map((await pgPids()).map((p) => [p, cpuMs(p)])),
};
if (process.env.PROF_SNAPSHOT) setTimeout(() => child.kill('SIGUSR2'), 4000);
const result = await autocannon({
  connections: 16,
  duration: Number(process.env.PROF_SECONDS ?? 8),
  ...(process.env.PROF_RATE ? { overallRate: Number(process.env.PROF_RATE) } : {}),
  ...opts,
});
console.log('p50', result.latency.p50, 'p99', result.latency.p99, 'max', result.latency.max);
{
  // The server's own event-loop delay over the run (prom-client's default metrics): stalls inside Kassa, as opposed
  // to time lost in the client or the scheduler.
  const text = await (await fetch(`http://127.0.0.1:${env.PORT}/metrics`)).text();
  const lag = (name) =>
    Number(new RegExp(`^kassa_nodejs_eventloop_lag_${name}_seconds (\\S+)$`, 'm').exec(text)?.[1]) * 1000;
  console.log(
    'event-loop delay ms: min',
    lag('min').toFixed(1),
    'p50',
    lag('p50').toFixed(1),
    'p99',
    lag('p99').toFixed(1),
    'max',
    lag('max').toFixed(1),
  );
}
const pids = await pgPids();
const pgCpu = pids.reduce((sum, p) => sum + cpuMs(p) - (before.pg.get(p) ?? 0), 0);
console.log(
  'CPU ms per request: node',
  ((cpuMs(child.pid) - before.node) / result.requests.total).toFixed(3),
  '(of it in the kernel',
  ((systemCpuMs(child.pid) - before.nodeSys) / result.requests.total).toFixed(3) + ')',
  'postgres',
  (pgCpu / result.requests.total).toFixed(3),
);
console.log(target, 'req/s', result.requests.average, 'non2xx', result.non2xx);
if (coldIds.length > 0 && nextCold > coldIds.length) console.log('warning: some cold reads read a session again');
{
  const c = new pg.Client({ connectionString: env.DATABASE_URL });
  await c.connect();
  const r = await c.query(
    `select funcname, calls, round(total_time::numeric/calls,3) as ms_per_call, round(self_time::numeric/calls,3) as self_ms from pg_stat_user_functions where calls > 0`,
  );
  for (const row of r.rows) console.log('pl/pgsql', row.funcname, row.calls, 'calls', row.ms_per_call, 'ms per call');
  await c.end();
}
child.kill('SIGTERM');
await new Promise((r) => child.once('exit', r));
if (process.env.PROF_KEEP_DB) console.log('kept database', name, 'session', created.session_id);
else await q(`DROP DATABASE "${name}" WITH (FORCE)`);
await anvil?.stop();
if (process.env.PROF_NO_CPU) process.exit(0);
const file = readdirSync(profDir).find((f) => f.endsWith('.cpuprofile'));
console.log('profile', path.join(profDir, file));
const profile = JSON.parse(readFileSync(path.join(profDir, file), 'utf8'));
const byId = new Map(profile.nodes.map((n) => [n.id, n]));
const self = new Map();
const dt = profile.timeDeltas;
let total = 0;
profile.samples.forEach((id, i) => {
  const n = byId.get(id);
  const cf = n.callFrame;
  const url = cf.url.replace(/^.*node_modules\//, 'nm/').replace(/^file:\/\/\/[^ ]*?\/(?=dist|src)/, '');
  const key = `${cf.functionName || '(anon)'} ${url}:${cf.lineNumber}`;
  self.set(key, (self.get(key) ?? 0) + dt[i]);
  total += dt[i];
});
const byFile = new Map();
for (const [k, v] of self) {
  const file = k
    .split(' ')[1]
    .split(':')[0]
    .replace(/(nm\/(@[^/]+\/)?[^/]+).*/, '$1');
  byFile.set(file, (byFile.get(file) ?? 0) + v);
}
console.log('--- by package/file (self %)');
[...byFile]
  .sort((a, b) => b[1] - a[1])
  .slice(0, 25)
  .forEach(([k, v]) => console.log(((100 * v) / total).toFixed(1).padStart(5), k));
console.log('--- top functions');
[...self]
  .sort((a, b) => b[1] - a[1])
  .slice(0, 25)
  .forEach(([k, v]) => console.log(((100 * v) / total).toFixed(1).padStart(5), k.slice(0, 150)));
// parents of the hottest native frames
const parent = new Map();
for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n);
const chains = new Map();
profile.samples.forEach((id, i) => {
  const n = byId.get(id);
  if (n.callFrame.functionName !== (process.env.PROF_FN ?? 'writev')) return;
  let p = parent.get(id);
  const names = [];
  for (let d = 0; d < 8 && p; d++, p = parent.get(p.id))
    names.push(
      `${p.callFrame.functionName || 'anon'}@${p.callFrame.url.split('/').slice(-2).join('/')}:${p.callFrame.lineNumber}`,
    );
  const k = names.join(' < ');
  chains.set(k, (chains.get(k) ?? 0) + dt[i]);
});
console.log('--- callers of', process.env.PROF_FN ?? 'writev');
[...chains]
  .sort((a, b) => b[1] - a[1])
  .slice(0, 6)
  .forEach(([k, v]) => console.log(((100 * v) / total).toFixed(1).padStart(5), k.slice(0, 600)));
// Inclusive time of Kassa's own functions (dist/): where a request's time goes, callees included.
{
  const inclusive = new Map();
  const parentOf = new Map();
  for (const n of profile.nodes) for (const c of n.children ?? []) parentOf.set(c, n.id);
  profile.samples.forEach((id, i) => {
    const seen = new Set();
    for (let at = id; at !== undefined; at = parentOf.get(at)) {
      const cf = byId.get(at).callFrame;
      if (!/\/dist\//.test(cf.url)) continue;
      const key = `${cf.functionName || '(anon)'} ${cf.url.replace(/^.*\/dist\//, 'dist/')}:${cf.lineNumber}`;
      if (seen.has(key)) continue;
      seen.add(key);
      inclusive.set(key, (inclusive.get(key) ?? 0) + dt[i]);
    }
  });
  console.log('--- inclusive, Kassa functions');
  [...inclusive]
    .sort((a, b) => b[1] - a[1])
    .slice(0, Number(process.env.PROF_TOP ?? 40))
    .forEach(([k, v]) => console.log(((100 * v) / total).toFixed(1).padStart(5), k.slice(0, 150)));
}
