// `BENCH_ONLY=cold npm run bench`: reads of sessions nobody has read yet (issue 37), and the same with 1,000,000 more
// sessions stored. Every request of a read target names a session no earlier request named, so Kassa answers each
// from the database (its session cache and kept GraphQL answers are no help), as it does the payer's first page load
// or the merchant's first GET after a create. Targets: the reference's GET (bench/reference-server.mjs, one round
// trip), Kassa's REST GET, Kassa's GraphQL read as the page sends it (its CheckoutPoll document by id over GET), and
// Kassa's signed create. Each Kassa target is measured against the reference's GET in pairs of 1 s slices (run.mjs:
// slicedPairs) and given as the median of its pairs' ratios; the growth rows divide the figure with 1,000,000 more
// closed sessions (with their items, quotes and networks, written by SQL) by the small table's.
//
// Env: BENCH_CONNECTIONS as for run.mjs; BENCH_COLD_SLICES (24 pairs of 1 s slices a Kassa target); BENCH_COLD_GROWTH
// (1000000: closed sessions added for the growth rows; 0 skips them).
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import autocannon from 'autocannon';
import pg from 'pg';
import { benchKassaEnv, graphqlDocumentOptions, pollPathFor, rssMb, startReference } from './support.mjs';

const GROWTH = Number(process.env.BENCH_COLD_GROWTH ?? 1_000_000);
/**
 * Pairs of 1 s slices a Kassa target is measured in against the reference. Rounds of 2 s a target (9 of them, in turn)
 * gave ratios to the reference from 1.2 to 3.0 within one phase on this host, so a growth figure, one phase's median
 * over the other's, moved across 0.9 from run to run; a pair's two slices lie within two seconds of each other.
 */
const SLICES = Number(process.env.BENCH_COLD_SLICES ?? 24);
/** Reads a second a read target may reach on a quiet host: each request takes a session the run has not read yet. */
const READS_PER_SECOND_AT_MOST = 4_000;
/** The tables a session's read touches, each copied from the session Kassa created (see seed). */
const SESSION_TABLES = [
  'checkout_sessions',
  'checkout_session_items',
  'checkout_session_quotes',
  'checkout_session_networks',
];

/**
 * The cold-read section. `tools` are run.mjs's: freshDatabase, startKassaFor, slicedPairs, stop, connections and the
 * set of children it stops on exit.
 */
