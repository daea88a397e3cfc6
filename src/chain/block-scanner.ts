import { fromBaseUnits } from '../domain/shared/money.js';
import { NATIVE_COIN_DECIMALS } from '../domain/shared/networks.js';
import { decide } from '../domain/payments/decide.js';
import type { TransferSnapshot } from '../domain/payments/amount-facts.js';
import type { ChainTransfer } from '../domain/payments/payment-ports.js';
import { isRangeTooLarge, type RpcBlock } from './rpc.js';
import { addressTopic, blocksOf, decodeTransferLogs, TRANSFER_TOPIC } from './transfer-logs.js';
import type { RawLog, TokenInfo } from './transfer-logs.js';
import type { WatchedNetwork } from './watched-network.js';

// A wallet list longer than this is asked for in several eth_getLogs calls (topic OR-lists have provider limits).
const WALLETS_PER_QUERY = 500;
/** JSON-RPC reads of one scan in flight at once (blocks and their timestamps), instead of one after another. */
const RPC_CONCURRENCY = 8;

/** `work` over `items`, at most `limit` at once; the results in the items' order. */
async function inParallel<T, R>(items: readonly T[], limit: number, work: (item: T) => Promise<R>): Promise<R[]> {
  const results: R[] = new Array(items.length);
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const index = next++;
      results[index] = await work(items[index]!);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  return results;
}

/** A payment found by a deposit address's balance (no transaction or log of its own): marked as such. */
export const BALANCE_CHECK_LOG_INDEX = -2;
const UNKNOWN_SENDER = '0x0000000000000000000000000000000000000000';
/** The `tx_hash` of native coin found at `address` by the balance read at `block`: one per address and block. */
export const balanceCheckHash = (block: bigint, address: string) => `balance:${block}:${address}`;

/** What a scanned transfer does (docs/payment-rules.md, rule 2). */
const judgeScanned = (snapshot: TransferSnapshot) => decide({ kind: 'transfer_scanned' }, snapshot);

/**
 * Scans one network's blocks for transfers to the watched wallets (registry tokens' Transfer logs, native transfers);
 * each scanned range is recorded at once with its end's block hash and the cursor.
 */
export class BlockScanner {
  constructor(
    private readonly watched: WatchedNetwork,
    /** The network's tokens by lower-case contract address. */
    private readonly tokens: ReadonlyMap<string, TokenInfo>,
  ) {}

