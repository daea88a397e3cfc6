import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pg from 'pg';
import type { TestProject } from 'vitest/node';
import { openEmbeddedDatabase } from '../../src/db/embedded.js';
import { applyMigrations } from '../../src/db/migrate.js';
import { adminQuery, urlFor } from './databases.js';

declare module 'vitest' {
  export interface ProvidedContext {
    templateDatabase: string;
    templateDataDir: string;
  }
}

/**
 * Runs once per project: migrates a template PostgreSQL database (postgres
 * project) or a template PGlite directory (embedded project) that test files
 * clone, so each file starts from a migrated database of its own at once.
 */
export default async function setup(project: TestProject) {
  if (project.config.name === 'embedded') {
    const templateDir = mkdtempSync(path.join(tmpdir(), 'kassa-template-'));
    const embedded = await openEmbeddedDatabase(templateDir, 'cli');
    const pool = new pg.Pool({ connectionString: embedded.url, max: 1 });
    await applyMigrations(pool);
    await pool.end();
    await embedded.close();
    project.provide('templateDataDir', templateDir);
    project.provide('templateDatabase', '');
    return () => rmSync(templateDir, { recursive: true, force: true });
  }

  const template = `kassa_template_${process.pid}`;
  await adminQuery(`DROP DATABASE IF EXISTS "${template}" WITH (FORCE)`);
  await adminQuery(`CREATE DATABASE "${template}"`);
  const pool = new pg.Pool({ connectionString: urlFor(template), max: 1 });
  await applyMigrations(pool);
  await pool.end();
  project.provide('templateDatabase', template);
  project.provide('templateDataDir', '');
  return () => adminQuery(`DROP DATABASE IF EXISTS "${template}" WITH (FORCE)`);
}
