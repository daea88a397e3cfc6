// Instructions per request, counted by valgrind (callgrind), for comparing what two lanes or two builds cost on a
// machine whose speed moves by a third within minutes (docs/benchmarks.md: "Counting instructions").
//
//   node bench/instructions.mjs [get,graphql-doc,graphql-get,graphql-post]   (default get,graphql-doc)
//
// Starts the built Kassa (npm run build first) under `valgrind --tool=callgrind --instr-atstart=no` on a fresh
// PostgreSQL database, sends each target INSTR_REQUESTS requests (default 1500, 4 connections) twice uncounted to warm
// it up, then INSTR_ROUNDS rounds (default 5) with instrumentation on only while each target's requests run. Prints
// instructions per request on Kassa's main thread (the request's own work) and on all its threads (V8's compiler and
// collector helpers besides) for each round, and the least of the rounds. Work that runs on a timer (the session
// cache's 60 s re-read, the rate-limit flush, the outbox) falls into whichever round it meets, and under valgrind a
// second holds about a fiftieth of the requests it does natively: such a round reads far above the others, so the
// least round is the figure to compare. (Before 2026-11-26's late session a kept GraphQL answer holding
// `secondsUntilExpiry` also lapsed each second and went back to Apollo, fifty times as often per request as natively;
// it is now written again in place: src/graphql/cached-queries.ts.) INSTR_DUMP=1 writes a callgrind file per round (its
// directory is printed) for callgrind_annotate, and runs Kassa with --perf-basic-prof, whose map names the JIT code.
// Needs valgrind (Debian's `valgrind` package); not part of `npm run bench`.
import { execFileSync, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';
import {
  GRAPHQL_QUERY,
  START_COMMAND,
  admin,
  benchKassaEnv,
  databaseUrl,
  freePort,
  graphqlDocumentOptions,
  graphqlGetOptions,
  kassaCli,
  signer,
  waitFor,
} from './support.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const targets = (process.argv[2] ?? 'get,graphql-doc').split(',');
const requests = Number(process.env.INSTR_REQUESTS ?? 1500);
const rounds = Number(process.env.INSTR_ROUNDS ?? 5);
const name = `kassa_instr_${process.pid}`;

try {
  execFileSync('valgrind', ['--version'], { stdio: 'ignore' });
} catch {
  console.error('bench/instructions.mjs needs valgrind (apt install valgrind)');
  process.exit(2);
}

await admin(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
await admin(`CREATE DATABASE "${name}"`);
const env = benchKassaEnv({
  DATABASE_URL: databaseUrl(name),
  KASSA_DATA_DIR: mkdtempSync(path.join(tmpdir(), 'kassa-instr-')),
  KASSA_RATE_LIMIT_GRAPHQL: '1000000000/1m',
  PORT: String(await freePort()),
  HOST: '127.0.0.1',
});
const url = `http://127.0.0.1:${env.PORT}`;
const cli = kassaCli(env);
cli('migrate');
const [node, ...args] = START_COMMAND;
const outDir = mkdtempSync(path.join(tmpdir(), 'kassa-callgrind-'));
const child = spawn(
  'valgrind',
  [
    '--tool=callgrind',
    '--instr-atstart=no',
    `--callgrind-out-file=${outDir}/callgrind.%p`,
    node,
    ...(process.env.INSTR_DUMP ? ['--perf-basic-prof'] : []),
    ...args,
  ],
  { cwd: root, env, stdio: ['ignore', 'ignore', 'inherit'] },
);
// valgrind names its control pipes after $HOST (Kassa's listen address here): callgrind_control must see the same.
const control = (...options) =>
  execFileSync('callgrind_control', [...options, String(child.pid)], {
    encoding: 'utf8',
    env: { ...env },
    stdio: ['ignore', 'pipe', 'ignore'],
  });

try {
  // Under valgrind Kassa takes a minute or two to start.
  await waitFor(`${url}/ready`, undefined, 600);
  const org = cli(
    'orgs',
    'create',
    '--name',
    'Instr',
    '--receiving',
    'shared',
    '--wallet',
    `0x${randomBytes(20).toString('hex')}`,
  );
  const created = await (
    await fetch(`${url}/checkout-sessions`, signer(cli('keys', 'create', '--org', org.id))())
  ).json();
  const id = created.session_id;
  const options = {
    get: { url: `${url}/checkout-sessions/${id}` },
    'graphql-get': graphqlGetOptions(url, id),
    'graphql-doc': await graphqlDocumentOptions(url, id),
    'graphql-post': {
      url: `${url}/graphql`,
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ query: GRAPHQL_QUERY, variables: { id } }),
    },
  };
  for (const target of targets) if (!options[target]) throw new Error(`unknown target ${target}`);
  const load = (target) =>
    new Promise((resolve, reject) =>
      autocannon({ connections: 4, amount: requests, ...options[target] }, (error, result) => {
        if (error) return reject(error);
        if (result.non2xx + result.errors > 0) return reject(new Error(`${target}: failed requests`));
        resolve(result.requests.total);
      }),
    );
  for (let i = 0; i < 2; i++) for (const target of targets) await load(target);
  const results = Object.fromEntries(targets.map((target) => [target, []]));
  for (let round = 0; round < rounds; round++) {
    for (const target of targets) {
      control('--zero');
      control('--instr=on');
      const total = await load(target);
      const counters = control('-e');
      if (process.env.INSTR_DUMP) control(`--dump=${target} round ${round + 1}`);
      control('--instr=off');
      const threads = [...counters.matchAll(/Th (\d+)\s+([\d,]+)/g)].map((m) => [m[1], Number(m[2].replace(/,/g, ''))]);
      const main = (threads.find(([thread]) => thread === '1')?.[1] ?? 0) / total;
      const all = threads.reduce((sum, [, count]) => sum + count, 0) / total;
      results[target].push({ main, all });
      console.log(
        `round ${round + 1} ${target}: main thread ${Math.round(main)}, all threads ${Math.round(all)} per request`,
      );
    }
  }
  const least = (values) => Math.round(Math.min(...values));
  for (const target of targets)
    console.log(
      `${target}: least ${least(results[target].map((r) => r.main))} instructions per request on the main thread, ` +
        `${least(results[target].map((r) => r.all))} on all threads`,
    );
  if (process.env.INSTR_DUMP)
    console.log(`callgrind files: ${outDir}; JIT code's names: /tmp/perf-${child.pid}.map (--perf-basic-prof)`);
} finally {
  child.kill('SIGKILL');
  await admin(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
}
