import { Prisma } from '../generated/prisma/client.js';
import type { CheckoutSession } from '../domain/sessions/checkout-session.js';
import { OPEN_STATUSES } from '../domain/sessions/checkout-session.js';
import type { Store, TxStore } from '../domain/ports.js';
import { PrismaChainLedger } from './payments/chain-ledger.js';
import { SessionReads, boundTransactionsRead } from './sessions/session-read-function.js';
import { dueExpiriesSql, expiryHolds } from './payments/expiry-holds.js';
import { boundTransactions } from './payments/bound-transaction.store.js';
import { purgeReleasedAmountClaims } from './payments/amount-claims.js';
import { requoteHeldSql } from './payments/requote-holds.js';
import { PrismaOrganisationStore } from './organisations/organisation.store.js';
import { PrismaPaymentLinkStore } from './payment-links/payment-link.store.js';
import { PrismaApiKeyStore } from './organisations/api-key.store.js';
import { findIdempotencyKey, PrismaTxStore, receivesAtDepositAddress } from './tx-store.js';
import { cachedApiKeys, cachedOrganisations } from './cached-stores.js';
import { SILENT_FEED, type ChangeFeed } from './change-feed/change-feed.js';
import { writeNewSession, OffsetHints } from './sessions/create-session.store.js';
import { CreateBatcher } from './sessions/create-batcher.js';
import type { Database } from './database.js';
import { ReadCache } from './sessions/read-cache.js';
import { RecentMisses } from './recent-misses.js';
import { createWebhookStore } from './webhooks/webhook.store.js';
import { createDashboardStore } from './dashboard/dashboard.store.js';
import { createRefundStore } from './refunds/refund.store.js';
import { createRefundWatchStore } from './refunds/refund-watch.store.js';

/** Idempotency keys deleted per statement by the hourly purge. */
const IDEMPOTENCY_PURGE_BATCH = 5_000;

type Tx = Prisma.TransactionClient;

// Generous: on the embedded database transactions queue behind each other.
const TRANSACTION_OPTIONS = { maxWait: 20_000, timeout: 30_000 } as const;
const OPEN: readonly string[] = OPEN_STATUSES;
/** A cached session is read again after this long even if no change was announced (a safety net). */
const SESSION_CACHE_TTL_MS = 60_000;
/**
 * Session ids found unknown are answered from memory this long (at most UNKNOWN_SESSIONS_KEPT): ids are random and
 * shown only once written, so reads of made-up ids cost no round trips and miss nothing.
 */
const UNKNOWN_SESSION_MEMORY_MS = 5_000;
const UNKNOWN_SESSIONS_KEPT = 10_000;

export interface StoreOptions {
  /** What tells this process about changes; caches serve only while it hears every one. */
  readonly feed: ChangeFeed;
  /** Sessions kept in memory for reads (KASSA_SESSION_CACHE_SIZE); 0: none. */
  readonly sessionCacheSize: number;
}

/** A store that caches nothing (CLI commands: they run once and hear no changes). */
export const UNCACHED: StoreOptions = { feed: SILENT_FEED, sessionCacheSize: 0 };

/**
 * The domain's Store over Prisma. With a live feed, sessions, API keys and organisations are read through caches that
 * every announced change drops (docs/decisions/0010); this process's own writes drop theirs on commit.
 */
