import type { PrismaClient } from '../../generated/prisma/client.js';
import type { SessionListRow, TimelineEntry } from '../../domain/dashboard/session-list-ports.js';
import { Decimal } from '../../domain/shared/money.js';

/** One entry of a session's dashboard timeline, every field it does not name null. */
function entry(at: Date, kind: TimelineEntry['kind'], fields: Partial<TimelineEntry>): TimelineEntry {
  return {
    at,
    kind,
    fromStatus: null,
    toStatus: null,
    cause: null,
    txHash: null,
    network: null,
    asset: null,
    amount: null,
    oldAmount: null,
    outcome: null,
    reason: null,
    blockNumber: null,
    confirmations: null,
    late: null,
    attribution: null,
    eventType: null,
    endpointUrl: null,
    attempt: null,
    httpStatus: null,
    deliveryId: null,
    refundId: null,
    ...fields,
  };
}

/**
 * A session's story from the tables that record it: history, quote changes, binds, payments, webhook attempts and its
 * refunds' status changes.
 */
export async function timeline(prisma: PrismaClient, row: SessionListRow): Promise<TimelineEntry[]> {
  const id = row.id;
  const [history, quoteChanges, binds, payments, attempts, refunds] = await Promise.all([
    prisma.checkoutSessionStatusChange.findMany({ where: { sessionId: id }, orderBy: { id: 'asc' } }),
    prisma.checkoutSessionQuoteChange.findMany({ where: { sessionId: id }, orderBy: { id: 'asc' } }),
    prisma.checkoutSessionTransaction.findMany({ where: { sessionId: id }, orderBy: { createdAt: 'asc' } }),
    prisma.$queryRaw<
      Array<{
        created_at: Date;
        tx_hash: string;
        network: string;
        asset: string;
        amount: string;
        block_number: bigint;
        confirmations: number;
        state: string;
        late: boolean;
        attribution: string | null;
      }>
    >`SELECT created_at, tx_hash, network, asset, amount::text AS amount, block_number, confirmations, state, late,
             attribution
        FROM payments WHERE session_id = ${id}::uuid ORDER BY created_at, id`,
    prisma.$queryRaw<
      Array<{
        created_at: Date;
        attempt: number;
        status_code: number | null;
        error: string | null;
        status: string;
        type: string;
        url: string;
        delivery_id: string;
      }>
    >`SELECT a.created_at, a.attempt, a.status_code, a.error, d.status, e.type, ep.url, d.id AS delivery_id
        FROM outbox_events e
        JOIN webhook_deliveries d ON d.event_id = e.id
        JOIN webhook_endpoints ep ON ep.id = d.endpoint_id
        JOIN webhook_delivery_attempts a ON a.delivery_id = d.id
       WHERE e.session_id = ${id}::uuid AND ep.organisation_id = e.organisation_id
       ORDER BY a.created_at, a.id`,
    prisma.refundStatusChange.findMany({
      where: { refund: { sessionId: id } },
      include: { refund: { select: { network: true, asset: true, amount: true, txHash: true } } },
      orderBy: { id: 'asc' },
    }),
  ]);
  const entries: TimelineEntry[] = [
    entry(row.createdAt, 'created', { toStatus: null }),
    ...history.map((change) =>
      entry(change.createdAt, 'status_changed', {
        fromStatus: change.fromStatus,
        toStatus: change.toStatus,
        cause: change.cause,
      }),
    ),
    ...quoteChanges.map((change) =>
      entry(change.createdAt, 'quote_changed', {
        asset: change.ticker,
        amount: new Decimal(change.newAmount.toString()),
        oldAmount: new Decimal(change.oldAmount.toString()),
        cause: change.rateSource,
      }),
    ),
    ...binds.map((bind) =>
      entry(bind.createdAt, 'bind', {
        txHash: bind.txHash,
        network: bind.network,
        asset: bind.cryptoCurrency,
        outcome: bind.state,
        reason: bind.reason,
      }),
    ),
    ...payments.map((payment) =>
      entry(payment.created_at, 'transfer', {
        txHash: payment.tx_hash,
        network: payment.network,
        asset: payment.asset,
        amount: new Decimal(payment.amount),
        blockNumber: payment.block_number.toString(),
        confirmations: payment.confirmations,
        outcome: payment.state,
        late: payment.late,
        attribution: payment.attribution,
      }),
    ),
    ...attempts.map((attempt) =>
      entry(attempt.created_at, 'webhook_attempt', {
        eventType: attempt.type,
        endpointUrl: attempt.url,
        attempt: attempt.attempt,
        httpStatus: attempt.status_code,
        reason: attempt.error,
        outcome: attempt.status,
        deliveryId: attempt.delivery_id,
      }),
    ),
    ...refunds.map((change) =>
      entry(change.createdAt, 'refund', {
        fromStatus: change.fromStatus,
        toStatus: change.toStatus,
        cause: change.cause,
        outcome: change.toStatus,
        network: change.refund.network,
        asset: change.refund.asset,
        amount: new Decimal(change.refund.amount.toString()),
        txHash: change.refund.txHash,
        refundId: change.refundId,
      }),
    ),
  ];
  // Stable: entries of one moment keep the order above (created, status, quotes, binds, transfers, webhooks, refunds).
  return entries
    .map((value, index) => ({ value, index }))
    .sort((a, b) => a.value.at.getTime() - b.value.at.getTime() || a.index - b.index)
    .map(({ value }) => value);
}
