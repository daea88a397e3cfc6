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
  /** One statement through the Prisma client's own driver adapter (see adapterStatements). */
  readonly statement: AdapterStatement;
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

/** How long a request waits for a new database connection. */
export const CONNECT_TIMEOUT_MS = 5_000;
/** The longest statement `kassa serve` runs (Kassa's transactions are limited to 30 s: docs/api/webhooks.md). */
export const STATEMENT_TIMEOUT_MS = 30_000;

export async function openDatabase(config: Config, options: OpenDatabaseOptions): Promise<Database> {
  const embedded = config.databaseUrl ? null : await openEmbeddedDatabase(config.dataDir, options.role);
  const connectionString = config.databaseUrl ?? embedded!.url;
  // One connection for the embedded database: pglite-socket interleaves connections' queries outside a transaction
  // (electric-sql/pglite#1046). Bounded waits make a stalled database a 503 (docs/operations.md#data-and-operations).
  const pool = new pg.Pool({
    connectionString,
    max: options.poolSize ?? (embedded ? 1 : 10),
    connectionTimeoutMillis: CONNECT_TIMEOUT_MS,
    keepAlive: true,
    ...(!embedded && options.role === 'server' ? { statement_timeout: STATEMENT_TIMEOUT_MS } : {}),
  });
  // An idle client losing its server must not crash the process; the pool replaces it.
  pool.on('error', () => {});
  // 'minimal' errors: Prisma then skips capturing a stack trace at every query's call site (for the code frame of a
  // message nobody sees: the error mapping never shows Prisma's messages), about 15 µs a query (docs/benchmarks.md).
  const adapter = new PrismaPg(pool);
  const prisma = new PrismaClient({ adapter, errorFormat: 'minimal' });
  let closed = false;
  return {
    prisma,
    pool,
    statement: adapterStatements(adapter),
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

/**
 * Runs one SQL statement whose parameters are all text and answers its rows (values by column, as the driver adapter
 * gives them: a json or jsonb column as its text).
 */
export type AdapterStatement = (sql: string, args: readonly string[]) => Promise<unknown[][]>;

/**
 * Statements through `factory`'s adapter, skipping the client's JSON round trip of raw-query parameters (two ~6 KB
 * copies per create, docs/benchmarks.md): for text parameters whose answer the caller reads itself (create-batcher.ts).
 */
export function adapterStatements(factory: PrismaPg): AdapterStatement {
  let connected: ReturnType<PrismaPg['connect']> | undefined;
  return async (sql, args) => {
    connected ??= factory.connect();
    const result = await (
      await connected
    ).queryRaw({ sql, args: [...args], argTypes: args.map(() => ({ scalarType: 'string', arity: 'scalar' })) });
    return result.rows;
  };
}