export function createPrismaStore(db: Pick<Database, 'prisma' | 'statement'>, options: StoreOptions = UNCACHED): Store {
  const { prisma } = db;
  const { feed } = options;
  const sessionCache = new ReadCache<CheckoutSession>({
    capacity: options.sessionCacheSize,
    ttlMs: SESSION_CACHE_TTL_MS,
    feed,
  });
  const unknownSessions = new RecentMisses({ capacity: UNKNOWN_SESSIONS_KEPT, ttlMs: UNKNOWN_SESSION_MEMORY_MS });
  feed.subscribe('kassa_checkout_session', (id) => {
    sessionCache.invalidate(id);
    unknownSessions.forget(id);
  });
  feed.onReset(() => sessionCache.clear());
  const offsetHints = new OffsetHints();
  const createBatcher = new CreateBatcher(db.statement);
  const sessionReads = new SessionReads(db.statement);
  const organisations = cachedOrganisations(new PrismaOrganisationStore(prisma), feed, () => sessionCache.clear());
  /** Runs a transaction and drops every session it locked or wrote from the cache once it ends. */
  const transaction = async <T>(work: (tx: PrismaTxStore) => Promise<T>): Promise<T> => {
    const touched = new Set<string>();
    try {
      return await prisma.$transaction((tx) => work(new PrismaTxStore(tx, touched)), TRANSACTION_OPTIONS);
    } finally {
      for (const id of touched) sessionCache.invalidate(id);
    }
  };
  return {
    sessions: {
      findById: (id) => unknownSessions.read(id, () => sessionCache.read(id, () => sessionReads.read(id))),
      peek: (id) => sessionCache.peek(id),
      transactionsOf: async (id) => {
        // Read with the session the cache holds now, when it was (see boundTransactionsRead).
        const cached = sessionCache.peek(id);
        return (
          (cached && boundTransactionsRead(cached)?.slice()) ?? boundTransactions.ofSession(prisma as unknown as Tx, id)
        );
      },
      expiryHolds: (session, graceMinutes) => expiryHolds(prisma as unknown as Tx, session.id, graceMinutes),
      findIdempotencyKey: (organisationId, key) => findIdempotencyKey(prisma as unknown as Tx, organisationId, key),
      receivesAtDepositAddress: (id) => receivesAtDepositAddress(prisma as unknown as Tx, id),
    },
    organisations,
    apiKeys: cachedApiKeys(new PrismaApiKeyStore(prisma), feed),
    webhooks: createWebhookStore(prisma),
    paymentLinks: new PrismaPaymentLinkStore(prisma),
    branding: organisations,
    dashboard: createDashboardStore(prisma),
    refunds: createRefundStore(prisma),
    refundWatch: createRefundWatchStore(prisma),
    async createSession(write) {
      try {
        return await writeNewSession(createBatcher, write, offsetHints);
      } finally {
        unknownSessions.forget(write.session.id);
      }
    },
    offsetsToTry: (claims, maxSteps) => claims.map((claim) => offsetHints.take(claim, maxSteps)),
    transaction,
    lockSessionsDueForExpiry(now, inflightGraceMinutes, limit, work) {
      const lock = (tx: Tx) => tx.$queryRaw<Array<{ id: string }>>(dueExpiriesSql(now, inflightGraceMinutes, limit));
      return withLockedSessions(transaction, lock, work);
    },
    lockSessionsWithChangedPayments(limit, work) {
      return withLockedSessions(
        transaction,
        (tx) => tx.$queryRaw<Array<{ id: string }>>`
          SELECT id FROM checkout_sessions
          WHERE payments_changed_at IS NOT NULL
          ORDER BY payments_changed_at
          LIMIT ${limit}
          FOR UPDATE SKIP LOCKED`,
        work,
      );
    },
    async currenciesDueForRequote(now, ttlMinutes, graceMinutes) {
      const rows = await prisma.$queryRaw<Array<{ fiat_currency: string }>>`
        SELECT DISTINCT s.fiat_currency FROM checkout_sessions s
         WHERE ${dueForRequoteSql(now, ttlMinutes, graceMinutes)}`;
      return rows.map((row) => row.fiat_currency);
    },
    async sessionsDueForRequote(now, ttlMinutes, graceMinutes, limit, priced) {
      // Only sessions whose every quoted asset has a fresh rate in their currency: the others wait where they are.
      const pricedPairs = [...priced].flatMap(([currency, tickers]) =>
        tickers.map((ticker) => `${currency}:${ticker}`),
      );
      const rows = await prisma.$queryRaw<Array<{ id: string; fiat_currency: string }>>`
        SELECT s.id, s.fiat_currency FROM checkout_sessions s
         WHERE ${dueForRequoteSql(now, ttlMinutes, graceMinutes)}
           AND NOT EXISTS (SELECT 1 FROM checkout_session_quotes q
                            WHERE q.session_id = s.id
                              AND NOT (s.fiat_currency || ':' || q.ticker) = ANY(${pricedPairs}::text[]))
         ORDER BY s.quoted_at
         LIMIT ${limit}`;
      return rows.map((row) => ({ id: row.id, fiatCurrency: row.fiat_currency }));
    },
    purgeReleasedAmountClaims(now, graceMinutes, keepOpenMinutes) {
      // One transaction: an amount it frees stays locked until a share left on it has been made a claim.
      return prisma.$transaction(
        (tx) => purgeReleasedAmountClaims(tx, now, graceMinutes, keepOpenMinutes),
        TRANSACTION_OPTIONS,
      );
    },
    chain: new PrismaChainLedger(prisma),
    async deleteIdempotencyKeysBefore(before) {
      // In batches, each statement well inside the 30 s statement timeout: one DELETE of a large backlog could time out
      // every run and never catch up.
      let total = 0;
      for (;;) {
        const count = await prisma.$executeRaw`
          DELETE FROM idempotency_keys WHERE ctid IN (
            SELECT ctid FROM idempotency_keys WHERE created_at < ${before} LIMIT ${IDEMPOTENCY_PURGE_BATCH})`;
        total += count;
        if (count < IDEMPOTENCY_PURGE_BATCH) return total;
      }
    },
  };
}

/**
 * In one transaction: locks the sessions `lock` selects (FOR UPDATE SKIP LOCKED, so instances take disjoint batches)
 * and runs `work` on each. Returns how many were locked.
 */
async function withLockedSessions(
  transaction: <T>(work: (tx: PrismaTxStore) => Promise<T>) => Promise<T>,
  lock: (tx: Tx) => Promise<Array<{ id: string }>>,
  work: (tx: TxStore, session: CheckoutSession) => Promise<void>,
): Promise<number> {
  return transaction(async (txStore) => {
    const locked = await lock(txStore.client);
    for (const { id } of locked) {
      const session = await txStore.readLockedSession(id);
      if (session) await work(txStore, session);
    }
    return locked.length;
  });
}

/** Open sessions due for re-pricing (`s` is checkout_sessions): the store port's sessionsDueForRequote. */
function dueForRequoteSql(now: Date, ttlMinutes: number, graceMinutes: number): Prisma.Sql {
  const quotedBefore = new Date(now.getTime() - ttlMinutes * 60_000);
  return Prisma.sql`s.status::text = ANY(${OPEN}) AND s.status <> 'partial' AND s.expires_at > ${now}
           AND s.crypto_currency IS NULL AND s.quoted_at <= ${quotedBefore}
           AND NOT ${requoteHeldSql(now, ttlMinutes, graceMinutes)}`;
}
