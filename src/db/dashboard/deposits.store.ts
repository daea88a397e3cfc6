import type { PrismaClient } from '../../generated/prisma/client.js';

/** A collect recorded for the organisation (deposit_collections), with what it moved per session and asset. */
export interface RecordedCollect {
  readonly blockNumber: bigint;
  readonly items: ReadonlyArray<{ readonly sessionId: string; readonly asset: string; readonly amount: string }>;
}

/** The organisation's record of the collect `txHash` on `network`; null when none was recorded. */
export async function recordedCollect(
  prisma: PrismaClient,
  organisationId: string,
  network: string,
  txHash: string,
): Promise<RecordedCollect | null> {
  const rows = await prisma.$queryRaw<
    Array<{ block_number: bigint; session_id: string | null; asset: string | null; amount: string | null }>
  >`
    SELECT c.block_number, i.session_id::text AS session_id, i.asset, i.amount::text AS amount
      FROM deposit_collections c
      LEFT JOIN deposit_collection_items i ON i.collection_id = c.id
     WHERE c.organisation_id = ${organisationId}::uuid AND c.network = ${network} AND c.tx_hash = ${txHash}
     ORDER BY i.session_id, i.asset`;
  if (rows.length === 0) return null;
  return {
    blockNumber: BigInt(rows[0]!.block_number),
    items: rows.flatMap((row) =>
      row.session_id && row.asset && row.amount
        ? [{ sessionId: row.session_id, asset: row.asset, amount: row.amount }]
        : [],
    ),
  };
}
