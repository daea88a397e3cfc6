import { createHash, randomBytes } from 'node:crypto';
import {
  appendFileSync,
  cpSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
  applyMigrations,
  MIGRATION_LOCK_KEY as MIGRATION_LOCK_KEY_BIGINT,
  MIGRATIONS_DIR,
  type MigrationResult,
} from '../../src/db/migrate.js';
import { adminQuery, urlFor } from '../support/databases.js';
import { assertCliBuilt, killAllKassaProcesses, parseJsonOutput, runKassa } from '../support/cli-process.js';

/**
 * `kassa migrate` records migrations in `_prisma_migrations` exactly as
 * `prisma migrate deploy` does (docs/decisions/0001), on fresh, empty PostgreSQL
 * databases of this file's own (no template).
 */

// The concurrency tests hold the migrator's advisory lock to make two migrators really wait on each other.
const MIGRATION_LOCK_KEY = MIGRATION_LOCK_KEY_BIGINT.toString();

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** Migration folders and their checksums, computed here independently of src/db/migrate.ts. */
const MIGRATIONS = readdirSync(MIGRATIONS_DIR)
  .filter((name) => statSync(path.join(MIGRATIONS_DIR, name)).isDirectory())
  .sort()
  .map((name) => ({
    name,
    checksum: createHash('sha256')
      .update(readFileSync(path.join(MIGRATIONS_DIR, name, 'migration.sql')))
      .digest('hex'),
  }));
const NAMES = MIGRATIONS.map((m) => m.name);

interface MigrationRow {
  id: string;
  checksum: string;
  finished_at: Date | null;
  migration_name: string;
  logs: string | null;
  rolled_back_at: Date | null;
  started_at: Date;
  applied_steps_count: number;
}

const databases: string[] = [];
const pools: pg.Pool[] = [];
const tempDirs: string[] = [];

async function emptyDatabase(): Promise<string> {
  const name = `kassa_mig_${process.pid}_${randomBytes(4).toString('hex')}`;
  await adminQuery(`CREATE DATABASE "${name}"`);
  databases.push(name);
  return name;
}

function poolFor(database: string, max = 2): pg.Pool {
  const pool = new pg.Pool({ connectionString: urlFor(database), max });
  // Dropping the database (WITH FORCE) at the end may still find a client of an ended pool closing: not a test failure.
  pool.on('error', () => {});
  pools.push(pool);
  return pool;
}

async function migrationRows(pool: pg.Pool): Promise<MigrationRow[]> {
  const { rows } = await pool.query<MigrationRow>(
    'SELECT * FROM "_prisma_migrations" ORDER BY migration_name, started_at',
  );
  return rows;
}

async function tableExists(pool: pg.Pool, table: string): Promise<boolean> {
  const { rows } = await pool.query<{ found: string | null }>('SELECT to_regclass($1)::text AS found', [
    `public.${table}`,
  ]);
  return rows[0]!.found !== null;
}

/** A copy of prisma/migrations to change in a test. */
function copyOfMigrations(): string {
  const dir = mkdtempSync(path.join(tmpdir(), 'kassa-migrations-'));
  tempDirs.push(dir);
  cpSync(MIGRATIONS_DIR, dir, { recursive: true });
  return dir;
}

/** Holds the migration lock until `release` while `start` begins two migrators, and checks both queue on it. */
async function raceOnMigrationLock<T>(database: string, start: () => Promise<T>[]): Promise<T[]> {
  const gate = new pg.Client({ connectionString: urlFor(database) });
  await gate.connect();
  try {
    await gate.query('SELECT pg_advisory_lock($1)', [MIGRATION_LOCK_KEY]);
    const running = start();
    const settled = Promise.allSettled(running);
    const deadline = Date.now() + 20_000;
    for (;;) {
      const { rows } = await gate.query<{ waiting: number }>(
        `SELECT count(*)::int AS waiting FROM pg_locks l JOIN pg_database d ON d.oid = l.database
         WHERE l.locktype = 'advisory' AND NOT l.granted AND d.datname = $1`,
        [database],
      );
      if (rows[0]!.waiting >= 2) break;
      const early = await Promise.race([settled, new Promise((resolve) => setTimeout(() => resolve(null), 50))]);
      if (early !== null || Date.now() > deadline) {
        throw new Error(
          `the two migrators did not both wait on advisory lock ${MIGRATION_LOCK_KEY} (waiting: ${rows[0]!.waiting}); ` +
            'did MIGRATION_LOCK_KEY in src/db/migrate.ts change, or do migrations no longer take a lock?',
        );
      }
    }
    await gate.query('SELECT pg_advisory_unlock($1)', [MIGRATION_LOCK_KEY]);
    return await Promise.all(running);
  } finally {
    await gate.end();
  }
}

