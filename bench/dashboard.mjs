// `BENCH_ONLY=dashboard npm run bench`: the dashboard's sessions list with a million sessions in PostgreSQL
// (issue 35, docs/benchmarks.md#dashboard-list-and-export): the first filtered page over the merchant GraphQL API,
// signed in as a browser is, by status, by transaction hash, by payer e-mail and by a day's date range (each sample
// asks for another value), p50 and p95; and the sessions CSV export of 100,000 rows streamed, with the growth of
// Kassa's RSS while it runs. The sessions are written with SQL (their triggers off), then Kassa is started on the
// database as `npm start` runs it. Goals: p95 ≤ 50 ms for each filter, RSS growth ≤ 50 MB for the export.
// Env: BENCH_DASHBOARD_SESSIONS (1000000), BENCH_DASHBOARD_EXPORT (100000), BENCH_DASHBOARD_SAMPLES (60).
// Runs alone too: `node bench/dashboard.mjs` (needs `npm run build`).
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import {
  START_COMMAND,
  admin,
  benchKassaEnv,
  databaseUrl,
  freePort,
  kassaCli,
  rssMb,
  stopChild,
  waitFor,
} from './support.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
/** One session every 20 s from here: a million span about 231 days. */
const START = Date.parse('2026-01-01T00:00:00Z');
const STEP_SECONDS = 20;
const PAYERS = 200_000;
const GOALS = { p95Ms: 50, exportRssMb: 50 };

const LIST = `query List($org: ID!, $filter: SessionFilterInput) {
  sessions(organisationId: $org, filter: $filter, first: 50) {
    nodes { id status fiatCurrency totalAmountFiat cryptoCurrency payerEmail payerId createdAt }
    nextCursor
  }
}`;

/** A million sessions of one organisation, a third with a bound transaction, and a payment for each of those. */
export async function fill(url, organisationId, count) {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    // Bulk data: no change announcements, no per-row checks of the foreign keys.
    await client.query(`SET session_replication_role = replica`);
    await client.query(
      `INSERT INTO checkout_sessions (id, organisation_id, status, source, fiat_currency, total_amount_fiat,
         crypto_currency, total_amount_crypto, supported_networks, expires_at, quoted_at, bound_tx_hash,
         payer_wallet_address, user_id, user_email, metadata, created_at, updated_at)
       SELECT gen_random_uuid(), $1::uuid,
              (ARRAY['paid','expired','paid','expired','waiting_payment','failed'])[1 + i % 6]::checkout_session_status,
              'api', 'USD', (1 + i % 500)::numeric, 'USDT', (1 + i % 500)::numeric, '{local}',
              -- Open ones are still open (the sweeper settles the rest within a minute); the others long closed.
              CASE WHEN i % 6 = 4 THEN now() + interval '1 hour' ELSE at + interval '1 hour' END, at,
              CASE WHEN i % 3 = 0 THEN '0x' || lpad(to_hex(i), 64, '0') END,
              CASE WHEN i % 3 = 0 THEN '0x' || lpad(to_hex(i % ${PAYERS}), 40, '0') END,
              'cust-' || (i % ${PAYERS}), 'payer' || (i % ${PAYERS}) || '@example.com',
              jsonb_build_object('order', 'O-' || i), at, at
         FROM generate_series(1, $2::int) AS i,
              LATERAL (SELECT to_timestamp(${START / 1000} + i * ${STEP_SECONDS}) AS at) AS t`,
      [organisationId, count],
    );
    await client.query(
      `INSERT INTO payments (id, network, chain_id, tx_hash, log_index, from_address, to_address, asset, base_units,
         amount, block_number, block_hash, block_time, state, session_id, attribution, confirmations)
       SELECT gen_random_uuid(), 'local', '31337', s.bound_tx_hash, 0, s.payer_wallet_address,
              '0x' || repeat('ab', 20), 'USDT', s.total_amount_crypto * 1000000, s.total_amount_crypto,
              extract(epoch FROM s.created_at)::bigint, '0x' || repeat('cd', 32), s.created_at + interval '1 minute',
              'confirmed', s.id, 'bound_tx', 12
         FROM checkout_sessions s WHERE s.bound_tx_hash IS NOT NULL`,
    );
    await client.query('ANALYZE');
  } finally {
    await client.end();
  }
}

