import { createHash, randomUUID } from 'node:crypto';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import type pg from 'pg';
import { PACKAGE_ROOT } from '../config.js';

export const MIGRATIONS_DIR = path.join(PACKAGE_ROOT, 'prisma/migrations');

// Prisma's own bookkeeping table, created exactly as `prisma migrate` does, so
// `prisma migrate status/deploy` agree with what `kassa migrate` applied.
const PRISMA_MIGRATIONS_TABLE = `
CREATE TABLE IF NOT EXISTS "_prisma_migrations" (
    "id"                    VARCHAR(36) PRIMARY KEY NOT NULL,
    "checksum"              VARCHAR(64) NOT NULL,
    "finished_at"           TIMESTAMPTZ,
    "migration_name"        VARCHAR(255) NOT NULL,
    "logs"                  TEXT,
    "rolled_back_at"        TIMESTAMPTZ,
    "started_at"            TIMESTAMPTZ NOT NULL DEFAULT now(),
    "applied_steps_count"   INTEGER NOT NULL DEFAULT 0
)`;

// Any constant works; it only has to be the same for every Kassa process.
export const MIGRATION_LOCK_KEY = 7_411_902_551n;

export interface MigrationFile {
  readonly name: string;
  readonly sql: string;
  readonly checksum: string;
}

export interface MigrationResult {
  readonly applied: readonly string[];
  readonly alreadyApplied: readonly string[];
}

/** The migrations in Prisma's layout, oldest first. */
export function readMigrations(dir: string = MIGRATIONS_DIR): MigrationFile[] {
  return readdirSync(dir)
    .filter((name) => statSync(path.join(dir, name)).isDirectory())
    .sort()
    .map((name) => {
      const sql = readFileSync(path.join(dir, name, 'migration.sql'), 'utf8');
      return { name, sql, checksum: createHash('sha256').update(sql).digest('hex') };
    });
}

/**
 * Applies every pending migration, each in its own transaction, under an advisory lock so concurrent starts apply each
 * once. A failing one is rolled back, not recorded, and named in the error; the ones before it stay applied.
 */
export async function applyMigrations(pool: pg.Pool, dir: string = MIGRATIONS_DIR): Promise<MigrationResult> {
  const migrations = readMigrations(dir);
  const client = await pool.connect();
  try {
    // Neither the wait for another process's migrations nor a long migration is cut by kassa serve's statement
    // timeout (src/db/database.ts; KASSA_MIGRATE_ON_START migrates in serve): this connection has none until released.
    await client.query('SET statement_timeout = 0');
    await client.query('SELECT pg_advisory_lock($1)', [MIGRATION_LOCK_KEY.toString()]);
    try {
      await client.query(PRISMA_MIGRATIONS_TABLE);
      const { rows } = await client.query<{ migration_name: string; checksum: string }>(
        'SELECT migration_name, checksum FROM "_prisma_migrations" WHERE finished_at IS NOT NULL AND rolled_back_at ' +
          'IS NULL',
      );
      const done = new Map(rows.map((row) => [row.migration_name, row.checksum]));
      const applied: string[] = [];
      const alreadyApplied: string[] = [];
      for (const migration of migrations) {
        const checksum = done.get(migration.name);
        if (checksum === undefined) {
          await applyOne(client, migration);
          applied.push(migration.name);
        } else if (checksum !== migration.checksum) {
          throw new Error(`Migration ${migration.name} was changed after it was applied (checksum differs).`);
        } else {
          alreadyApplied.push(migration.name);
        }
      }
      return { applied, alreadyApplied };
    } finally {
      await client.query('SELECT pg_advisory_unlock($1)', [MIGRATION_LOCK_KEY.toString()]);
    }
  } finally {
    // A connection whose reset failed (broken, or left without a timeout) is closed, not pooled again.
    const reset = await client.query('RESET statement_timeout').then(
      () => undefined,
      (error: unknown) => error as Error,
    );
    client.release(reset);
  }
}

async function applyOne(client: pg.PoolClient, migration: MigrationFile): Promise<void> {
  const id = randomUUID();
  try {
    await client.query('BEGIN');
    await client.query(
      'INSERT INTO "_prisma_migrations" (id, checksum, migration_name, started_at, applied_steps_count) VALUES ($1, ' +
        '$2, $3, now(), 0)',
      [id, migration.checksum, migration.name],
    );
    await client.query(migration.sql);
    await client.query('UPDATE "_prisma_migrations" SET finished_at = now(), applied_steps_count = 1 WHERE id = $1', [
      id,
    ]);
    await client.query('COMMIT');
  } catch (error) {
    await client.query('ROLLBACK').catch(() => {});
    throw new Error(`Migration ${migration.name} failed and was rolled back: ${(error as Error).message}`, {
      cause: error,
    });
  }
}