function expectRecordedOnce(rows: MigrationRow[]): void {
  expect(rows.map((row) => row.migration_name)).toEqual(NAMES);
  for (const row of rows) {
    expect(row.finished_at).not.toBeNull();
    expect(row.rolled_back_at).toBeNull();
    expect(row.applied_steps_count).toBe(1);
  }
}

beforeAll(() => {
  expect(NAMES.length).toBeGreaterThan(0);
});

afterEach(async () => {
  await killAllKassaProcesses();
});

afterAll(async () => {
  await killAllKassaProcesses();
  await Promise.all(pools.splice(0).map((pool) => pool.end()));
  for (const name of databases) await adminQuery(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
  for (const dir of tempDirs) rmSync(dir, { recursive: true, force: true });
});

describe('applyMigrations on an empty database', () => {
  let database: string;
  let pool: pg.Pool;
  let firstRows: MigrationRow[];

  beforeAll(async () => {
    database = await emptyDatabase();
    pool = poolFor(database);
  });

  it('applies every migration and records each as Prisma does', async () => {
    const before = new Date();
    const result = await applyMigrations(pool);
    expect(result).toEqual({ applied: NAMES, alreadyApplied: [] });

    firstRows = await migrationRows(pool);
    expect(firstRows).toHaveLength(MIGRATIONS.length);
    for (const [index, migration] of MIGRATIONS.entries()) {
      const row = firstRows[index]!;
      expect(row.migration_name).toBe(migration.name);
      expect(row.id).toMatch(UUID);
      // prisma migrate: sha256 of migration.sql, lower-case hex.
      expect(row.checksum).toBe(migration.checksum);
      expect(row.finished_at).toBeInstanceOf(Date);
      expect(row.started_at.getTime()).toBeGreaterThanOrEqual(before.getTime() - 5_000);
      expect(row.finished_at!.getTime()).toBeGreaterThanOrEqual(row.started_at.getTime());
      expect(row.applied_steps_count).toBe(1);
      expect(row.rolled_back_at).toBeNull();
      expect(row.logs).toBeNull();
    }
    expect(new Set(firstRows.map((row) => row.id)).size).toBe(firstRows.length);
    expect(await tableExists(pool, 'organisations')).toBe(true);
  });

  it('creates _prisma_migrations with the columns `prisma migrate` creates', async () => {
    const { rows } = await pool.query<{
      column_name: string;
      data_type: string;
      length: number | null;
      nullable: string;
      default: string | null;
    }>(
      `SELECT column_name, data_type, character_maximum_length AS length, is_nullable AS nullable, column_default AS default
       FROM information_schema.columns WHERE table_schema = 'public' AND table_name = '_prisma_migrations' ORDER BY ordinal_position`,
    );
    expect(rows).toEqual([
      { column_name: 'id', data_type: 'character varying', length: 36, nullable: 'NO', default: null },
      { column_name: 'checksum', data_type: 'character varying', length: 64, nullable: 'NO', default: null },
      {
        column_name: 'finished_at',
        data_type: 'timestamp with time zone',
        length: null,
        nullable: 'YES',
        default: null,
      },
      { column_name: 'migration_name', data_type: 'character varying', length: 255, nullable: 'NO', default: null },
      { column_name: 'logs', data_type: 'text', length: null, nullable: 'YES', default: null },
      {
        column_name: 'rolled_back_at',
        data_type: 'timestamp with time zone',
        length: null,
        nullable: 'YES',
        default: null,
      },
      {
        column_name: 'started_at',
        data_type: 'timestamp with time zone',
        length: null,
        nullable: 'NO',
        default: 'now()',
      },
      { column_name: 'applied_steps_count', data_type: 'integer', length: null, nullable: 'NO', default: '0' },
    ]);
    const { rows: pk } = await pool.query<{ columns: string[] }>(
      `SELECT ARRAY(SELECT a.attname::text FROM unnest(c.conkey) k(n) JOIN pg_attribute a ON a.attrelid = c.conrelid AND a.attnum = k.n) AS columns
       FROM pg_constraint c WHERE c.conrelid = '"_prisma_migrations"'::regclass AND c.contype = 'p'`,
    );
    expect(pk).toEqual([{ columns: ['id'] }]);
  });

  it('a second run applies nothing and leaves the records as they were', async () => {
    expect(await applyMigrations(pool)).toEqual({ applied: [], alreadyApplied: NAMES });
    expect(await migrationRows(pool)).toEqual(firstRows);
  });

  it('refuses a migration whose file changed after it was applied, and changes nothing', async () => {
    const dir = copyOfMigrations();
    const changed = NAMES[NAMES.length - 1]!;
    appendFileSync(path.join(dir, changed, 'migration.sql'), '\n-- edited after it was applied\n');
    await expect(applyMigrations(pool, dir)).rejects.toThrow(new RegExp(`${changed}.*changed after it was applied`));
    expect(await migrationRows(pool)).toEqual(firstRows);
  });

  it('refuses a record whose checksum differs from the file', async () => {
    await pool.query('UPDATE "_prisma_migrations" SET checksum = $1 WHERE migration_name = $2', [
      '0'.repeat(64),
      NAMES[0],
    ]);
    try {
      await expect(applyMigrations(pool)).rejects.toThrow(new RegExp(`${NAMES[0]}.*changed after it was applied`));
    } finally {
      await pool.query('UPDATE "_prisma_migrations" SET checksum = $1 WHERE migration_name = $2', [
        MIGRATIONS[0]!.checksum,
        NAMES[0],
      ]);
    }
    expect(await migrationRows(pool)).toEqual(firstRows);
  });

  it('applies a migration added later, after the recorded ones, once', async () => {
    const dir = copyOfMigrations();
    const added = '29991231235959_probe_added_later';
    mkdirSync(path.join(dir, added));
    writeFileSync(path.join(dir, added, 'migration.sql'), 'CREATE TABLE "migration_probe" ("id" INTEGER NOT NULL);\n');
    expect(await applyMigrations(pool, dir)).toEqual({ applied: [added], alreadyApplied: NAMES });
    expect(await applyMigrations(pool, dir)).toEqual({ applied: [], alreadyApplied: [...NAMES, added] });
    const rows = await migrationRows(pool);
    expect(rows.filter((row) => row.migration_name === added)).toHaveLength(1);
    expect(rows.find((row) => row.migration_name === added)!.checksum).toBe(
      createHash('sha256').update('CREATE TABLE "migration_probe" ("id" INTEGER NOT NULL);\n').digest('hex'),
    );
    expect(await tableExists(pool, 'migration_probe')).toBe(true);
  });
});

describe('a failing migration', () => {
  it('leaves neither its changes nor a record behind, keeps the ones before it, and names itself', async () => {
    const database = await emptyDatabase();
    const pool = poolFor(database);
    const dir = copyOfMigrations();
    const broken = '29991231235959_probe_broken';
    mkdirSync(path.join(dir, broken));
    writeFileSync(
      path.join(dir, broken, 'migration.sql'),
      'CREATE TABLE "half_done" ("id" INTEGER);\nSELECT no_such_function();\n',
    );
    await expect(applyMigrations(pool, dir)).rejects.toThrow(
      new RegExp(`Migration ${broken} failed and was rolled back: .*no_such_function`),
    );
    expect(await tableExists(pool, 'half_done')).toBe(false);
    // Each migration has its own transaction, as with Prisma: the good ones before it stay applied.
    expect(await tableExists(pool, 'organisations')).toBe(true);
    expect((await migrationRows(pool)).map((row) => row.migration_name)).toEqual(NAMES);
  });
});

describe('two migrators at the same time on one empty database', () => {
  it('two `kassa migrate` processes both exit 0 and each migration is recorded once', async () => {
    assertCliBuilt();
    const database = await emptyDatabase();
    const dataDir = mkdtempSync(path.join(tmpdir(), 'kassa-migrate-cli-'));
    tempDirs.push(dataDir);
    const env = {
      KASSA_ENV: 'test',
      LOG_LEVEL: 'silent',
      KASSA_NETWORKS: 'local',
      KASSA_DATA_DIR: dataDir,
      KASSA_MASTER_KEY: randomBytes(32).toString('hex'),
      DATABASE_URL: urlFor(database),
    };
    const runs = await raceOnMigrationLock(database, () => [
      runKassa(['migrate', '--json'], env),
      runKassa(['migrate', '--json'], env),
    ]);
    for (const run of runs) expect(run, run.stderr).toMatchObject({ code: 0, stderr: '' });
    const results = runs.map((run) => parseJsonOutput<MigrationResult>(run));
    expect(results).toEqual(
      expect.arrayContaining([
        { applied: NAMES, alreadyApplied: [] },
        { applied: [], alreadyApplied: NAMES },
      ]),
    );
    expectRecordedOnce(await migrationRows(poolFor(database)));
  });

  it('two applyMigrations calls on two pools: one applies everything, the other nothing', async () => {
    const database = await emptyDatabase();
    const [first, second] = [poolFor(database, 1), poolFor(database, 1)];
    const results = await raceOnMigrationLock(database, () => [applyMigrations(first!), applyMigrations(second!)]);
    expect(results).toEqual(
      expect.arrayContaining([
        { applied: NAMES, alreadyApplied: [] },
        { applied: [], alreadyApplied: NAMES },
      ]),
    );
    expectRecordedOnce(await migrationRows(first!));
  });

  it('also without a gate: started together, each migration is recorded once', async () => {
    const database = await emptyDatabase();
    const started = [poolFor(database, 1), poolFor(database, 1), poolFor(database, 1)].map((pool) =>
      applyMigrations(pool),
    );
    const results = await Promise.all(started);
    expect(results.flatMap((result) => result.applied).sort()).toEqual(NAMES);
    expectRecordedOnce(await migrationRows(poolFor(database)));
  });
});
