import pg from 'pg';
import { PrismaPg } from '@prisma/adapter-pg';
import { PrismaClient } from '../generated/prisma/client.js';
import type { Config } from '../config.js';
import { openEmbeddedDatabase, type EmbeddedRole } from './embedded.js';
import { applyMigrations, type MigrationResult } from './migrate.js';

/** An open connection to Kassa's database, PostgreSQL or the embedded one. */
export interface Database {
  readonly prisma: PrismaClient;
  readonly pool: pg.Pool;
  /** "postgresql" with DATABASE_URL, "embedded" otherwise. */
  readonly kind: 'postgresql' | 'embedded';
  migrate(): Promise<MigrationResult>;
  /** Waits (at most `timeoutMs`) until no query or transaction is running or waiting for a connection. */
  drain(timeoutMs: number): Promise<boolean>;
  close(): Promise<void>;
}

export interface OpenDatabaseOptions {
  readonly role: EmbeddedRole;
  readonly poolSize?: number;
}

export async function openDatabase(config: Config, options: OpenDatabaseOptions): Promise<Database> {
  const embedded = config.databaseUrl ? null : await openEmbeddedDatabase(config.dataDir, options.role);
  const connectionString = config.databaseUrl ?? embedded!.url;
  // pglite-socket can interleave queries of concurrent connections outside a
  // transaction (electric-sql/pglite#1046), so the embedded database gets one.
  const pool = new pg.Pool({ connectionString, max: options.poolSize ?? (embedded ? 1 : 10) });
  // An idle client losing its server must not crash the process; the pool replaces it.
  pool.on('error', () => {});
  // 'minimal' errors: Prisma then skips capturing a stack trace at every query's call site (for the code frame of a
  // message nobody sees: the error mapping never shows Prisma's messages), about 15 µs a query (docs/benchmarks.md).
  const prisma = new PrismaClient({ adapter: new PrismaPg(pool), errorFormat: 'minimal' });
  let closed = false;
  return {
    prisma,
    pool,
    kind: embedded ? 'embedded' : 'postgresql',
    migrate: () => applyMigrations(pool),
    async drain(timeoutMs) {
      const deadline = Date.now() + timeoutMs;
      while (pool.waitingCount > 0 || pool.idleCount < pool.totalCount) {
        if (Date.now() > deadline) return false;
        await new Promise((resolve) => setTimeout(resolve, 25));
      }
      return true;
    },
    async close() {
      if (closed) return;
      closed = true;
      await prisma.$disconnect();
      await pool.end();
      await embedded?.close();
    },
  };
}
