import { Prisma, type PrismaClient, type Refund as RefundRow } from '../../generated/prisma/client.js';
import type { AssetTicker } from '../../domain/shared/assets.js';
import type { CheckoutSessionStatus } from '../../domain/sessions/checkout-session.js';
import { HOLDING_STATUSES, type Refund, type RefundStatus } from '../../domain/refunds/refund.js';
import type {
  ReceivedAsset,
  RefundableSession,
  RefundPatch,
  RefundStore,
  RefundTx,
} from '../../domain/refunds/refund-ports.js';
import { Decimal, toDecimal } from '../../domain/shared/money.js';
import { appendOutboxEvent } from '../outbox-event.store.js';

type Tx = Prisma.TransactionClient;

const TRANSACTION_OPTIONS = { maxWait: 20_000, timeout: 30_000 } as const;
const HOLDING: readonly string[] = HOLDING_STATUSES;

/** A refunds row as the domain's Refund. */
export function toRefund(row: RefundRow): Refund {
  const fiat =
    row.basis === 'fiat' && row.fiatCurrency && row.amountFiat && row.unitPriceFiat && row.rateSource && row.ratedAt
      ? {
          currency: row.fiatCurrency,
          amountFiat: toDecimal(row.amountFiat),
          unitPriceFiat: toDecimal(row.unitPriceFiat),
          rateSource: row.rateSource,
          ratedAt: row.ratedAt,
        }
      : null;
  const proof =
    row.proofMessage && row.proofSignature && row.proofAddress
      ? { message: row.proofMessage, signature: row.proofSignature, address: row.proofAddress }
      : null;
  return {
    id: row.id,
    organisationId: row.organisationId,
    sessionId: row.sessionId,
    kind: row.kind,
    basis: row.basis,
    status: row.status,
    network: row.network,
    chainId: row.chainId,
    asset: row.asset as AssetTicker,
    tokenAddress: row.tokenAddress,
    decimals: row.decimals,
    amount: toDecimal(row.amount),
    baseUnits: BigInt(row.baseUnits.toFixed(0)),
    fiat,
    destination: row.destination,
    destinationSource: row.destinationSource,
    destinationAt: row.destinationAt,
    proof,
    claimExpiresAt: row.claimExpiresAt,
    transfer: {
      txHash: row.txHash,
      sentFrom: row.sentFrom,
      sentAt: row.sentAt,
      blockNumber: row.blockNumber,
      blockHash: row.blockHash,
      logIndex: row.logIndex,
      minedAt: row.minedAt,
      confirmations: row.confirmations,
      confirmedAt: row.confirmedAt,
    },
    failureReason: row.failureReason,
    note: row.note,
    idempotencyKey: row.idempotencyKey,
    requestHash: row.requestHash,
    createdAt: row.createdAt,
    updatedAt: row.updatedAt,
  };
}

/** The Prisma data of a patch: only the fields it names. */
function patchData(patch: RefundPatch): Prisma.RefundUpdateInput {
  const transfer = patch.transfer ?? {};
  const data: Prisma.RefundUpdateInput = { updatedAt: patch.updatedAt };
  if (patch.status !== undefined) data.status = patch.status;
  if (patch.destination !== undefined) data.destination = patch.destination;
  if (patch.destinationSource !== undefined) data.destinationSource = patch.destinationSource;
  if (patch.destinationAt !== undefined) data.destinationAt = patch.destinationAt;
  if (patch.proof !== undefined) {
    data.proofMessage = patch.proof?.message ?? null;
    data.proofSignature = patch.proof?.signature ?? null;
    data.proofAddress = patch.proof?.address ?? null;
  }
  if (patch.failureReason !== undefined) data.failureReason = patch.failureReason;
  for (const key of Object.keys(transfer) as Array<keyof typeof transfer>) {
    (data as Record<string, unknown>)[key] = transfer[key];
  }
  return data;
}

