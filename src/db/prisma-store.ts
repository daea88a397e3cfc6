import { Prisma, type PrismaClient } from '../generated/prisma/client.js';
import { conflict } from '../domain/errors.js';
import type { CheckoutSession } from '../domain/checkout-session.js';
import type { IdempotencyRecord, SessionPatch, Store, TxStore } from '../domain/ports.js';
import type { AssetTicker } from '../domain/assets.js';
import { toDecimal, type Decimal } from '../domain/money.js';
import { PrismaChainLedger } from './chain-ledger.js';
import { toSessionCreate } from './checkout-session.mapper.js';
import { readSession } from './checkout-session.read.js';
import { PrismaOrganisationStore } from './organisation.store.js';
import { PrismaApiKeyStore } from './api-key.store.js';
import { PrismaWebhookStore } from '../webhooks/webhook.store.js';

type Tx = Prisma.TransactionClient;

// Generous: on the embedded database transactions queue behind each other.
const TRANSACTION_OPTIONS = { maxWait: 20_000, timeout: 30_000 } as const;

/** The domain's Store over Prisma. */
export function createPrismaStore(prisma: PrismaClient): Store {
  return {
    sessions: {
      findById: (id) => readSession(prisma, id),
      findIdempotencyKey: (organisationId, key) => findIdempotencyKey(prisma, organisationId, key),
    },
    organisations: new PrismaOrganisationStore(prisma),
    apiKeys: new PrismaApiKeyStore(prisma),
    webhooks: new PrismaWebhookStore(prisma),
    transaction: (work) => prisma.$transaction((tx) => work(new PrismaTxStore(tx)), TRANSACTION_OPTIONS),
    settleDueExpiries(now, inflightGraceMinutes, limit, settle) {
      const graceEndedFor = new Date(now.getTime() - inflightGraceMinutes * 60_000);
      return settleLockedSessions(
        prisma,
        (tx) => tx.$queryRaw<Array<{ id: string }>>`
          SELECT id FROM checkout_sessions
          WHERE status IN ('pending', 'waiting_payment', 'partial') AND expires_at <= ${now}
            AND (bound_at IS NULL OR bound_at >= expires_at OR bound_tx_checked_at IS NOT NULL OR expires_at <= ${graceEndedFor})
          ORDER BY expires_at
          LIMIT ${limit}
          FOR UPDATE SKIP LOCKED`,
        settle,
      );
    },
    settleChangedPayments(limit, settle) {
      return settleLockedSessions(
        prisma,
        (tx) => tx.$queryRaw<Array<{ id: string }>>`
          SELECT id FROM checkout_sessions
          WHERE payments_changed_at IS NOT NULL
          ORDER BY payments_changed_at
          LIMIT ${limit}
          FOR UPDATE SKIP LOCKED`,
        settle,
      );
    },
    chain: new PrismaChainLedger(prisma),
    async deleteIdempotencyKeysBefore(before) {
      const { count } = await prisma.idempotencyKey.deleteMany({ where: { createdAt: { lt: before } } });
      return count;
    },
  };
}

/**
 * In one transaction: locks the sessions `lock` selects (its query ends in
 * FOR UPDATE SKIP LOCKED, so concurrent instances take disjoint batches) and
 * runs `settle` on each. Returns how many were locked.
 */
async function settleLockedSessions(
  prisma: PrismaClient,
  lock: (tx: Tx) => Promise<Array<{ id: string }>>,
  settle: (tx: TxStore, session: CheckoutSession) => Promise<void>,
): Promise<number> {
  return prisma.$transaction(async (tx) => {
    const locked = await lock(tx);
    const txStore = new PrismaTxStore(tx);
    for (const { id } of locked) {
      const session = await readSession(tx, id);
      if (session) await settle(txStore, session);
    }
    return locked.length;
  }, TRANSACTION_OPTIONS);
}

async function findIdempotencyKey(client: PrismaClient | Tx, organisationId: string, key: string): Promise<IdempotencyRecord | null> {
  const row = await client.idempotencyKey.findUnique({ where: { organisationId_key: { organisationId, key } } });
  return row ? { requestHash: row.requestHash, sessionId: row.sessionId } : null;
}

class PrismaTxStore implements TxStore {
  constructor(private readonly tx: Tx) {}

  async claimIdempotencyKey(organisationId: string, key: string, requestHash: string, sessionId: string): Promise<boolean> {
    // ON CONFLICT waits for a concurrent inserter of the same key to finish, so only one claim wins.
    const inserted = await this.tx.$executeRaw`
      INSERT INTO idempotency_keys (organisation_id, key, request_hash, session_id)
      VALUES (${organisationId}::uuid, ${key}, ${requestHash}, ${sessionId}::uuid)
      ON CONFLICT DO NOTHING`;
    return inserted === 1;
  }

