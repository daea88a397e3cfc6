import type pg from 'pg';
import { MIGRATIONS_DIR, readMigrations } from './migrate.js';

export interface MigrationStatus {
  /** Migrations in prisma/migrations that the database has not applied, oldest first. */
  readonly pending: readonly string[];
  /** Applied migrations whose file changed since (the checksum differs). */
  readonly changed: readonly string[];
}

/** What `kassa migrate` would do, read without changing anything (for starts with KASSA_MIGRATE_ON_START off). */
export async function migrationStatus(pool: pg.Pool, dir: string = MIGRATIONS_DIR): Promise<MigrationStatus> {
  const migrations = readMigrations(dir);
  const { rows: present } = await pool.query<{ present: boolean }>(
    `SELECT to_regclass('"_prisma_migrations"') IS NOT NULL AS present`,
  );
  const done = new Map<string, string>();
  if (present[0]?.present) {
    const { rows } = await pool.query<{ migration_name: string; checksum: string }>(
      'SELECT migration_name, checksum FROM "_prisma_migrations" WHERE finished_at IS NOT NULL AND rolled_back_at IS ' +
        'NULL',
    );
    for (const row of rows) done.set(row.migration_name, row.checksum);
  }
  return {
    pending: migrations.filter((migration) => !done.has(migration.name)).map((migration) => migration.name),
    changed: migrations
      .filter((migration) => done.has(migration.name) && done.get(migration.name) !== migration.checksum)
      .map((migration) => migration.name),
  };
}