  /**
   * Scans [from, to] and records what it found. False when nothing was written: the chain got
   * shorter under the scan, or the cursor moved or the lease was lost (the leader carries on).
   */
  async scanRange(from: bigint, to: bigint, wallets: ReadonlySet<string>): Promise<boolean> {
    const { ctx, network, rpc } = this.watched;
    // The range's end before its logs are read, and again after: a reorganisation between would record the new
    // branch's hash over the old branch's logs, and the reorg check would never look at the range again.
    const start = await rpc.block(to);
    if (!start) return false;
    const transfers: ChainTransfer[] = [];
    if (wallets.size > 0) {
      // Native coin: every block of the range is read anyway, and its timestamp serves the token logs too.
      const blocks = new Map<string, RpcBlock>();
      const native = network.nativeAsset ? await this.nativeTransfers(from, to, wallets, blocks) : [];
      const walletList = [...wallets];
      for (let i = 0; i < walletList.length; i += WALLETS_PER_QUERY) {
        const topics = walletList.slice(i, i + WALLETS_PER_QUERY).map(addressTopic);
        const logs = await this.logsSplitting(from, to, topics);
        const times = await this.blockTimes(blocksOf(logs, wallets), blocks);
        transfers.push(...decodeTransferLogs(logs, network, this.tokens, wallets, times));
      }
      transfers.push(...native);
      if (network.nativeAsset) transfers.push(...(await this.internalNative(from, start, native)));
    }
    const end = await rpc.block(to);
    // The chain got shorter or changed under the scan: nothing is recorded, and the next tick scans the range again
    // (after its reorg check, which rolls back what a changed chain invalidated).
    if (!end || end.hash !== start.hash) return false;
    const { chainId, instanceId, metrics } = this.watched;
    const range = { network: network.slug, chainId, fromBlock: from, toBlock: to, toBlockHash: end.hash, transfers };
    const recorded = await ctx.store.chain.recordRange(range, instanceId, judgeScanned, ctx.clock());
    if (recorded) {
      for (const transfer of transfers) metrics?.paymentsRecorded.inc({ network: network.slug, asset: transfer.asset });
      if (transfers.length > 0) {
        this.watched.logger.info(
          { network: network.slug, fromBlock: from.toString(), toBlock: to.toString(), transfers: transfers.length },
          'recorded transfers',
        );
      }
    }
    return recorded;
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

  /** eth_getLogs over [from, to], halving the range while the provider refuses it as too large. */
  private async logsSplitting(from: bigint, to: bigint, walletTopics: string[]): Promise<RawLog[]> {
    if (this.tokens.size === 0) return [];
    try {
      const topics = [TRANSFER_TOPIC, null, walletTopics];
      return await this.watched.rpc.logs({ fromBlock: from, toBlock: to, addresses: [...this.tokens.keys()], topics });
    } catch (error) {
      if (from === to || !isRangeTooLarge(error)) throw error;
      const middle = from + (to - from) / 2n;
      const lower = await this.logsSplitting(from, middle, walletTopics);
      return [...lower, ...(await this.logsSplitting(middle + 1n, to, walletTopics))];
    }
  }

  /**
   * Native coin that reached open deposit addresses by internal transfers (a contract paying them) in [from, end]: what
   * Multicall3 reads there at `end` above what is recorded (`direct`: this range's transfers) and not collected.
   */
  private async internalNative(
    from: bigint,
    end: RpcBlock,
    direct: readonly ChainTransfer[],
  ): Promise<ChainTransfer[]> {
    const { ctx, network, rpc } = this.watched;
    const books = await ctx.store.chain.depositNativeBooks(network.slug, from, ctx.clock());
    if (books.length === 0) return [];
    const balances = await rpc.nativeBalances(
      books.map((book) => book.address),
      end.number,
    );
    if (!balances) return [];
    const arrived = new Map<string, bigint>();
    for (const transfer of direct) arrived.set(transfer.to, (arrived.get(transfer.to) ?? 0n) + transfer.baseUnits);
    const found: ChainTransfer[] = [];
    for (const [index, book] of books.entries()) {
      const unexplained = balances[index]! - book.known - (arrived.get(book.address) ?? 0n);
      if (unexplained <= 0n) continue;
      found.push({
        network: network.slug,
        chainId: this.watched.chainId,
        txHash: balanceCheckHash(end.number, book.address),
        logIndex: BALANCE_CHECK_LOG_INDEX,
        from: UNKNOWN_SENDER,
        to: book.address,
        asset: network.nativeAsset!,
        tokenAddress: null,
        baseUnits: unexplained,
        amount: fromBaseUnits(unexplained, NATIVE_COIN_DECIMALS),
        blockNumber: end.number,
        blockHash: end.hash,
        blockTime: new Date(Number(end.timestamp) * 1000),
      });
    }
    return found;
  }

  /**
   * Native-coin transfers to watched wallets that succeeded (a reverted transaction moves no value).
   * Blocks are read RPC_CONCURRENCY at a time and kept in `blocks` (by hash) for the token logs' times.
   */
  private async nativeTransfers(
    from: bigint,
    to: bigint,
    wallets: ReadonlySet<string>,
    blocks: Map<string, RpcBlock>,
  ): Promise<ChainTransfer[]> {
    const { network, rpc } = this.watched;
    const numbers: bigint[] = [];
    for (let number = from; number <= to; number += 1n) numbers.push(number);
    const read = await inParallel(numbers, RPC_CONCURRENCY, (number) => rpc.blockTransactions(number));
    const transfers: ChainTransfer[] = [];
    for (const found of read) {
      if (!found) continue;
      blocks.set(found.block.hash, found.block);
      for (const tx of found.transactions) {
        if (!tx.to || !wallets.has(tx.to) || tx.value === 0n) continue;
        const receipt = await rpc.receipt(tx.hash);
        if (receipt?.status !== 'success') continue;
        transfers.push({
          network: network.slug,
          chainId: this.watched.chainId,
          txHash: tx.hash,
          logIndex: -1,
          from: tx.from,
          to: tx.to,
          asset: network.nativeAsset!,
          tokenAddress: null,
          baseUnits: tx.value,
          amount: fromBaseUnits(tx.value, NATIVE_COIN_DECIMALS),
          blockNumber: found.block.number,
          blockHash: found.block.hash,
          blockTime: new Date(Number(found.block.timestamp) * 1000),
        });
      }
    }
    return transfers;
  }
}
