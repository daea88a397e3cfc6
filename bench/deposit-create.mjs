// `BENCH_ONLY=deposit-create npm run bench`: POST /checkout-sessions for an organisation in deposit mode against one
// on the shared wallet, on one Kassa over PostgreSQL, in the same run (issue 34; goal ≥ 0.9×: a deposit address is one
// keccak and no unique-amount claim). The two targets take turns, ROUNDS times, each round's order reversed every
// other time; the ratio is the median of the rounds' ratios.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';
import { START_COMMAND, benchKassaEnv, cpuMs, freePort, kassaCli, signer, stopChild, waitFor } from './support.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);

function run(url, sign, duration, connections) {
  return new Promise((resolve, reject) => {
    autocannon(
      { url, method: 'POST', connections, duration, requests: [{ setupRequest: (r) => ({ ...r, ...sign() }) }] },
      (error, result) => {
        if (error) return reject(error);
        const bad = result.non2xx + result.errors + result.timeouts;
        if (bad > 0) return reject(new Error(`deposit-create: ${bad} failed requests of ${result.requests.total}`));
        resolve({ rps: result.requests.average, p99: result.latency.p99, total: result.requests.total });
      },
    );
  });
}

/** Kassa on `databaseUrl`, an organisation of each mode with a key, and their creates measured in turn. */
export async function runDepositCreateBench({ databaseUrl, seconds, connections }) {
  const env = benchKassaEnv({
    DATABASE_URL: databaseUrl,
    KASSA_DATA_DIR: mkdtempSync(path.join(tmpdir(), 'kassa-bench-deposit-')),
  });
  const cli = kassaCli(env);
  cli('migrate');
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const [command, ...args] = START_COMMAND;
  const child = spawn(command, args, {
    cwd: root,
    env: { ...env, PORT: String(port), HOST: '127.0.0.1' },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  try {
    await waitFor(`${url}/ready`);
    const organisation = (receiving) => {
      const wallet = `0x${randomBytes(20).toString('hex')}`;
      const org = cli('orgs', 'create', '--name', `Bench ${receiving}`, '--wallet', wallet, '--receiving', receiving);
      return { org, sign: signer(cli('keys', 'create', '--org', org.id)) };
    };
    const targets = { shared: organisation('shared'), deposit: organisation('deposit') };
    const rounds = { shared: [], deposit: [] };
    const cpu = { shared: { ms: 0, total: 0 }, deposit: { ms: 0, total: 0 } };
    const duration = Math.max(2, Math.round(seconds / ROUNDS));
    // A short warm-up of each, uncounted: the first requests of a new pattern are not the steady state.
    for (const name of ['shared', 'deposit']) await run(`${url}/checkout-sessions`, targets[name].sign, 1, connections);
    for (let round = 0; round < ROUNDS; round++) {
      const order = round % 2 === 0 ? ['shared', 'deposit'] : ['deposit', 'shared'];
      for (const name of order) {
        const before = cpuMs(child.pid);
        const result = await run(`${url}/checkout-sessions`, targets[name].sign, duration, connections);
        cpu[name].ms += cpuMs(child.pid) - before;
        cpu[name].total += result.total;
        rounds[name].push(result);
      }
    }
    const ratios = rounds.deposit.map((result, i) => result.rps / rounds.shared[i].rps).sort((a, b) => a - b);
    const median = (list) => [...list].sort((a, b) => a.rps - b.rps)[Math.floor(list.length / 2)];
    return {
      goal: 0.9,
      ratio: ratios[Math.floor(ratios.length / 2)],
      shared: {
        ...median(rounds.shared),
        rounds: rounds.shared.map((r) => r.rps),
        cpuMs: cpu.shared.ms / cpu.shared.total,
      },
      deposit: {
        ...median(rounds.deposit),
        rounds: rounds.deposit.map((r) => r.rps),
        cpuMs: cpu.deposit.ms / cpu.deposit.total,
      },
    };
  } finally {
    await stopChild(child);
  }
}

/** The section's lines in `npm run bench`'s report. */
export function printDepositCreate(result) {
  const line = (name, r) =>
    console.log(
      `${name.padEnd(52)}${r.rps.toFixed(0).padEnd(9)}p99 ${r.p99} ms, server CPU ${r.cpuMs.toFixed(3)} ms/request ` +
        `(req/s of each round: ${r.rounds.map(Math.round).join(', ')})`,
    );
  console.log('\nCreate in deposit mode against the shared wallet (one Kassa, PostgreSQL, interleaved rounds)');
  line('POST create — shared wallet', result.shared);
  line('POST create — deposit addresses', result.deposit);
  console.log(`ratio deposit / shared (median of the rounds): ${result.ratio.toFixed(2)} (goal ≥ ${result.goal})`);
}
