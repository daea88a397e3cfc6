import type { PrismaClient } from '../../generated/prisma/client.js';
import type { RefundWatchStore, WatchedRefund } from '../../domain/refunds/refund-watch-ports.js';

/**
 * The refund watcher's leases over Prisma. A lease is taken by an upsert whose update only wins over an ended lease or
 * this instance's own, so two instances never hold one refund at once, also when both insert its first row.
 */
export function createRefundWatchStore(prisma: PrismaClient): RefundWatchStore {
  return {
    async lease(network, instanceId, now, leaseSeconds, limit) {
      const until = new Date(now.getTime() + leaseSeconds * 1000);
      const rows = await prisma.$queryRaw<Array<{ refund_id: string; next_block: bigint | null }>>`
        INSERT INTO refund_watch (refund_id, network, leader, lease_until, updated_at)
        SELECT r.id, r.network, ${instanceId}, ${until}, ${now}
          FROM refunds r
          LEFT JOIN refund_watch w ON w.refund_id = r.id
         WHERE r.network = ${network}
           AND (r.status IN ('ready', 'sent') OR (r.status = 'confirmed' AND w.settled_at IS NULL))
           AND (w.lease_until IS NULL OR w.lease_until < ${now} OR w.leader = ${instanceId})
         ORDER BY r.updated_at
         LIMIT ${limit}
        ON CONFLICT (refund_id) DO UPDATE
           SET leader = EXCLUDED.leader, lease_until = EXCLUDED.lease_until, updated_at = EXCLUDED.updated_at
         WHERE refund_watch.lease_until IS NULL OR refund_watch.lease_until < ${now}
            OR refund_watch.leader = EXCLUDED.leader
        RETURNING refund_id, next_block`;
      return rows.map((row): WatchedRefund => ({ refundId: row.refund_id, nextBlock: row.next_block }));
    },
    async advance(refundId, nextBlock) {
      await prisma.refundWatch.update({ where: { refundId }, data: { nextBlock, updatedAt: new Date() } });
    },
    async settle(refundId, now) {
      await prisma.refundWatch.update({
        where: { refundId },
        data: { settledAt: now, leaseUntil: null, updatedAt: now },
      });
    },
    async heldByAnother(refundId, chainId, txHash, logIndex) {
      const held = await prisma.refund.count({
        where: { chainId, txHash, logIndex, id: { not: refundId }, status: { not: 'failed' } },
      });
      return held > 0;
    },
    async walletsOf(organisationId, network) {
      const rows = await prisma.$queryRaw<Array<{ address: string }>>`
        SELECT lower(address) AS address FROM organisation_wallets
         WHERE organisation_id = ${organisationId}::uuid AND network = ${network}
        UNION
        SELECT lower(address) FROM wallet_owners
         WHERE organisation_id = ${organisationId}::uuid AND network = ${network}`;
      return rows.map((row) => row.address);
    },
  };
}
