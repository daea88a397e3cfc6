import type { Config } from './config.js';
import { openDatabase, type Database } from './db/database.js';
import { createPrismaStore } from './db/prisma-store.js';
import type { EmbeddedRole } from './db/embedded.js';
import type { DomainContext } from './domain/context.js';
import type { Logger } from './logging.js';
import { createRateBook } from './rates/rate-book.js';
import { verifyMasterKey } from './domain/api-keys.js';

/** An open database with migrations applied and the domain wired over it. */
export interface Runtime {
  readonly db: Database;
  readonly ctx: DomainContext;
  close(): Promise<void>;
}

/** Shared by `kassa serve` and every CLI command, so both see the same database and rules. */
export async function openRuntime(config: Config, logger: Logger, role: EmbeddedRole): Promise<Runtime> {
  const db = await openDatabase(config, { role });
  try {
    const { applied } = await db.migrate();
    if (applied.length > 0) logger.info({ applied }, 'applied database migrations');
  } catch (error) {
    await db.close();
    throw error;
  }
  const ctx: DomainContext = {
    store: createPrismaStore(db.prisma),
    rates: createRateBook(config.rates, logger),
    networks: config.networks,
    checkoutBaseUrl: config.checkoutBaseUrl,
    inflightGraceMinutes: config.inflightGraceMinutes,
    masterKey: config.masterKey,
    clock: () => new Date(),
    webhooks: config.webhooks,
  };
  try {
    await verifyMasterKey(ctx);
  } catch (error) {
    await db.close();
    throw error;
  }
  return { db, ctx, close: () => db.close() };
}
