// What a create leaves to the garbage collector (docs/benchmarks.md, "p99 at half load, create"):
// `node bench/gc-probe.mjs`. Starts `kassa serve` as `npm start` does (heap cap included) on a fresh PostgreSQL
// database with --trace-gc-nvp and the inspector, sends signed creates at a steady GC_PROBE_RATE (200/s) for GC_PROBE_SECONDS (6)
// from bench/paced-load.mjs, and prints per create: bytes allocated that outlived a scavenge, by where they
// were allocated (V8's sampling heap profiler with what scavenges collected left out), bytes promoted to the old
// generation, and the mark-compacts with their pauses. Unlike req/s and p99, these hardly move with the load the
// machine is under: compare them before and after a change.
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';
import WebSocket from 'ws';
import { pacedLoad } from './paced-load.mjs';
import { START_COMMAND, admin, benchKassaEnv, databaseUrl, freePort, kassaCli, signer, waitFor } from './support.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const rate = Number(process.env.GC_PROBE_RATE ?? 200);
const seconds = Number(process.env.GC_PROBE_SECONDS ?? 6);

const name = `kassa_gc_probe_${process.pid}`;
await admin(`CREATE DATABASE "${name}"`);
const [port, inspectPort] = [await freePort(), await freePort()];
const env = benchKassaEnv({
  DATABASE_URL: databaseUrl(name),
  KASSA_DATA_DIR: mkdtempSync(path.join(tmpdir(), 'kassa-gc-probe-')),
  PORT: String(port),
  HOST: '127.0.0.1',
});
const cli = kassaCli(env);
cli('migrate');
// `npm start`'s command (its heap cap decides how often the old generation is collected), with the probes.
const [command, ...startArgs] = START_COMMAND;
const child = spawn(command, ['--trace-gc-nvp', `--inspect=127.0.0.1:${inspectPort}`, ...startArgs], {
  cwd: root,
  env,
  stdio: ['ignore', 'pipe', 'ignore'],
});
let measuring = false;
const gc = { scavenges: 0, promoted: 0, markCompacts: [] };
let pending = '';
child.stdout.on('data', (chunk) => {
  const lines = (pending + chunk).split('\n');
  pending = lines.pop();
  if (!measuring) return;
  for (const line of lines) {
    const field = (key) => Number(new RegExp(`\\b${key}=([0-9.]+)`).exec(line)?.[1] ?? 0);
    if (/\bgc=s\b/.test(line)) {
      gc.scavenges += 1;
      gc.promoted += field('promoted');
    } else if (/\bgc=mc\b/.test(line)) gc.markCompacts.push(field('pause'));
  }
});

try {
  const url = `http://127.0.0.1:${port}`;
  await waitFor(`${url}/ready`);
  const org = cli(
    'orgs',
    'create',
    '--name',
    'GC probe',
    '--receiving',
    'shared',
    '--wallet',
    `0x${randomBytes(20).toString('hex')}`,
  );
  const key = cli('keys', 'create', '--org', org.id);
  const sign = signer(key);
  // Warm: JIT, pools, caches.
  await autocannon({
    url: `${url}/checkout-sessions`,
    connections: 16,
    duration: 3,
    requests: [{ setupRequest: (request) => ({ ...request, ...sign() }) }],
  });

  const [target] = await (await fetch(`http://127.0.0.1:${inspectPort}/json/list`)).json();
  const socket = new WebSocket(target.webSocketDebuggerUrl);
  await new Promise((resolve) => socket.once('open', resolve));
  let id = 0;
  const answers = new Map();
  socket.on('message', (data) => {
    const message = JSON.parse(data);
    answers.get(message.id)?.(message.result);
  });
  const call = (method, params = {}) =>
    new Promise((resolve) => {
      answers.set(++id, resolve);
      socket.send(JSON.stringify({ id, method, params }));
    });
  await call('HeapProfiler.enable');
  await call('HeapProfiler.startSampling', {
    samplingInterval: 4096,
    includeObjectsCollectedByMajorGC: true,
    includeObjectsCollectedByMinorGC: false,
  });
  measuring = true;
  const load = await pacedLoad({
    url,
    rate,
    seconds,
    request: { path: '/checkout-sessions', signedBy: key },
  });
  measuring = false;
  const { profile } = await call('HeapProfiler.stopSampling');
  socket.close();

  const creates = load.total;
  const bySite = new Map();
  let survived = 0;
  const walk = (node) => {
    const frame = node.callFrame;
    const site = `${frame.functionName || '(anonymous)'} ${frame.url.replace(/.*node_modules\//, '').replace(root, '.')}:${frame.lineNumber + 1}`;
    survived += node.selfSize;
    bySite.set(site, (bySite.get(site) ?? 0) + node.selfSize);
    for (const next of node.children) walk(next);
  };
  walk(profile.head);
  const kb = (bytes) => (bytes / creates / 1024).toFixed(1).padStart(6);
  console.log(`${creates} creates at ${rate}/s: p50 ${load.p50} ms, p99 ${load.p99} ms`);
  console.log(`outlived a scavenge: ${kb(survived)} KB per create; promoted: ${kb(gc.promoted)} KB per create`);
  console.log(
    `scavenges: ${gc.scavenges}; mark-compacts: ${gc.markCompacts.length} (pauses ms: ${gc.markCompacts.join(', ')})`,
  );
  console.log('where what outlived a scavenge was allocated (KB per create):');
  for (const [site, bytes] of [...bySite].sort((a, b) => b[1] - a[1]).slice(0, 12))
    console.log(`${kb(bytes)}  ${site}`);
} finally {
  child.kill('SIGKILL');
  await new Promise((resolve) => child.once('exit', resolve));
  await admin(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
}
