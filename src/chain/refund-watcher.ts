import { randomUUID } from 'node:crypto';
import type { DomainContext } from '../domain/context.js';
import type { Refund } from '../domain/refunds/refund.js';
import type { RefundWatchStore } from '../domain/refunds/refund-watch-ports.js';
import { paysRefund, refundChainStep, type SeenTransfer } from '../domain/refunds/refund-sightings.js';
import { payoutOf, type RefundPayout } from '../domain/refunds/refund-transfer.js';
import { confirmRefund, failRefund, recordMined, revertToSent } from '../domain/refunds/refund-transitions.js';
import { DomainError } from '../domain/shared/errors.js';
import type { Network } from '../domain/shared/networks.js';
import type { Logger } from '../logging.js';
import { receiptOf, scanBlocks, scanLogs, transfersOf } from './refund-chain-reads.js';
import { ChainRpc } from './rpc.js';

/** How many blocks past its confirmations a confirmed refund is still checked for a reorganisation. */
export const REFUND_REORG_LOOKBACK = 64n;
/** The first scan of a refund starts this many blocks below the head (token logs; the coin reads whole blocks). */
const FIRST_SCAN_BLOCKS_TOKEN = 1000n;
const FIRST_SCAN_BLOCKS_NATIVE = 20n;
/** Whole blocks read per refund and round when looking for a coin transfer without a hash. */
const NATIVE_BLOCKS_PER_ROUND = 50n;
const REFUNDS_PER_ROUND = 100;
/** How much earlier than the refund's destination a scanned transfer's block may be stamped (clocks differ). */
const CLOCK_SLACK_MS = 10 * 60_000;

export interface RefundWatchSettings {
  readonly rpcTimeoutMs: number;
  readonly leaseSeconds: number;
  readonly maxBlocksPerRange: number;
  /** A reported transaction the node never saw is failed as dropped after this long (KASSA_INFLIGHT_GRACE_MINUTES). */
  readonly droppedAfterMinutes: number;
}

export interface RefundWatcher {
  /** Follows every refund due on every network once (the background job's round; tests call it directly). */
  tick(): Promise<void>;
}

/**
 * The refunds' chain watcher (docs/refund-claims.md#watching): finds each refund's exact transfer, follows it to its
 * confirmations and back to sent after a reorganisation; instances share the work by per-refund leases.
 */
export function createRefundWatcher(
  ctx: DomainContext,
  watch: RefundWatchStore,
  settings: RefundWatchSettings,
  logger: Logger,
  instanceId: string = randomUUID(),
): RefundWatcher {
  const networks = ctx.networks
    .filter((network) => network.rpcUrls.length > 0)
    .map((network) => ({ network, rpc: new ChainRpc(network.rpcUrls, settings.rpcTimeoutMs) }));
  return {
    async tick() {
      for (const { network, rpc } of networks) {
        try {
          await watchNetwork({ ctx, watch, settings, logger, instanceId, network, rpc });
        } catch (error) {
          logger.warn({ err: error, network: network.slug }, 'refund watch round failed; retried next round');
        }
      }
    },
  };
}

interface Round {
  readonly ctx: DomainContext;
  readonly watch: RefundWatchStore;
  readonly settings: RefundWatchSettings;
  readonly logger: Logger;
  readonly instanceId: string;
  readonly network: Network;
  readonly rpc: ChainRpc;
}

async function watchNetwork(round: Round): Promise<void> {
  const { ctx, watch, network, rpc, settings } = round;
  const leased = await watch.lease(
    network.slug,
    round.instanceId,
    ctx.clock(),
    settings.leaseSeconds,
    REFUNDS_PER_ROUND,
  );
  if (leased.length === 0) return;
  const head = await rpc.blockNumber();
  for (const { refundId, nextBlock } of leased) {
    const refund = await ctx.store.refunds.findById(refundId);
    if (!refund || refund.destination === null) continue;
    try {
      await followRefund(round, refund, nextBlock, head);
    } catch (error) {
      // Another instance or the merchant moved it meanwhile: the next round sees its new state.
      if (error instanceof DomainError && error.code === 'conflict') continue;
      round.logger.warn({ err: error, refundId, network: network.slug }, 'refund watch failed for one refund');
    }
  }
}

