import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import supertest from 'supertest';
import { createApp } from '../../src/app.js';
import { answerClientErrors } from '../../src/rest/client-error.js';
import { loadConfig, type Config } from '../../src/config.js';
import type { DomainContext } from '../../src/domain/context.js';
import { createLogger, type Logger } from '../../src/logging.js';
import { openRuntime, type Runtime } from '../../src/runtime.js';
import { startGraphqlApi } from '../../src/graphql/graphql-server.js';
import type { CachedQueries } from '../../src/graphql/cached-queries.js';
import { createTestDatabase, type TestDatabase, type TestDatabaseMode } from './databases.js';

export interface TestKassa {
  readonly config: Config;
  readonly ctx: DomainContext;
  readonly runtime: Runtime;
  readonly database: TestDatabase;
  /** Base URL of the real HTTP server on 127.0.0.1. */
  readonly url: string;
  readonly http: ReturnType<typeof supertest>;
  /** GraphQL answers kept and served before Express (src/graphql/cached-queries.ts). */
  readonly cachedQueries: CachedQueries;
  close(): Promise<void>;
}

export interface TestKassaOptions {
  /** Extra environment for loadConfig. */
  readonly env?: Record<string, string>;
  /** Replaces the clock (expiry tests move time). */
  readonly clock?: () => Date;
  /** Replaces parts of the domain context (e.g. a rates provider for a 503 test). */
  readonly override?: Partial<DomainContext>;
  /** Reuse a database (a second instance on the same database). */
  readonly database?: TestDatabase;
  /** Logs here instead of nowhere (LOG_LEVEL silent). */
  readonly logger?: Logger;
}

export const TEST_ENV = {
  KASSA_ENV: 'test',
  LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? 'silent',
  KASSA_NETWORKS: 'local,bsc,ethereum',
  CHECKOUT_BASE_URL: 'https://pay.example.test',
  // The suites send far more from 127.0.0.1 than any payer or merchant would: the limits stay on, but far away.
  // test/e2e/*rate-limits.test.ts sets its own low ones (docs/api/rest.md#rate-limits has the real defaults).
  KASSA_RATE_LIMIT_AUTH_FAILURES: '100000/1m',
  KASSA_RATE_LIMIT_AUTH_FAILURES_KEY: '100000/1m',
  KASSA_RATE_LIMIT_CREATE: '100000/1m',
  KASSA_RATE_LIMIT_BIND_SESSION: '100000/1m',
  KASSA_RATE_LIMIT_BIND_ADDRESS: '100000/1m',
  KASSA_RATE_LIMIT_GRAPHQL: '100000/1m',
  KASSA_RATE_LIMIT_WEBSOCKET: '100000/1m',
  KASSA_RATE_LIMIT_QR: '100000/1m',
  KASSA_RATE_LIMIT_LINK_SESSIONS: '100000/1m',
  KASSA_RATE_LIMIT_UNKNOWN_SESSIONS: '100000/1m',
  KASSA_RATE_LIMIT_REFUND_CLAIMS: '100000/1m',
} as const;

/** A real Kassa over real HTTP on a database of this test file's own. */
export async function startTestKassa(options: TestKassaOptions = {}): Promise<TestKassa> {
  const database = options.database ?? (await createTestDatabase());
  const config = loadConfig({
    ...TEST_ENV,
    KASSA_DATA_DIR: database.dataDir,
    ...(database.databaseUrl ? { DATABASE_URL: database.databaseUrl } : {}),
    ...options.env,
  });
  const logger = options.logger ?? createLogger(config.logLevel);
  const runtime = await openRuntime(config, logger, 'server');
  const ctx: DomainContext = {
    ...runtime.ctx,
    ...(options.clock ? { clock: options.clock } : {}),
    ...options.override,
  };
  const graphql = await startGraphqlApi({ ctx, config, changes: runtime.changes, logger });
  const app = createApp({
    ctx,
    logger,
    graphql: graphql.middleware,
    graphqlLane: graphql.lane,
    changes: runtime.changes,
    readiness: { checkDatabase: async () => void (await runtime.db.prisma.$queryRaw`SELECT 1`) },
  });
  const server: Server = await new Promise((resolve) => {
    const listening = app.listen(0, '127.0.0.1', () => resolve(listening));
    answerClientErrors(listening);
    graphql.attach(listening);
  });
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    config,
    ctx,
    runtime,
    database,
    url,
    http: supertest(url),
    cachedQueries: graphql.cachedQueries,
    async close() {
      await graphql.stop();
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
      await runtime.close();
      if (!options.database) await database.drop();
    },
  };
}

/**
 * A Kassa on a database of its own in `mode` (whatever the project runs on), for a file that runs the same
 * case on both databases; `close()` drops the database too.
 */
export async function startTestKassaOn(mode: TestDatabaseMode, env: Record<string, string> = {}): Promise<TestKassa> {
  const database = await createTestDatabase(mode);
  const kassa = await startTestKassa({ database, env });
  return {
    ...kassa,
    close: async () => {
      await kassa.close();
      await database.drop();
    },
  };
}