  findIdempotencyKey(organisationId: string, key: string) {
    return findIdempotencyKey(this.tx, organisationId, key);
  }

  async insertSession(session: CheckoutSession): Promise<void> {
    await this.tx.checkoutSession.create({ data: toSessionCreate(session) });
  }

  async lockSession(id: string): Promise<CheckoutSession | null> {
    const locked = await this.tx.$queryRaw<Array<{ id: string }>>`SELECT id FROM checkout_sessions WHERE id = ${id}::uuid FOR UPDATE`;
    return locked.length === 0 ? null : readSession(this.tx, id);
  }

  async findSessionIdByTxHash(txHash: string): Promise<string | null> {
    const row = await this.tx.checkoutSession.findUnique({ where: { boundTxHash: txHash }, select: { id: true } });
    return row?.id ?? null;
  }

  async updateSession(id: string, patch: SessionPatch): Promise<void> {
    try {
      await this.tx.checkoutSession.update({
        where: { id },
        data: { ...patch, totalAmountCrypto: patch.totalAmountCrypto?.toFixed(), amountReceived: patch.amountReceived?.toFixed() },
      });
    } catch (error) {
      if (error instanceof Prisma.PrismaClientKnownRequestError && error.code === 'P2002') {
        throw conflict(`Transaction ${patch.boundTxHash} is already bound to another checkout session`);
      }
      throw error;
    }
  }

  async recordStatusChange(change: Parameters<TxStore['recordStatusChange']>[0]): Promise<void> {
    await this.tx.checkoutSessionStatusChange.create({
      data: { sessionId: change.sessionId, fromStatus: change.from, toStatus: change.to, cause: change.cause, createdAt: change.at },
    });
  }

  async confirmedReceived(sessionId: string, asset: AssetTicker, chainId: string): Promise<Decimal> {
    const rows = await this.tx.$queryRaw<Array<{ total: string }>>`
      SELECT COALESCE(SUM(amount), 0)::text AS total FROM payments
      WHERE session_id = ${sessionId}::uuid AND state = 'confirmed' AND asset = ${asset} AND chain_id = ${chainId}`;
    return toDecimal(rows[0]!.total);
  }

  async attachPaymentsOfTransaction(sessionId: string, txHash: string, chainId: string, at: Date): Promise<number> {
    const attached = await this.tx.$executeRaw`
      UPDATE payments SET session_id = ${sessionId}::uuid, attribution = 'bound_tx', updated_at = ${at}
      WHERE tx_hash = ${txHash} AND chain_id = ${chainId} AND session_id IS NULL`;
    if (attached > 0) {
      await this.tx.$executeRaw`UPDATE checkout_sessions SET payments_changed_at = ${at} WHERE id = ${sessionId}::uuid`;
    }
    return attached;
  }

  async sessionCreditedWith(txHash: string, chainId: string): Promise<string | null> {
    const rows = await this.tx.$queryRaw<Array<{ session_id: string }>>`
      SELECT session_id FROM payments
      WHERE tx_hash = ${txHash} AND chain_id = ${chainId} AND session_id IS NOT NULL AND state <> 'reversed'
      LIMIT 1`;
    return rows[0]?.session_id ?? null;
  }

  async attachPayerWalletPayments(session: CheckoutSession, at: Date): Promise<number> {
    const wallet = session.networks.find((n) => n.chainId === session.chainId)?.walletAddress.toLowerCase();
    if (!session.payerWalletAddress || !wallet || !session.chainId) return 0;
    const attached = await this.tx.$executeRaw`
      UPDATE payments SET session_id = ${session.id}::uuid, attribution = 'payer_wallet', updated_at = ${at}
      WHERE session_id IS NULL AND state <> 'reversed' AND chain_id = ${session.chainId}
        AND from_address = ${session.payerWalletAddress} AND to_address = ${wallet} AND created_at >= ${session.createdAt}`;
    if (attached > 0) {
      await this.tx.$executeRaw`UPDATE checkout_sessions SET payments_changed_at = ${at} WHERE id = ${session.id}::uuid`;
    }
    return attached;
  }

  async appendEvent(event: Parameters<TxStore['appendEvent']>[0]): Promise<void> {
    await this.tx.outboxEvent.create({
      data: {
        id: event.id,
        organisationId: event.organisationId,
        sessionId: event.sessionId,
        type: event.type,
        payload: event.payload as Prisma.InputJsonValue,
        createdAt: event.createdAt,
      },
    });
  }
}
