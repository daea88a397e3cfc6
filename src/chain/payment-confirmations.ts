import { decide } from '../domain/payments/decide.js';
import type { WatchedNetwork } from './watched-network.js';

/**
 * Payments with enough confirmations count once their block hash is checked again; a block that left the chain rolls
 * back from there instead (payments confirmed earlier in the pass are kept).
 */
export async function confirmSeenPayments(watched: WatchedNetwork, head: bigint): Promise<void> {
  const { ctx, network, rpc } = watched;
  const ledger = ctx.store.chain;
  const needed = BigInt(Math.max(1, network.confirmations));
  const through = head - needed + 1n;
  const waiting = await ledger.paymentsAwaitingConfirmation(network.slug, through);
  const confirmed: Array<{ id: string; blockHash: string }> = [];
  const hashes = new Map<bigint, string | null>();
  for (const payment of waiting) {
    if (!hashes.has(payment.blockNumber)) {
      hashes.set(payment.blockNumber, (await rpc.block(payment.blockNumber))?.hash ?? null);
    }
    const block = { blockNumber: payment.blockNumber, recordedHash: payment.blockHash };
    const outcome = decide({ kind: 'confirmation' }, { ...block, chainHash: hashes.get(payment.blockNumber)! });
    if (outcome.kind === 'reverse') {
      // Its block left the chain between the scan and now.
      await ledger.confirmPayments(confirmed, ctx.clock());
      await ledger.rollBack(network.slug, outcome.fromBlock, ctx.clock());
      watched.metrics?.reorgs.inc({ network: network.slug });
      watched.logger.warn(
        { network: network.slug, fromBlock: payment.blockNumber.toString() },
        'chain reorganisation found while confirming: rolled back',
      );
      return;
    }
    confirmed.push({ id: payment.id, blockHash: payment.blockHash });
  }
  await ledger.confirmPayments(confirmed, ctx.clock());
  await ledger.updateConfirmations(network.slug, head);
}
