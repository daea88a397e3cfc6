import { decide } from '../domain/payments/decide.js';
import type { TransferSnapshot } from '../domain/payments/amount-facts.js';
import type { ChainTransfer } from '../domain/payments/payment-ports.js';
import { inParallel, internalNative, nativeTransfers, RPC_CONCURRENCY } from './native-transfers.js';
import { rangeParts } from './range-parts.js';
import { isRangeTooLarge, isTooManyTopics, type RpcBlock } from './rpc.js';
import { addressTopic, blocksOf, decodeTransferLogs, TRANSFER_TOPIC } from './transfer-logs.js';
import type { RawLog, TokenInfo } from './transfer-logs.js';
import type { WatchedNetwork } from './watched-network.js';

// Wallets per eth_getLogs topic OR-list (geth and erigon refuse more than 1,000); halved while a provider refuses it.
const WALLETS_PER_QUERY = 500;

/** What a scanned transfer does (docs/payment-rules.md, rule 2). */
const judgeScanned = (snapshot: TransferSnapshot) => decide({ kind: 'transfer_scanned' }, snapshot);

/**
 * Scans one network's blocks for transfers to the watched wallets (registry tokens' Transfer logs, native transfers);
 * each scanned range is recorded at once with its end's block hash and the cursor.
 */
export class BlockScanner {
  /** Wallets per topic OR-list this network's provider accepts. */
  private walletsPerQuery = WALLETS_PER_QUERY;
  /** eth_getLogs calls per block that the last read of every registry-token Transfer log took (refusals included). */
  private tokenLogCallsPerBlock = 0;

  constructor(
    private readonly watched: WatchedNetwork,
    /** The network's tokens by lower-case contract address. */
    private readonly tokens: ReadonlyMap<string, TokenInfo>,
  ) {}

  /**
   * Scans [from, to] and records what it found (`deposits`: the deposit addresses among `wallets`). False when
   * nothing was written: the chain got shorter under the scan, or the cursor moved or the lease was lost.
   */
  async scanRange(
    from: bigint,
    to: bigint,
    wallets: ReadonlySet<string>,
    deposits: readonly string[] = [],
  ): Promise<boolean> {
    const { ctx, network, rpc } = this.watched;
    // The range's end before its logs are read, and again after: a reorganisation between would record the new
    // branch's hash over the old branch's logs, and the reorg check would never look at the range again.
    const start = await rpc.block(to);
    if (!start) return false;
    const transfers: ChainTransfer[] = [];
    if (wallets.size > 0) {
      // Native coin: every block of the range is read anyway, and its timestamp serves the token logs too.
      const blocks = new Map<string, RpcBlock>();
      const native = network.nativeAsset ? await nativeTransfers(this.watched, from, to, wallets, blocks) : [];
      const logs = await this.transferLogs(from, to, wallets);
      const times = await this.blockTimes(blocksOf(logs, wallets), blocks);
      transfers.push(...decodeTransferLogs(logs, network, this.tokens, wallets, times));
      transfers.push(...native);
      if (network.nativeAsset && deposits.length > 0) {
        transfers.push(...(await internalNative(this.watched, from, start, native, deposits)));
      }
    }
    const end = await rpc.block(to);
    // The chain got shorter or changed under the scan: nothing is recorded, and the next tick scans the range again
    // (after its reorg check, which rolls back what a changed chain invalidated).
    if (!end || end.hash !== start.hash) return false;
    const { chainId, instanceId, metrics } = this.watched;
    for (const part of rangeParts(from, to, end.hash, transfers)) {
      const range = { network: network.slug, chainId, ...part };
      // False: the cursor moved or the lease was lost; the parts recorded so far stand, the leader carries on.
      if (!(await ctx.store.chain.recordRange(range, instanceId, judgeScanned, ctx.clock()))) return false;
      for (const transfer of part.transfers)
        metrics?.paymentsRecorded.inc({ network: network.slug, asset: transfer.asset });
      if (part.transfers.length > 0) {
        this.watched.logger.info(
          {
            network: network.slug,
            fromBlock: part.fromBlock.toString(),
            toBlock: part.toBlock.toString(),
            transfers: part.transfers.length,
          },
          'recorded transfers',
        );
      }
    }
    return true;
  }

  /**
   * The timestamps of the blocks holding matched logs: from the blocks read already (by hash),
   * else one eth_getBlockByNumber each, RPC_CONCURRENCY at a time.
   */
  private async blockTimes(
    blocks: ReadonlyMap<string, bigint>,
    known: ReadonlyMap<string, RpcBlock>,
  ): Promise<Map<string, Date>> {
    const times = new Map<string, Date>();
    const missing: Array<[string, bigint]> = [];
    for (const [hash, number] of blocks) {
      const block = known.get(hash);
      if (block) times.set(hash, new Date(Number(block.timestamp) * 1000));
      else missing.push([hash, number]);
    }
    await inParallel(missing, RPC_CONCURRENCY, async ([hash, number]) => {
      const block = await this.watched.rpc.block(number);
      // A block replaced since the logs were read: the next tick's reorg check sorts it out.
      if (!block || block.hash !== hash) throw new Error(`block ${number} changed while scanning`);
      times.set(hash, new Date(Number(block.timestamp) * 1000));
    });
    return times;
  }

  /**
   * The registry tokens' Transfer logs in [from, to] that may pay `wallets`, asked whichever way costs fewer calls: by
   * the wallets as topic OR-lists (a call per WALLETS_PER_QUERY), or every Transfer log of the tokens, matched here.
   */
  private async transferLogs(from: bigint, to: bigint, wallets: ReadonlySet<string>): Promise<RawLog[]> {
    if (this.tokens.size === 0) return [];
    const calls = { made: 0 };
    const blocks = Number(to - from + 1n);
    const byWallets = Math.ceil(wallets.size / this.walletsPerQuery);
    const byTokens = Math.max(1, Math.ceil(blocks * this.tokenLogCallsPerBlock));
    if (byTokens < byWallets) {
      const logs = await this.logsSplitting(from, to, null, calls);
      this.tokenLogCallsPerBlock = calls.made / blocks;
      return logs;
    }
    const list = [...wallets];
    const logs: RawLog[] = [];
    for (let i = 0; i < list.length;) {
      const size = this.walletsPerQuery;
      try {
        for (const log of await this.logsSplitting(from, to, list.slice(i, i + size).map(addressTopic), calls))
          logs.push(log);
        i += size;
      } catch (error) {
        if (size === 1 || !isTooManyTopics(error)) throw error;
        this.walletsPerQuery = Math.ceil(size / 2);
      }
    }
    return logs;
  }

  /**
   * eth_getLogs of the tokens' Transfer logs over [from, to], to `walletTopics` (null: to anyone), halving the range
   * while the provider refuses it as too large; `calls` counts the calls made, refused ones included.
   */
  private async logsSplitting(
    from: bigint,
    to: bigint,
    walletTopics: string[] | null,
    calls: { made: number },
  ): Promise<RawLog[]> {
    calls.made += 1;
    try {
      const topics = walletTopics ? [TRANSFER_TOPIC, null, walletTopics] : [TRANSFER_TOPIC];
      return await this.watched.rpc.logs({ fromBlock: from, toBlock: to, addresses: [...this.tokens.keys()], topics });
    } catch (error) {
      if (from === to || isTooManyTopics(error) || !isRangeTooLarge(error)) throw error;
      const middle = from + (to - from) / 2n;
      const lower = await this.logsSplitting(from, middle, walletTopics, calls);
      return lower.concat(await this.logsSplitting(middle + 1n, to, walletTopics, calls));
    }
  }
}