async function readSession(client: Tx, sessionId: string, lock: boolean): Promise<RefundableSession | null> {
  const rows = await client.$queryRaw<
    Array<{
      id: string;
      organisation_id: string;
      status: CheckoutSessionStatus;
      overpaid: boolean;
      fiat_currency: string;
      crypto_currency: string | null;
      total_amount_crypto: string | null;
      chain_id: string | null;
    }>
  >`SELECT id, organisation_id, status::text AS status, overpaid, fiat_currency, crypto_currency,
           total_amount_crypto::text AS total_amount_crypto, chain_id
      FROM checkout_sessions WHERE id = ${sessionId}::uuid ${lock ? Prisma.sql`FOR UPDATE` : Prisma.empty}`;
  const row = rows[0];
  if (!row) return null;
  const [received, refunds] = await Promise.all([
    receivedBy(client, sessionId),
    client.refund.findMany({
      where: { sessionId, status: { in: HOLDING as RefundStatus[] } },
      orderBy: [{ createdAt: 'asc' }, { id: 'asc' }],
    }),
  ]);
  return {
    id: row.id,
    organisationId: row.organisation_id,
    status: row.status,
    overpaid: row.overpaid,
    fiatCurrency: row.fiat_currency,
    cryptoCurrency: row.crypto_currency as AssetTicker | null,
    totalAmountCrypto: row.total_amount_crypto === null ? null : new Decimal(row.total_amount_crypto),
    chainId: row.chain_id,
    received,
    refunds: refunds.map(toRefund),
  };
}

/** The session's confirmed payments still on the chain, per network and asset, in the order they first came. */
async function receivedBy(client: Tx, sessionId: string): Promise<ReceivedAsset[]> {
  const rows = await client.$queryRaw<
    Array<{
      network: string;
      chain_id: string;
      asset: string;
      token_address: string | null;
      amount: string;
      payers: string[];
    }>
  >`SELECT network, chain_id, asset, lower(token_address) AS token_address, SUM(amount)::text AS amount,
           array_agg(DISTINCT lower(from_address)) AS payers
      FROM payments
     WHERE session_id = ${sessionId}::uuid AND state = 'confirmed' AND live IS TRUE
     GROUP BY network, chain_id, asset, lower(token_address)
     ORDER BY min(created_at)`;
  return rows.map((row) => ({
    network: row.network,
    chainId: row.chain_id,
    asset: row.asset as AssetTicker,
    tokenAddress: row.token_address,
    amount: new Decimal(row.amount),
    payers: row.payers,
  }));
}

class PrismaRefundTx implements RefundTx {
  constructor(readonly client: Tx) {}

  lockSession(sessionId: string) {
    return readSession(this.client, sessionId, true);
  }

  async lockRefund(refundId: string): Promise<Refund | null> {
    const locked = await this.client.$queryRaw<Array<{ id: string }>>`
      SELECT id FROM refunds WHERE id = ${refundId}::uuid FOR UPDATE`;
    if (locked.length === 0) return null;
    const row = await this.client.refund.findUnique({ where: { id: refundId } });
    return row ? toRefund(row) : null;
  }

  async findByIdempotencyKey(organisationId: string, key: string): Promise<Refund | null> {
    const row = await this.client.refund.findUnique({
      where: { organisationId_idempotencyKey: { organisationId, idempotencyKey: key } },
    });
    return row ? toRefund(row) : null;
  }

  async insertRefund(refund: Refund): Promise<boolean> {
    const { fiat, transfer } = refund;
    const inserted = await this.client.$queryRaw<Array<{ id: string }>>`
      INSERT INTO refunds (id, organisation_id, session_id, kind, basis, status, network, chain_id, asset,
                           token_address, decimals, amount, base_units, fiat_currency, amount_fiat, unit_price_fiat,
                           rate_source, rated_at, destination, destination_source, destination_at, claim_expires_at,
                           tx_hash, note, idempotency_key, request_hash, created_at, updated_at)
      VALUES (${refund.id}::uuid, ${refund.organisationId}::uuid, ${refund.sessionId}::uuid,
              ${refund.kind}::refund_kind, ${refund.basis}::refund_basis, ${refund.status}::refund_status,
              ${refund.network}, ${refund.chainId}, ${refund.asset}, ${refund.tokenAddress}, ${refund.decimals},
              ${refund.amount.toFixed()}::numeric, ${refund.baseUnits.toString()}::numeric,
              ${fiat?.currency ?? null}, ${fiat?.amountFiat.toFixed() ?? null}::numeric,
              ${fiat?.unitPriceFiat.toFixed() ?? null}::numeric, ${fiat?.rateSource ?? null},
              ${fiat?.ratedAt ?? null}::timestamptz, ${refund.destination},
              ${refund.destinationSource}::refund_destination_source, ${refund.destinationAt}::timestamptz,
              ${refund.claimExpiresAt}::timestamptz, ${transfer.txHash}, ${refund.note}, ${refund.idempotencyKey},
              ${refund.requestHash}, ${refund.createdAt}::timestamptz, ${refund.updatedAt}::timestamptz)
      ON CONFLICT (organisation_id, idempotency_key) DO NOTHING
      RETURNING id`;
    return inserted.length === 1;
  }

