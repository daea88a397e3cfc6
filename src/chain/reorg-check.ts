import { decide } from '../domain/payments/decide.js';
import type { WatchedNetwork } from './watched-network.js';

/** How many recorded block hashes are compared with the chain at most. */
const REORG_LOOKBACK = 64;

/**
 * A block hash commits to its ancestors, so one match means no reorganisation below it; on a mismatch, rolls back above
 * the newest recorded block that still matches. Returns whether it rolled back (the lease is then taken again).
 */
export async function undoReorganisation(watched: WatchedNetwork, head: bigint, start: bigint): Promise<boolean> {
  const { ctx, network, rpc } = watched;
  const ledger = ctx.store.chain;
  const recorded = await ledger.recordedBlocks(network.slug, REORG_LOOKBACK);
  if (recorded.length === 0) return false;
  let forkAt: bigint | null = null;
  let matched = false;
  for (const block of recorded) {
    const onChain = block.number <= head ? await rpc.block(block.number) : null;
    const compared = { blockNumber: block.number, recordedHash: block.hash, chainHash: onChain?.hash ?? null };
    if (decide({ kind: 'reorganisation' }, compared).kind === 'ignore') {
      matched = true;
      // Everything above the newest matching block is rescanned: only range ends and payment blocks are recorded,
      // and the unrecorded blocks between may have been replaced too.
      if (forkAt !== null) forkAt = block.number + 1n;
      break;
    }
    forkAt = block.number;
  }
  if (forkAt === null) return false;
  // Nothing recorded matches (a restarted sandbox chain, or deeper than the lookback):
  // rescan from the backfill start too.
  if (!matched && start < forkAt) forkAt = start;
  const reversed = await ledger.rollBack(network.slug, forkAt, ctx.clock());
  watched.metrics?.reorgs.inc({ network: network.slug });
  watched.logger.warn(
    { network: network.slug, fromBlock: forkAt.toString(), reversedPayments: reversed },
    'chain reorganisation: rolled back',
  );
  return true;
}
