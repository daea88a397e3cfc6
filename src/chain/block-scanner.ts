import { fromBaseUnits } from '../domain/shared/money.js';
import { NATIVE_COIN_DECIMALS } from '../domain/shared/networks.js';
import { decide } from '../domain/payments/decide.js';
import type { TransferSnapshot } from '../domain/payments/amount-facts.js';
import type { ChainTransfer } from '../domain/payments/payment-ports.js';
import { isRangeTooLarge, isTooManyTopics, type RpcBlock } from './rpc.js';
import { addressTopic, blocksOf, decodeTransferLogs, TRANSFER_TOPIC } from './transfer-logs.js';
import type { RawLog, TokenInfo } from './transfer-logs.js';
import type { WatchedNetwork } from './watched-network.js';

// Wallets per eth_getLogs topic OR-list (geth and erigon refuse more than 1,000); halved while a provider refuses it.
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

/**
 * Transfers recorded in one database transaction at most, unless one block holds more: a range with more is recorded
 * in parts of whole blocks, so its transaction stays well inside its 30 s limit (1,000 took 30 s on a loaded host).
 */
export const TRANSFERS_PER_WRITE = 200;

interface RangePart {
  readonly fromBlock: bigint;
  readonly toBlock: bigint;
  readonly toBlockHash: string;
  readonly transfers: readonly ChainTransfer[];
}

/**
 * [from, to] as consecutive parts of whole blocks holding at most TRANSFERS_PER_WRITE transfers each (or one block's),
 * each ending at a block whose hash is known; the transfers keep their order within each part. One part when few.
 */
export function rangeParts(from: bigint, to: bigint, toHash: string, transfers: readonly ChainTransfer[]): RangePart[] {
  if (transfers.length <= TRANSFERS_PER_WRITE)
    return [{ fromBlock: from, toBlock: to, toBlockHash: toHash, transfers }];
  const perBlock = new Map<bigint, { hash: string; count: number }>();
  for (const transfer of transfers) {
    const block = perBlock.get(transfer.blockNumber);
    if (block) block.count += 1;
    else perBlock.set(transfer.blockNumber, { hash: transfer.blockHash, count: 1 });
  }
  const cuts: Array<{ number: bigint; hash: string }> = [];
  let held = 0;
  let last: { number: bigint; hash: string } | null = null;
  for (const [number, block] of [...perBlock].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) {
    if (last && held + block.count > TRANSFERS_PER_WRITE) {
      cuts.push(last);
      held = 0;
    }
    held += block.count;
    last = { number, hash: block.hash };
  }
  const parts: RangePart[] = [];
  let start = from;
  for (const cut of [...cuts, { number: to, hash: toHash }]) {
    const inPart = transfers.filter((t) => t.blockNumber >= start && t.blockNumber <= cut.number);
    parts.push({ fromBlock: start, toBlock: cut.number, toBlockHash: cut.hash, transfers: inPart });
    start = cut.number + 1n;
  }
  return parts;
}

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
      const native = network.nativeAsset ? await this.nativeTransfers(from, to, wallets, blocks) : [];
      const logs = await this.transferLogs(from, to, wallets);
      const times = await this.blockTimes(blocksOf(logs, wallets), blocks);
      transfers.push(...decodeTransferLogs(logs, network, this.tokens, wallets, times));
      transfers.push(...native);
      if (network.nativeAsset && deposits.length > 0) {
        transfers.push(...(await this.internalNative(from, start, native, deposits)));
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

  /**
   * Native coin that reached deposit addresses by internal transfers in [from, end]: what Multicall3 reads at `end`
   * above what is recorded (`direct`: this range's) and not collected; only addresses holding coin need their books.
   */
  private async internalNative(
    from: bigint,
    end: RpcBlock,
    direct: readonly ChainTransfer[],
    deposits: readonly string[],
  ): Promise<ChainTransfer[]> {
    const { ctx, network, rpc } = this.watched;
    const read = await rpc.nativeBalances(deposits, end.number);
    if (!read) return [];
    const balances = new Map<string, bigint>();
    for (const [index, address] of deposits.entries()) if (read[index]! > 0n) balances.set(address, read[index]!);
    const books = await ctx.store.chain.depositNativeBooks(network.slug, from, ctx.clock(), [...balances.keys()]);
    if (books.length === 0) return [];
    const arrived = new Map<string, bigint>();
    for (const transfer of direct) arrived.set(transfer.to, (arrived.get(transfer.to) ?? 0n) + transfer.baseUnits);
    const found: ChainTransfer[] = [];
    let listed: Set<string> | undefined;
    for (const book of books) {
      // An address that opened after this tick's list was read: its balance is read next tick.
      if (!balances.has(book.address) && !(listed ??= new Set(deposits)).has(book.address)) continue;
      const unexplained = (balances.get(book.address) ?? 0n) - book.known - (arrived.get(book.address) ?? 0n);
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
