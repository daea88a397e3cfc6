import { cpSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { inject } from 'vitest';
import { openEmbeddedDatabase } from '../../src/db/embedded.js';

/**
 * Each test file gets its own database: a fresh PostgreSQL database cloned from
 * the migrated template that test/support/global-setup.ts made, or (when the
 * suite runs in embedded mode) its own PGlite directory copied from a migrated
 * template directory.
 */
export type TestDatabaseMode = 'postgres' | 'embedded';

export interface TestDatabase {
  readonly mode: TestDatabaseMode;
  /** DATABASE_URL for Kassa, or null in embedded mode (Kassa then opens `dataDir`). */
  readonly databaseUrl: string | null;
  /** A data dir of this test file's own (master key, embedded database). */
  readonly dataDir: string;
  drop(): Promise<void>;
}

export const ADMIN_URL = process.env.KASSA_TEST_DATABASE_URL ?? 'postgresql://postgres@127.0.0.1:5432/postgres';

export function testDatabaseMode(): TestDatabaseMode {
  return process.env.KASSA_TEST_DB === 'embedded' ? 'embedded' : 'postgres';
}

export function urlFor(database: string): string {
  const url = new URL(ADMIN_URL);
  url.pathname = `/${database}`;
  return url.toString();
}

export async function createTestDatabase(mode: TestDatabaseMode = testDatabaseMode()): Promise<TestDatabase> {
  const dataDir = mkdtempSync(path.join(tmpdir(), 'kassa-test-'));
  if (mode === 'embedded') {
    const templateDir = inject('templateDataDir');
    if (templateDir) cpSync(path.join(templateDir, 'pgdata'), path.join(dataDir, 'pgdata'), { recursive: true });
    return { mode, databaseUrl: null, dataDir, drop: async () => rmSync(dataDir, { recursive: true, force: true }) };
  }
  const name = `kassa_t_${process.pid}_${Math.random().toString(36).slice(2, 10)}`;
  const template = inject('templateDatabase');
  await adminQuery(template ? `CREATE DATABASE "${name}" TEMPLATE "${template}"` : `CREATE DATABASE "${name}"`);
  return {
    mode,
    databaseUrl: urlFor(name),
    dataDir,
    async drop() {
      await adminQuery(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

export async function adminQuery(sql: string): Promise<void> {
  const client = new pg.Client({ connectionString: ADMIN_URL });
  await client.connect();
  try {
    await client.query(sql);
  } finally {
    await client.end();
  }
}

/** Opens a PGlite data dir and keeps it served for a test that needs a raw connection. */
export { openEmbeddedDatabase };
