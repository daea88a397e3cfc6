import pg from 'pg';
import { PrismaPg } from '@prisma/adapter-pg';
import { adapterStatements, type AdapterStatement } from '../../src/db/database.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CreateBatcher, MAX_BATCH } from '../../src/db/sessions/create-batcher.js';
import { createTestDatabase, type TestDatabase } from '../support/databases.js';

/**
 * The batcher of creates (src/db/sessions/create-batcher.ts) against a real PostgreSQL, with
 * kassa_create_checkout_sessions replaced in this file's own database by a stand-in that logs each
 * create with its transaction and fails a batch holding a create marked `boom`: when creates go
 * together, how many, and that a failed batch costs no create its answer and writes none twice.
 * The real function is exercised by test/e2e/create-batches.test.ts.
 */

let database: TestDatabase;
let pool: pg.Pool;
let statement: AdapterStatement;

beforeAll(async () => {
  database = await createTestDatabase('postgres');
  pool = new pg.Pool({ connectionString: database.databaseUrl!, max: 4 });
  statement = adapterStatements(new PrismaPg(pool));
  await pool.query(`CREATE TABLE batch_log (n INTEGER NOT NULL, tx BIGINT NOT NULL, size INTEGER NOT NULL)`);
  await pool.query(`
    CREATE OR REPLACE FUNCTION kassa_create_checkout_sessions(batch JSONB) RETURNS JSONB LANGUAGE plpgsql AS $$
    DECLARE answers JSONB := '[]'; one JSONB;
    BEGIN
      PERFORM pg_sleep(0.02);
      FOR one IN SELECT value FROM jsonb_array_elements(batch) LOOP
        IF one ? 'boom' THEN RAISE EXCEPTION 'boom'; END IF;
        INSERT INTO batch_log VALUES ((one->>'n')::int, txid_current(), jsonb_array_length(batch));
        answers := answers || jsonb_build_array(jsonb_build_object('offsets', jsonb_build_object('0', one->'n')));
      END LOOP;
      RETURN answers;
    END $$`);
});

afterAll(async () => {
  await pool?.end();
  await database?.drop();
});

const write = (batcher: CreateBatcher, n: number, boom = false) =>
  batcher.write(JSON.stringify(boom ? { n, boom: true } : { n })).then((answer) => answer.offsets!['0']);

async function logged(from: number, to: number) {
  const { rows } = await pool.query<{ n: number; tx: string; size: number }>(
    'SELECT n, tx, size FROM batch_log WHERE n BETWEEN $1 AND $2 ORDER BY n',
    [from, to],
  );
  return rows;
}

describe('CreateBatcher', () => {
  it('sends a lone create at once, alone', async () => {
    const batcher = new CreateBatcher(statement);
    expect(await write(batcher, 1)).toBe(1);
    expect(batcher.sent).toEqual({ statements: 1, creates: 1 });
    expect((await logged(1, 1)).map((row) => row.size)).toEqual([1]);
  });

  it('sends the creates that arrive while a statement is under way together, each with its own answer', async () => {
    const batcher = new CreateBatcher(statement);
    const answers = await Promise.all(Array.from({ length: 30 }, (_, i) => write(batcher, 100 + i)));
    expect(answers).toEqual(Array.from({ length: 30 }, (_, i) => 100 + i));
    // The first goes alone; the 29 that came while it ran go as one statement, in one transaction.
    expect(batcher.sent).toEqual({ statements: 2, creates: 30 });
    const rows = await logged(100, 129);
    expect(rows.map((row) => row.n)).toEqual(answers);
    expect(new Set(rows.slice(1).map((row) => row.tx)).size).toBe(1);
    expect(rows.slice(1).every((row) => row.size === 29)).toBe(true);
  });

  it(`puts at most ${MAX_BATCH} creates in one statement`, async () => {
    const batcher = new CreateBatcher(statement);
    await Promise.all(Array.from({ length: 3 * MAX_BATCH }, (_, i) => write(batcher, 1000 + i)));
    const sizes = (await logged(1000, 1000 + 3 * MAX_BATCH)).map((row) => row.size);
    expect(sizes).toHaveLength(3 * MAX_BATCH);
    expect(Math.max(...sizes)).toBe(MAX_BATCH);
  });

  it('tries a batch that failed again one create at a time: only the failing create fails, none is written twice', async () => {
    const batcher = new CreateBatcher(statement);
    const first = write(batcher, 200);
    const rest = Array.from({ length: 9 }, (_, i) => write(batcher, 201 + i, i === 4));
    const outcomes = await Promise.allSettled([first, ...rest]);
    expect(outcomes.map((outcome) => outcome.status)).toEqual([
      ...Array(5).fill('fulfilled'),
      'rejected',
      ...Array(4).fill('fulfilled'),
    ]);
    expect((outcomes[5] as PromiseRejectedResult).reason).toBeInstanceOf(Error);
    const rows = await logged(200, 209);
    expect(rows.map((row) => row.n)).toEqual([200, 201, 202, 203, 204, 206, 207, 208, 209]);
    // The batch of nine failed as a whole and wrote nothing; each create then went alone.
    expect(rows.slice(1).every((row) => row.size === 1)).toBe(true);
    expect(batcher.sent).toEqual({ statements: 11, creates: 19 });
  });

  it('keeps going after a failure: the next creates are batched again', async () => {
    const batcher = new CreateBatcher(statement);
    await write(batcher, 300, true).catch(() => undefined);
    const answers = await Promise.all(Array.from({ length: 5 }, (_, i) => write(batcher, 301 + i)));
    expect(answers).toEqual([301, 302, 303, 304, 305]);
    expect((await logged(301, 305)).map((row) => row.size)).toEqual([1, 4, 4, 4, 4]);
  });
});