/** A browser's session: the invite's link redeemed with a password; the cookie and the CSRF token. */
async function signIn(url, cli, organisationId) {
  const invitation = cli('users', 'invite', '--org', organisationId, '--email', 'bench@example.com', '--role', 'owner');
  const token = new URL(invitation.invite_url).hash.replace(/^#token=/, '');
  const response = await fetch(`${url}/dashboard/invite`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', Origin: url },
    body: JSON.stringify({ token, password: 'bench password, long enough' }),
  });
  if (!response.ok) throw new Error(`sign-in: ${response.status} ${await response.text()}`);
  const cookie = response.headers.getSetCookie()[0].split(';')[0];
  return { cookie, csrf: (await response.json()).csrf_token };
}

const percentile = (sorted, p) => sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];

/** `samples` first pages, each with the filter `make(i)` gives; every answer must be a page without errors. */
async function timeFilter(url, session, organisationId, make, samples) {
  const ask = async (filter) => {
    const started = performance.now();
    const response = await fetch(`${url}/dashboard/graphql`, {
      method: 'POST',
      headers: {
        'Content-Type': 'application/json',
        Cookie: session.cookie,
        'X-CSRF-Token': session.csrf,
        Origin: url,
      },
      body: JSON.stringify({ query: LIST, variables: { org: organisationId, filter } }),
    });
    const body = await response.json();
    const ms = performance.now() - started;
    if (body.errors || !body.data) throw new Error(`list: ${JSON.stringify(body.errors)}`);
    return { ms, found: body.data.sessions.nodes.length };
  };
  for (let i = 0; i < 5; i++) await ask(make(samples + i));
  const times = [];
  let found = 0;
  for (let i = 0; i < samples; i++) {
    const answer = await ask(make(i));
    times.push(answer.ms);
    found += answer.found;
  }
  times.sort((a, b) => a - b);
  return { p50: percentile(times, 50), p95: percentile(times, 95), meanRows: found / samples };
}

/** Streams the sessions CSV of the first `rows` sessions, reading Kassa's RSS every 20 ms meanwhile. */
async function timeExport(url, session, organisationId, pid, rows) {
  const day = (ms) => new Date(ms).toISOString().slice(0, 10);
  // Whole days from the first session's on, both included: at least `rows` sessions (the count is reported).
  const query = new URLSearchParams({ from: day(START), to: day(START + rows * STEP_SECONDS * 1000) });
  const before = rssMb(pid);
  let peak = before;
  const watch = setInterval(() => (peak = Math.max(peak, rssMb(pid) ?? 0)), 20);
  const started = performance.now();
  const response = await fetch(`${url}/dashboard/api/organisations/${organisationId}/sessions.csv?${query}`, {
    headers: { Cookie: session.cookie },
  });
  if (!response.ok) throw new Error(`export: ${response.status}`);
  let lines = 0;
  let bytes = 0;
  for await (const chunk of response.body) {
    bytes += chunk.length;
    for (const byte of chunk) if (byte === 10) lines += 1;
  }
  clearInterval(watch);
  peak = Math.max(peak, rssMb(pid) ?? 0);
  return {
    rows: lines - 1,
    megabytes: bytes / 1e6,
    seconds: (performance.now() - started) / 1000,
    rssBefore: before,
    rssPeak: peak,
  };
}

