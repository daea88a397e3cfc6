import type { Prisma } from '../generated/prisma/client.js';

/**
 * The sessions each Transfer log of a transaction is credited to on `chainId` (not reversed), by
 * log index: a transaction with several transfers to one wallet pays several sessions, one log
 * each (docs/payment-rules.md, rule 3).
 */
export async function transferHolders(
  tx: Prisma.TransactionClient,
  txHash: string,
  chainId: string,
): Promise<ReadonlyMap<number, string>> {
  const rows = await tx.$queryRaw<Array<{ log_index: number; session_id: string }>>`
    SELECT log_index, session_id::text FROM payments
     WHERE tx_hash = ${txHash} AND chain_id = ${chainId} AND session_id IS NOT NULL AND state <> 'reversed'`;
  return new Map(rows.map((row) => [Number(row.log_index), row.session_id]));
}