  async updateRefund(refundId: string, patch: RefundPatch): Promise<void> {
    await this.client.refund.update({ where: { id: refundId }, data: patchData(patch), select: { id: true } });
  }

  async recordStatusChange(change: Parameters<RefundTx['recordStatusChange']>[0]): Promise<void> {
    await this.client.refundStatusChange.create({
      data: {
        refundId: change.refundId,
        fromStatus: change.from,
        toStatus: change.to,
        cause: change.cause,
        createdAt: change.at,
      },
    });
  }

  async appendEvent(event: Parameters<RefundTx['appendEvent']>[0]): Promise<void> {
    await appendOutboxEvent(this.client, event);
  }

  async isOwnAddress(organisationId: string, network: string, address: string): Promise<boolean> {
    // Any network: an EVM address is the same account on every chain.
    void network;
    const rows = await this.client.$queryRaw<Array<{ own: boolean }>>`
      SELECT EXISTS (SELECT 1 FROM wallet_owners
                      WHERE organisation_id = ${organisationId}::uuid AND address = ${address})
          OR EXISTS (SELECT 1 FROM checkout_session_networks n JOIN checkout_sessions s ON s.id = n.session_id
                      WHERE n.wallet_address = ${address} AND s.organisation_id = ${organisationId}::uuid)
          OR EXISTS (SELECT 1 FROM organisation_wallets
                      WHERE organisation_id = ${organisationId}::uuid AND lower(address) = ${address}) AS own`;
    return rows[0]?.own ?? false;
  }
}

/** The domain's RefundStore over Prisma. */
export function createRefundStore(prisma: PrismaClient): RefundStore {
  const transaction = <T>(work: (tx: PrismaRefundTx) => Promise<T>): Promise<T> =>
    prisma.$transaction((tx) => work(new PrismaRefundTx(tx)), TRANSACTION_OPTIONS);
  return {
    transaction,
    async findById(refundId) {
      const row = await prisma.refund.findUnique({ where: { id: refundId } });
      return row ? toRefund(row) : null;
    },
    findSession: (sessionId) => readSession(prisma as unknown as Tx, sessionId, false),
    async listOfSession(sessionId) {
      const rows = await prisma.refund.findMany({
        where: { sessionId },
        orderBy: [{ createdAt: 'asc' }, { id: 'asc' }],
      });
      return rows.map(toRefund);
    },
    async historyOf(refundId) {
      const rows = await prisma.refundStatusChange.findMany({ where: { refundId }, orderBy: { id: 'asc' } });
      return rows.map((row) => ({
        refundId: row.refundId,
        from: row.fromStatus,
        to: row.toStatus,
        cause: row.cause,
        at: row.createdAt,
      }));
    },
    async listOnNetwork(network, statuses) {
      const rows = await prisma.refund.findMany({
        where: { network, status: { in: [...statuses] } },
        orderBy: [{ createdAt: 'asc' }, { id: 'asc' }],
      });
      return rows.map(toRefund);
    },
    lockDueForExpiry(now, limit, work) {
      return transaction(async (tx) => {
        const due = await tx.client.$queryRaw<Array<{ id: string }>>`
          SELECT id FROM refunds
           WHERE status = 'awaiting_destination' AND claim_expires_at <= ${now}
           ORDER BY claim_expires_at
           LIMIT ${limit}
           FOR UPDATE SKIP LOCKED`;
        for (const { id } of due) {
          const row = await tx.client.refund.findUnique({ where: { id } });
          if (row) await work(tx, toRefund(row));
        }
        return due.length;
      });
    },
  };
}
