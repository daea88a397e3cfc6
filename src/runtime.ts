import type { Config } from './config.js';
import { openDatabase, type Database } from './db/database.js';
import { createPrismaStore } from './db/prisma-store.js';
import { SILENT_FEED, type ChangeFeed } from './db/change-feed/change-feed.js';
import { openChangeFeed } from './db/change-feed/open-change-feed.js';
import { openRequestGuard } from './db/organisations/request-guard.store.js';
import type { EmbeddedRole } from './db/embedded.js';
import type { DomainContext } from './domain/context.js';
import type { Logger } from './logging.js';
import { createRateBook } from './rates/rate-book.js';
import { verifyMasterKey } from './domain/organisations/api-keys.js';
import { verifyNoV1Secrets } from './domain/organisations/master-key-rotation.js';
import { createStoredSecretsStore } from './db/organisations/stored-secrets.js';
import { createChainReader } from './chain/chain-reader.js';
import { unavailable } from './domain/shared/errors.js';
import { migrationStatus } from './db/migration-status.js';
import { resolveHostByDns } from './webhooks/dns-host-resolver.js';
import { depositFactoryAddress, depositFactoryDeployed } from './chain/deposit-contracts.js';
import { createDepositChain } from './chain/dashboard-deposits.js';

/** An open database with migrations applied and the domain wired over it. */
export interface Runtime {
  readonly db: Database;
  readonly ctx: DomainContext;
  /**
   * What changed in the database, whoever changed it: the caches' and GraphQL live updates' source (silent for CLI
   * commands).
   */
  readonly changes: ChangeFeed;
  close(): Promise<void>;
}

/** Shared by `kassa serve` and every CLI command, so both see the same database and rules. */
export async function openRuntime(config: Config, logger: Logger, role: EmbeddedRole): Promise<Runtime> {
  const db = await openDatabase(config, { role });
  try {
    if (config.migrateOnStart) {
      const { applied } = await db.migrate();
      if (applied.length > 0) logger.info({ applied }, 'applied database migrations');
    } else {
      await requireMigrated(db);
    }
  } catch (error) {
    await db.close();
    throw error;
  }
  // A server runs long and serves reads: it caches, and hears every change. A CLI command does neither.
  const changes = role === 'server' ? openChangeFeed(db, config.databaseUrl, logger) : SILENT_FEED;
  const deposits = createDepositChain(config.networks, db.prisma);
  const ctx: DomainContext = {
    store: createPrismaStore(db, {
      feed: changes,
      sessionCacheSize: role === 'server' ? config.sessionCacheSize : 0,
    }),
    rates: createRateBook(config.rates, logger),
    networks: config.networks,
    checkoutBaseUrl: config.checkoutBaseUrl,
    inflightGraceMinutes: config.inflightGraceMinutes,
    quoteTtlMinutes: config.payments.quoteTtlMinutes,
    uniqueAmountSteps: config.payments.uniqueAmountSteps,
    chain: createChainReader(config.networks, config.payments.bindLookupTimeoutMs, Date.now, {
      sandboxNetwork: config.sandbox ? 'local' : undefined,
    }),
    deposits,
    masterKey: {
      current: config.masterKey,
      previous: config.previousMasterKeys,
      refuseV1: config.secretsV1 === 'refuse',
    },
    clock: () => new Date(),
    webhooks: config.webhooks,
    resolveHost: resolveHostByDns,
    requestGuard: openRequestGuard(db, config.requestGuard),
  };
  const close = async () => {
    deposits.stop();
    await changes.close();
    await db.close();
  };
  try {
    // First: with v1 refused, a v1 sample would otherwise read as a wrong master key.
    await verifyNoV1Secrets(ctx.masterKey, createStoredSecretsStore(db.prisma));
    await verifyMasterKey(ctx);
    if (role === 'server' && config.env === 'production') await requireDepositFactories(ctx, logger);
  } catch (error) {
    await close();
    throw error;
  }
  return { db, ctx, changes, close };
}

/**
 * With KASSA_MIGRATE_ON_START off (production), the schema is changed only by `kassa migrate`: refuse a database it has
 * not brought up to date.
 */
async function requireMigrated(db: Database): Promise<void> {
  const { pending, changed } = await migrationStatus(db.pool);
  if (changed.length > 0)
    throw unavailable(
      `Migration ${changed.join(', ')} was changed after it was applied (checksum differs); restore the original ` +
        `migration file`,
    );
  if (pending.length === 0) return;
  const named =
    pending.length > 3 ? `${pending.slice(0, 3).join(', ')} and ${pending.length - 3} more` : pending.join(', ');
  throw unavailable(
    `The database is missing ${pending.length} migration${pending.length === 1 ? '' : 's'} (${named}): run \`kassa ` +
      `migrate\` first (KASSA_MIGRATE_ON_START is off)`,
  );
}

/**
 * Production refuses to start while an organisation uses deposit mode on a network whose node shows no deposit factory
 * (money sent there could not be collected); a node that does not answer is only warned about.
 */
async function requireDepositFactories(ctx: DomainContext, logger: Logger): Promise<void> {
  const depositOrganisations = (await ctx.store.organisations.list()).filter(
    (organisation) => !organisation.deleted && organisation.receivingMode === 'deposit_addresses',
  );
  const missing: string[] = [];
  for (const network of ctx.networks) {
    const users = depositOrganisations.filter((organisation) => organisation.wallets[network.slug]);
    if (users.length === 0) continue;
    const deployed = await depositFactoryDeployed(network.rpcUrls);
    if (deployed === false) missing.push(network.slug);
    if (deployed === null)
      logger.warn(
        { network: network.slug, organisations: users.map((organisation) => organisation.id) },
        'no node answered: cannot tell whether the deposit factory is deployed for deposit-mode organisations',
      );
  }
  if (missing.length === 0) return;
  throw unavailable(
    `Organisations use deposit addresses on ${missing.join(', ')}, where the deposit factory ` +
      `(${depositFactoryAddress()}) is not deployed, so money paid there could not be collected: run ` +
      missing.map((slug) => `\`kassa contracts deploy --network ${slug}\``).join(' and ') +
      ' (docs/operations.md#deposit-contracts), or switch them to the shared wallet with ' +
      '`kassa orgs policy --org <id> --receiving shared`',
  );
}