async function followRefund(round: Round, refund: Refund, nextBlock: bigint | null, head: bigint): Promise<void> {
  const { ctx, rpc, network } = round;
  const payout = payoutOf(refund);
  const { transfer } = refund;
  if (transfer.blockNumber !== null && transfer.blockHash !== null && transfer.txHash !== null) {
    const recorded = { blockNumber: transfer.blockNumber, blockHash: transfer.blockHash };
    const chainHash = (await rpc.block(transfer.blockNumber))?.hash ?? null;
    const receipt = await receiptOf(rpc, transfer.txHash);
    const step = refundChainStep({ recorded, chainHash, receipt, head, confirmations: network.confirmations });
    if (step.kind === 'unmine') {
      await revertToSent(ctx, refund.id, 'reorganisation');
      await round.watch.advance(refund.id, minBlock(nextBlock, transfer.blockNumber));
      round.logger.warn({ refundId: refund.id, txHash: transfer.txHash }, 'refund transfer left the chain');
    } else if (step.kind === 'confirm' && refund.status === 'sent') {
      await confirmRefund(ctx, refund.id, Number(head - transfer.blockNumber + 1n));
    } else if (
      refund.status === 'confirmed' &&
      head - transfer.blockNumber > BigInt(network.confirmations) + REFUND_REORG_LOOKBACK
    ) {
      await round.watch.settle(refund.id, ctx.clock());
    }
    return;
  }
  if (transfer.txHash !== null && (await followReported(round, refund, payout, transfer.txHash, head))) return;
  await scanFor(round, refund, payout, nextBlock, head);
}

/**
 * A hash the merchant reported: its receipt decides, from any sender. Returns whether it settled this round (mined,
 * failed, or still pending); false lets the scan look for another transfer that pays the refund.
 */
async function followReported(
  round: Round,
  refund: Refund,
  payout: RefundPayout,
  txHash: string,
  head: bigint,
): Promise<boolean> {
  const { ctx, rpc } = round;
  const receipt = await rpc.receipt(txHash);
  if (!receipt) {
    if (await rpc.transaction(txHash)) return true;
    const sentAt = refund.transfer.sentAt?.getTime() ?? refund.updatedAt.getTime();
    if (ctx.clock().getTime() - sentAt > round.settings.droppedAfterMinutes * 60_000) {
      await failRefund(ctx, refund.id, 'dropped: the network never mined the reported transaction');
      return true;
    }
    return false;
  }
  if (receipt.status !== 'success') {
    await failRefund(ctx, refund.id, 'reverted: the reported transaction failed on chain');
    return true;
  }
  const seen = await transfersOf(rpc, txHash, receipt);
  const paying = seen.find((transfer) => paysRefund(payout, transfer, 'any'));
  if (!paying) return false;
  await mined(round, refund, paying, head);
  return true;
}

const minBlock = (a: bigint | null, b: bigint) => (a === null || b < a ? b : a);

/** Looks for the refund's transfer from the organisation's wallets in the blocks not yet scanned for it. */
async function scanFor(
  round: Round,
  refund: Refund,
  payout: RefundPayout,
  nextBlock: bigint | null,
  head: bigint,
): Promise<void> {
  const { rpc, watch } = round;
  const native = payout.contractAddress === null;
  const firstScan = native ? FIRST_SCAN_BLOCKS_NATIVE : FIRST_SCAN_BLOCKS_TOKEN;
  const from = nextBlock ?? (head > firstScan ? head - firstScan : 0n);
  if (from > head) return;
  const width = native ? NATIVE_BLOCKS_PER_ROUND : BigInt(round.settings.maxBlocksPerRange);
  const to = from + width - 1n < head ? from + width - 1n : head;
  const senders = await watch.walletsOf(refund.organisationId, refund.network);
  const candidates = native
    ? await scanBlocks(rpc, payout, senders, from, to)
    : await scanLogs(rpc, payout, senders, from, to);
  for (const candidate of candidates) {
    if (!(await isItsTransfer(round, refund, candidate))) continue;
    await mined(round, refund, candidate, head);
    break;
  }
  await watch.advance(refund.id, to + 1n);
}

/**
 * A scanned transfer is this refund's when it was mined after its destination was known (a little slack for clocks)
 * and no other refund holds it: two refunds of one amount to one address take one transfer each.
 */
async function isItsTransfer(round: Round, refund: Refund, seen: SeenTransfer): Promise<boolean> {
  const { rpc, watch } = round;
  const block = await rpc.block(seen.blockNumber);
  const known = refund.destinationAt?.getTime() ?? refund.createdAt.getTime();
  if (!block || Number(block.timestamp) * 1000 < known - CLOCK_SLACK_MS) return false;
  return !(await watch.heldByAnother(refund.id, refund.chainId, seen.txHash, seen.logIndex));
}

/** Records the transfer mined (ready|sent → sent with its block), and confirms it at once when deep enough. */
async function mined(round: Round, refund: Refund, seen: SeenTransfer, head: bigint): Promise<void> {
  const { ctx, rpc, network } = round;
  const block = await rpc.block(seen.blockNumber);
  const confirmations = Number(head - seen.blockNumber + 1n);
  await recordMined(ctx, refund.id, {
    txHash: seen.txHash,
    sentFrom: seen.from,
    blockNumber: seen.blockNumber,
    blockHash: seen.blockHash,
    logIndex: seen.logIndex,
    minedAt: block ? new Date(Number(block.timestamp) * 1000) : ctx.clock(),
    confirmations,
  });
  round.logger.info({ refundId: refund.id, txHash: seen.txHash }, 'refund transfer mined');
  if (confirmations >= Math.max(1, network.confirmations)) await confirmRefund(ctx, refund.id, confirmations);
}