export async function runDashboardBench({
  sessions = Number(process.env.BENCH_DASHBOARD_SESSIONS ?? 1_000_000),
  exportRows = Number(process.env.BENCH_DASHBOARD_EXPORT ?? 100_000),
  samples = Number(process.env.BENCH_DASHBOARD_SAMPLES ?? 60),
} = {}) {
  const name = `kassa_bench_dashboard_${process.pid}`;
  await admin(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
  await admin(`CREATE DATABASE "${name}"`);
  const url = databaseUrl(name);
  const env = benchKassaEnv({
    DATABASE_URL: url,
    KASSA_DATA_DIR: mkdtempSync(path.join(tmpdir(), 'kassa-bench-dashboard-')),
    KASSA_RATE_LIMIT_GRAPHQL: '1000000000/1m',
  });
  const cli = kassaCli(env);
  let child;
  try {
    cli('migrate');
    const organisation = cli(
      'orgs',
      'create',
      '--name',
      'Bench Dashboard',
      '--wallet',
      `0x${randomBytes(20).toString('hex')}`,
    );
    const filling = performance.now();
    await fill(url, organisation.id, sessions);
    const fillSeconds = (performance.now() - filling) / 1000;

    const port = await freePort();
    const base = `http://127.0.0.1:${port}`;
    const [command, ...args] = START_COMMAND;
    child = spawn(command, args, {
      cwd: root,
      env: { ...env, PORT: String(port), HOST: '127.0.0.1' },
      stdio: ['ignore', 'ignore', 'inherit'],
    });
    await waitFor(`${base}/ready`);
    const session = await signIn(base, cli, organisation.id);
    // Every third session has a bound transaction: 0x and its number in hex (fill above).
    const bound = Math.floor(sessions / 3);
    const hashOf = (i) => `0x${(3 * (1 + ((i * 7919) % bound))).toString(16).padStart(64, '0')}`;
    const dayAt = (i) => START + ((i * 7919) % Math.floor((sessions * STEP_SECONDS) / 86_400)) * 86_400_000;
    const filters = {
      status: (i) => ({ statuses: [['PAID', 'EXPIRED', 'WAITING_PAYMENT', 'FAILED'][i % 4]] }),
      txHash: (i) => ({ txHash: hashOf(i) }),
      payerEmail: (i) => ({ payer: `payer${(i * 7919) % PAYERS}@example.com` }),
      dateRange: (i) => ({
        createdFrom: new Date(dayAt(i)).toISOString(),
        createdBefore: new Date(dayAt(i) + 86_400_000).toISOString(),
      }),
    };
    const list = {};
    for (const [label, make] of Object.entries(filters))
      list[label] = await timeFilter(base, session, organisation.id, make, samples);
    const exported = await timeExport(base, session, organisation.id, child.pid, exportRows);
    return { sessions, fillSeconds, samples, goals: GOALS, list, export: exported };
  } finally {
    if (child) await stopChild(child);
    await admin(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`).catch(() => {});
  }
}

export function printDashboard(report) {
  const pad = (text, width) => String(text).padEnd(width);
  console.log(
    `\nDashboard: sessions list with ${report.sessions.toLocaleString('en')} sessions (filled in ${report.fillSeconds.toFixed(0)} s), first page of 50, ${report.samples} samples each (goal p95 ≤ ${report.goals.p95Ms} ms)`,
  );
  for (const [label, r] of Object.entries(report.list))
    console.log(
      `${pad(`by ${label}`, 28)}p50 ${r.p50.toFixed(1)} ms, p95 ${r.p95.toFixed(1)} ms (${r.meanRows.toFixed(1)} rows a page)`,
    );
  const e = report.export;
  console.log(
    `${pad('sessions CSV export', 28)}${e.rows.toLocaleString('en')} rows, ${e.megabytes.toFixed(1)} MB in ${e.seconds.toFixed(1)} s; RSS ${e.rssBefore} → peak ${e.rssPeak} MB (+${e.rssPeak - e.rssBefore}, goal ≤ ${report.goals.exportRssMb})`,
  );
}

if (process.argv[1] === fileURLToPath(import.meta.url)) printDashboard(await runDashboardBench());
