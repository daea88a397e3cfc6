import type { WatchedNetwork } from './watched-network.js';

/** How many recorded block hashes are compared with the chain at most. */
const REORG_LOOKBACK = 64;

/**
 * Compares the newest recorded block hash with the chain. A block hash commits to all its
 * ancestors, so one match means no reorganisation below it; on a mismatch, walks down to
 * the newest recorded block that still matches and rolls everything above it back.
 * Returns whether it rolled anything back (the cursor moved: the lease is taken again).
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
    if (onChain?.hash === block.hash) {
      matched = true;
      // Everything above the newest block that still matches is rescanned, not only from the lowest recorded block
      // that does not: only range ends and payment blocks are recorded, and the blocks between this one and that
      // one may have been replaced too (a payment in them would never be scanned).
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
