import pg from 'pg';
import { PrismaPg } from '@prisma/adapter-pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { adapterStatements, type AdapterStatement } from '../../src/db/database.js';
import { MAX_READS, SessionReads } from '../../src/db/sessions/session-read-function.js';
import { createTestDatabase, type TestDatabase } from '../support/databases.js';

/**
 * Session reads in batches (src/db/sessions/session-read-function.ts: SessionReads) against a real PostgreSQL, with
 * kassa_read_session replaced in this file's own database by a stand-in that logs each call with its statement's
 * transaction and raises for one id: which reads go together, that each gets its own session (or null), and that a
 * failed batch costs no other read its answer. test/e2e/cold-reads.test.ts compares the real function's batched reads
 * with single ones.
 */

let database: TestDatabase;
let pool: pg.Pool;
let statement: AdapterStatement;
const BOOM = '00000000-0000-4000-8000-00000000b00b';
const UNKNOWN = '00000000-0000-4000-8000-000000000000';

beforeAll(async () => {
  database = await createTestDatabase('postgres');
  pool = new pg.Pool({ connectionString: database.databaseUrl!, max: 4 });
  statement = adapterStatements(new PrismaPg(pool));
  await pool.query(
    'CREATE TABLE read_log (id UUID NOT NULL, tx BIGINT NOT NULL, began TIMESTAMPTZ NOT NULL, ended TIMESTAMPTZ NOT NULL)',
  );
  // The real function's answer for a session with only what fromReadArray needs to give it back: its id is the first
  // element, items, quotes, networks and transactions empty.
  await pool.query(`
    CREATE OR REPLACE FUNCTION kassa_read_session(p_id uuid) RETURNS text LANGUAGE plpgsql VOLATILE AS $$
    BEGIN
      PERFORM pg_sleep(0.05);
      IF p_id = '${BOOM}' THEN RAISE EXCEPTION 'boom'; END IF;
      INSERT INTO read_log VALUES (p_id, txid_current(), statement_timestamp(), clock_timestamp());
      IF p_id = '${UNKNOWN}' THEN RETURN NULL; END IF;
      RETURN json_build_array(p_id, gen_random_uuid(), 'Org', false, NULL, 'waiting_payment', 'api', false, false,
        false, NULL, NULL, 'USD', '10.00', NULL, NULL, 0, false, NULL, NULL, NULL, NULL, NULL, NULL, '0', '0', '0',
        NULL, 0, '0', 0, 'u', NULL, NULL, NULL, NULL, 0, 0, '[]'::json, '[]'::json, '[]'::json, '[]'::json)::text;
    END $$`);
});

afterAll(async () => {
  await pool?.end();
  await database?.drop();
});

const id = (n: number) => `00000000-0000-4000-8000-${String(n).padStart(12, '0')}`;
/** The end of the event loop's current turn: a read asked before it has gone to the database. */
const turnEnds = () => new Promise((resolve) => setImmediate(resolve));

async function statementsOf(ids: string[]): Promise<number> {
  const { rows } = await pool.query<{ count: string }>(
    'SELECT count(DISTINCT tx) FROM read_log WHERE id = ANY($1::uuid[])',
    [ids],
  );
  return Number(rows[0]!.count);
}