export async function coldReadsSection(report, tools) {
  const databaseUrl = await tools.freshDatabase(`kassa_bench_cold_${process.pid}`);
  const database = new URL(databaseUrl).pathname.slice(1);
  const env = benchKassaEnv({
    DATABASE_URL: databaseUrl,
    KASSA_DATA_DIR: mkdtempSync(path.join(tmpdir(), 'kassa-bench-cold-')),
    KASSA_RATE_LIMIT_GRAPHQL: '1000000000/1m',
    // Every cold read is of a session that exists: the unknown-session limit never counts one.
  });
  const kassa = await tools.startKassaFor('cold', env);
  const reference = await startReference(kassa, env, tools.children);
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  const template = kassa.created.session_id;
  const pageQuery = await graphqlDocumentOptions(kassa.url, template);
  const ids = { list: [], next: 0, wrapped: false };
  const nextId = () => {
    if (ids.next >= ids.list.length) {
      ids.next = 0;
      ids.wrapped = true;
    }
    return ids.list[ids.next++];
  };
  const pagePath = pollPathFor(pageQuery.url, template);
  const kassaMeter = { pid: kassa.child.pid, database };
  const targets = [
    {
      name: 'cold GET session — reference',
      options: {
        url: reference.url,
        requests: [{ setupRequest: (r) => ({ ...r, path: `/checkout-sessions/${nextId()}` }) }],
      },
      meter: { pid: reference.child.pid, database },
    },
    {
      name: 'cold GET session — Kassa',
      options: {
        url: kassa.url,
        requests: [{ setupRequest: (r) => ({ ...r, path: `/checkout-sessions/${nextId()}` }) }],
      },
      meter: kassaMeter,
    },
    {
      name: "cold GraphQL, the page's poll by documentId — Kassa",
      options: { url: kassa.url, requests: [{ setupRequest: (r) => ({ ...r, path: pagePath(nextId()) }) }] },
      meter: kassaMeter,
    },
    {
      name: 'POST create — Kassa (signed)',
      options: {
        url: `${kassa.url}/checkout-sessions`,
        requests: [{ setupRequest: (r) => ({ ...r, ...kassa.sign() }) }],
      },
      meter: kassaMeter,
    },
  ];
  // The reference reads in a slice of every pair (3 × SLICES s), each Kassa read target in SLICES s; 2 s warm-ups.
  const poolSize = (5 * SLICES + 6) * READS_PER_SECOND_AT_MOST;
  const phase = async (label) => {
    const started = Date.now();
    ids.list = await seed(client, template, poolSize, { closed: false });
    ids.next = 0;
    // Vacuumed and flushed before the rounds, as run.mjs does before its half-load rows: otherwise the checkpoint of
    // the rows just written runs under the first rounds (the reference read 570 req/s there against 1,129–1,596).
    await client.query('VACUUM ANALYZE');
    await client.query('CHECKPOINT');
    const seeded = (Date.now() - started) / 1000;
    // Warm both servers up on sessions of the pool (each read once, so none is read again).
    for (const target of targets.slice(0, 3)) await warm({ ...target.options, connections: tools.connections });
    const measured = await tools.slicedPairs(targets[0], targets.slice(1), SLICES);
    const [get, graphql, create] = measured.targets;
    return {
      label,
      sessions: Number((await client.query('SELECT count(*) FROM checkout_sessions')).rows[0].count),
      seededSeconds: seeded,
      results: { ref: measured.base, get: get.row, graphql: graphql.row, create: create.row },
      ratios: { get: get.median, graphql: graphql.median, create: create.median },
      totals: { get: get.totals, graphql: graphql.totals, create: create.totals },
      pairs: { get: get.pairs, graphql: graphql.pairs, create: create.pairs },
    };
  };
  const small = await phase('small table');
  let large;
  let grown;
  if (GROWTH > 0) {
    const started = Date.now();
    await seed(client, template, GROWTH, { closed: true });
    await client.query('VACUUM ANALYZE');
    grown = (Date.now() - started) / 1000;
    large = await phase(`${GROWTH.toLocaleString('en')} more`);
    large.growthSeconds = grown;
  }
  await client.end();
  report.cold = {
    small,
    large,
    growth: large && {
      get: large.ratios.get / small.ratios.get,
      graphql: large.ratios.graphql / small.ratios.graphql,
      create: large.ratios.create / small.ratios.create,
    },
    idsReadTwice: ids.wrapped,
    rss: { kassa: rssMb(kassa.child.pid), reference: rssMb(reference.child.pid) },
  };
  await tools.stop(kassa.child);
  await tools.stop(reference.child);
}

function warm(options) {
  return new Promise((resolve, reject) =>
    autocannon({ duration: 2, ...options }, (error) => (error ? reject(error) : resolve())),
  );
}

/**
 * Writes `count` copies of session `template` with its items, quotes and networks, in one statement per table, and
 * answers their ids. Open copies expire in an hour, as a new session does; closed ones expired days to years ago, one
 * a minute. Triggers are off while it writes (no change feed announcement per row; the copies need no other check).
 */
export async function seed(client, template, count, { closed }) {
  await client.query('BEGIN');
  try {
    await client.query("SET LOCAL session_replication_role = 'replica'");
    await client.query(
      'CREATE TEMP TABLE seed_ids ON COMMIT DROP AS SELECT gen_random_uuid() AS id, g FROM generate_series(1, $1::int) g',
      [count],
    );
    const overrides = closed
      ? {
          id: 'seed_ids.id',
          status: "'expired'",
          expires_at: "now() - interval '1 day' - seed_ids.g * interval '1 minute'",
          quoted_at: "now() - interval '1 day' - seed_ids.g * interval '1 minute' - interval '1 hour'",
          created_at: "now() - interval '1 day' - seed_ids.g * interval '1 minute' - interval '1 hour'",
          updated_at: "now() - interval '1 day' - seed_ids.g * interval '1 minute'",
        }
      : {
          id: 'seed_ids.id',
          expires_at: "now() + interval '1 hour'",
          quoted_at: 'now()',
          created_at: 'now()',
          updated_at: 'now()',
        };
    for (const table of SESSION_TABLES) {
      const { rows } = await client.query(
        `SELECT column_name FROM information_schema.columns WHERE table_schema = current_schema() AND table_name = $1
          ORDER BY ordinal_position`,
        [table],
      );
      const idColumn = table === 'checkout_sessions' ? 'id' : 'session_id';
      const columns = rows.map((row) => row.column_name);
      const values = columns.map((column) =>
        column === idColumn
          ? 'seed_ids.id'
          : table === 'checkout_sessions' && overrides[column]
            ? overrides[column]
            : `t.${column}`,
      );
      await client.query(
        `INSERT INTO ${table} (${columns.join(', ')}) SELECT ${values.join(', ')} FROM seed_ids, ${table} t WHERE t.${idColumn} = $1`,
        [template],
      );
    }
    const ids = closed ? [] : (await client.query('SELECT id FROM seed_ids ORDER BY g')).rows.map((row) => row.id);
    await client.query('COMMIT');
    return ids;
  } catch (error) {
    await client.query('ROLLBACK');
    throw error;
  }
}

export function printColdReads(cold, row, header) {
  console.log(`\nCold reads: each request reads a session not read before (goal: GETs ≥ 1.0 × the reference's GET)`);
  for (const phase of [cold.small, cold.large].filter(Boolean)) {
    console.log(`${phase.label}: ${phase.sessions.toLocaleString('en')} sessions stored\n${header}`);
    for (const key of ['ref', 'get', 'graphql', 'create']) row(phase.results[key]);
    const figure = (key) => {
      const pairs = phase.pairs[key];
      return (
        `${phase.ratios[key].toFixed(2)} × (totals ${phase.totals[key].toFixed(2)} ×; middle half of the pairs ` +
        `${pairs[Math.floor(pairs.length / 4)].toFixed(2)}–${pairs[Math.floor((3 * pairs.length) / 4)].toFixed(2)})`
      );
    };
    console.log(
      `ratios to the reference's cold GET, median of ${phase.pairs.get.length} pairs of 1 s slices each: ` +
        `REST GET ${figure('get')}, GraphQL ${figure('graphql')}, create ${figure('create')}`,
    );
  }
  if (cold.growth) {
    const g = cold.growth;
    console.log(
      `growth (goal ≥ 0.9 × the small table's figure): REST GET ${g.get.toFixed(3)} ×, GraphQL ${g.graphql.toFixed(3)} ×, create ${g.create.toFixed(3)} × (${cold.large.growthSeconds.toFixed(0)} s to write them)`,
    );
    // CPU hardly moves with the host's speed: each target's CPU per request, large table over small.
    const cpu = (key) => {
      const sum = (phase) => phase.results[key].cpu.server + phase.results[key].cpu.database;
      return (sum(cold.large) / sum(cold.small)).toFixed(3);
    };
    console.log(
      `CPU per request (Kassa or the reference, and PostgreSQL), large table over small: reference ${cpu('ref')} ×, ` +
        `REST GET ${cpu('get')} ×, GraphQL ${cpu('graphql')} ×, create ${cpu('create')} ×`,
    );
  }
  if (cold.idsReadTwice)
    console.log('warning: the pool of unread sessions ran out; some reads were of sessions read before');
}