describe('SessionReads', () => {
  it('reads a lone session at once, alone', async () => {
    const reads = new SessionReads(statement);
    expect((await reads.read(id(1)))?.id).toBe(id(1));
    expect(reads.sent).toEqual({ statements: 1, calls: 1 });
  });

  it('reads the sessions asked in one turn of the event loop as one statement', async () => {
    const reads = new SessionReads(statement);
    const ids = Array.from({ length: 5 }, (_, i) => id(50 + i));
    const sessions = await Promise.all(ids.map((one) => reads.read(one)));
    expect(sessions.map((session) => session?.id)).toEqual(ids);
    expect(reads.sent).toEqual({ statements: 1, calls: 5 });
    expect(await statementsOf(ids)).toBe(1);
  });

  it('reads the sessions asked while statements are under way together, each its own, an unknown one null', async () => {
    const reads = new SessionReads(statement, 1);
    const ids = Array.from({ length: 20 }, (_, i) => id(100 + i));
    ids[7] = UNKNOWN;
    const first = reads.read(ids[0]!);
    await turnEnds();
    const rest = Promise.all(ids.slice(1).map((one) => reads.read(one)));
    const sessions = [await first, ...(await rest)];
    expect(sessions.map((session) => session?.id ?? null)).toEqual(ids.map((one) => (one === UNKNOWN ? null : one)));
    // The first went alone; the 19 asked while it ran went as one statement.
    expect(reads.sent).toEqual({ statements: 2, calls: 20 });
    expect(await statementsOf(ids.filter((one) => one !== UNKNOWN))).toBe(2);
  });

  it(`puts at most ${MAX_READS} reads in one statement, with two statements under way at once`, async () => {
    const reads = new SessionReads(statement);
    const ids = Array.from({ length: 4 * MAX_READS }, (_, i) => id(1000 + i));
    await Promise.all(ids.map((one) => reads.read(one)));
    // All asked in one turn: four full batches, two under way at a time.
    expect(reads.sent).toEqual({ statements: 4, calls: 4 * MAX_READS });
    const { rows } = await pool.query<{ began: Date; ended: Date }>(
      'SELECT min(began) AS began, max(ended) AS ended FROM read_log WHERE id = ANY($1::uuid[]) GROUP BY tx',
      [ids],
    );
    const underWay = rows.map((row) => rows.filter((other) => other.began <= row.began && row.began < other.ended));
    expect(Math.max(...underWay.map((list) => list.length))).toBe(2);
  });

  it('reads a batch that failed again one session at a time: only the failing read fails', async () => {
    const reads = new SessionReads(statement, 1);
    const ids = [id(200), ...Array.from({ length: 6 }, (_, i) => (i === 3 ? BOOM : id(201 + i)))];
    const first = reads.read(ids[0]!);
    await turnEnds();
    const outcomes = await Promise.allSettled([first, ...ids.slice(1).map((one) => reads.read(one))]);
    expect(outcomes.map((outcome) => outcome.status)).toEqual([
      'fulfilled',
      'fulfilled',
      'fulfilled',
      'fulfilled',
      'rejected',
      'fulfilled',
      'fulfilled',
    ]);
    expect(outcomes.map((outcome) => (outcome.status === 'fulfilled' ? outcome.value?.id : 'failed'))).toEqual(
      ids.map((one) => (one === BOOM ? 'failed' : one)),
    );
    // One alone, the batch of six that failed, then each of the six alone, all at once: a read does not wait for the
    // retries before it (a stalled database would make each wait out a timeout).
    expect(reads.sent).toEqual({ statements: 8, calls: 13 });
    const { rows } = await pool.query<{ began: Date; ended: Date }>(
      'SELECT began, ended FROM read_log WHERE id = ANY($1::uuid[]) ORDER BY began',
      [ids.slice(1)],
    );
    expect(rows).toHaveLength(5);
    const overlapping = rows.some((row, i) => i > 0 && row.began < rows[i - 1]!.ended);
    expect(overlapping).toBe(true);
  });

  it('never puts text that is not a UUID into a batch: it is read alone and refused there', async () => {
    const reads = new SessionReads(statement, 1);
    const asked = [id(300), id(301), '1,2}', id(302)];
    const outcomes = await Promise.allSettled(asked.map((one) => reads.read(one)));
    expect(outcomes.map((outcome) => outcome.status)).toEqual(['fulfilled', 'fulfilled', 'rejected', 'fulfilled']);
    expect(reads.sent).toEqual({ statements: 1, calls: 3 });
  });
});
