import { randomUUID } from 'node:crypto';
import type { DomainContext } from '../domain/context.js';
import { fromBaseUnits } from '../domain/money.js';
import { NATIVE_COIN_DECIMALS, type Network } from '../domain/networks.js';
import { applyBoundTxVerdict, judgeBoundTransaction } from '../domain/bound-transactions.js';
import type { BoundTxEvidence } from '../domain/chain-ports.js';
import type { ChainTransfer } from '../domain/payment-ports.js';
import { attributeTransfer, settleSessionPayments } from '../domain/payments.js';
import type { Logger } from '../logging.js';
import type { Metrics } from '../metrics.js';
import { ChainRpc, isRangeTooLarge, type RpcBlock } from './rpc.js';
import { readEvidence } from './transaction-evidence.js';
import { addressTopic, blocksOf, decodeTransferLogs, tokenIndex, TRANSFER_TOPIC, type RawLog, type TokenInfo } from './transfer-logs.js';

export interface WatcherSettings {
  /** Pause between scans of a network. */
  readonly intervalMs: number;
  /** Largest block range asked of eth_getLogs at once (halved while the provider refuses it). */
  readonly maxBlocksPerRange: number;
  /** On the very first scan of a network, how far behind the head to start. */
  readonly backfillBlocks: number;
  readonly leaseSeconds: number;
  readonly rpcTimeoutMs: number;
  /** A bound transaction unknown to its chain for this long is dropped (DESIGN.md §4: the in-flight grace). */
  readonly droppedAfterMinutes: number;
}

export interface ChainWatchers {
  /** Runs one scan of every network now (tests and `kassa dev pay --wait`). */
  tick(): Promise<void>;
  stop(): Promise<void>;
}

// A wallet list longer than this is asked for in several eth_getLogs calls (topic OR-lists have provider limits).
const WALLETS_PER_QUERY = 500;
// Native-coin transfers need every block's transactions: ranges are kept short for them.
const NATIVE_BLOCKS_PER_RANGE = 50;
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
const REORG_LOOKBACK = 64;

/**
 * One watcher per enabled network (issue 4 §2–§7). Each tick: take or renew the
 * network's lease (one scanning instance per network), undo a reorganisation
 * if the newest recorded block hash changed, scan new blocks for transfers to
 * watched wallets, confirm payments with enough confirmations, check bound
 * transactions, and settle sessions whose payments changed (any instance).
 */
export function startChainWatchers(ctx: DomainContext, settings: WatcherSettings, logger: Logger, metrics?: Metrics): ChainWatchers {
  const instanceId = randomUUID();
  const watchers = ctx.networks
    .filter((network) => network.rpcUrls.length > 0)
    .map((network) => new NetworkWatcher(ctx, network, new ChainRpc(network.rpcUrls, settings.rpcTimeoutMs), settings, instanceId, logger, metrics));
  for (const network of ctx.networks.filter((n) => n.rpcUrls.length === 0)) {
    logger.warn({ network: network.slug }, `no RPC URL for ${network.slug}: its payments are not watched (set KASSA_RPC_URLS_${network.slug.toUpperCase()})`);
  }
  const others = (self: NetworkWatcher) => watchers.filter((w) => w !== self);
  for (const watcher of watchers) watcher.findElsewhere = (hash) => findOnOtherNetworks(others(watcher), hash);

  let stopped = false;
  let running: Promise<void> = Promise.resolve();
  const tick = () => {
    running = running.then(async () => {
      await Promise.all(watchers.map((watcher) => watcher.tick()));
      await settleChangedSessions(ctx, logger);
    });
    return running;
  };
  let timer: NodeJS.Timeout | null = null;
  const loop = () => {
    if (stopped) return;
    tick().finally(() => {
      if (!stopped) timer = setTimeout(loop, settings.intervalMs).unref();
    });
  };
  loop();

  return {
    tick,
    async stop() {
      stopped = true;
      if (timer) clearTimeout(timer);
      await running.catch(() => undefined);
      await Promise.allSettled(watchers.map((watcher) => ctx.store.chain.releaseNetwork(watcher.network.slug, instanceId)));
    },
  };
}

/** Sessions settled per transaction, and transactions settling at once (each takes its own batch: SKIP LOCKED). */
const SETTLE_BATCH = 25;
const SETTLE_WORKERS = 4;

/**
 * Settles every session whose payments changed; safe with several instances (SKIP LOCKED).
 * A settlement is a handful of short statements per session, so a backlog is worked off by
 * several transactions at once, on connections of their own, rather than one after another.
 */
export async function settleChangedSessions(ctx: DomainContext, logger: Logger): Promise<void> {
  const worker = async () => {
    for (;;) {
      const now = ctx.clock();
      const settled = await ctx.store.lockSessionsWithChangedPayments(SETTLE_BATCH, async (tx, session) => {
        await settleSessionPayments(ctx, tx, session, now);
      });
      if (settled < SETTLE_BATCH) return;
    }
  };
  const outcomes = await Promise.allSettled(Array.from({ length: SETTLE_WORKERS }, worker));
  const failed = outcomes.find((outcome): outcome is PromiseRejectedResult => outcome.status === 'rejected');
  if (failed) logger.error({ err: failed.reason }, 'settling payments failed');
}

async function findOnOtherNetworks(watchers: readonly NetworkWatcher[], hash: string): Promise<{ slug: string; chainId: number } | null> {
  for (const watcher of watchers) {
    const found = await watcher.rpc.transaction(hash).catch(() => null);
    if (found) return { slug: watcher.network.slug, chainId: watcher.network.chainId };
  }
  return null;
}

class NetworkWatcher {
  private readonly tokens: Map<string, TokenInfo>;
  private tokensVerified = false;
  private refused = false;
  private lastError: string | null = null;
  findElsewhere: (hash: string) => Promise<{ slug: string; chainId: number } | null> = async () => null;

  constructor(
    private readonly ctx: DomainContext,
    readonly network: Network,
    readonly rpc: ChainRpc,
    private readonly settings: WatcherSettings,
    private readonly instanceId: string,
    private readonly logger: Logger,
    private readonly metrics?: Metrics,
  ) {
    this.tokens = tokenIndex(network);
  }

  private get ledger() {
    return this.ctx.store.chain;
  }

  private get chainId(): string {
    return String(this.network.chainId);
  }

  async tick(): Promise<void> {
    if (this.refused) return;
    try {
      if (!this.tokensVerified) await this.verifyRegistry();
      if (this.refused) return;
      const headReadAt = this.ctx.clock();
      const head = await this.rpc.blockNumber();
      this.metrics?.chainHead.set({ network: this.network.slug }, Number(head));
      const start = head > BigInt(this.settings.backfillBlocks) ? head - BigInt(this.settings.backfillBlocks) : 0n;
      const lease = () => this.ledger.leaseNetwork(this.network.slug, this.chainId, this.instanceId, this.settings.leaseSeconds, start);
      const leased = await lease();
      if (leased === null) return; // another instance leads this network
      const rewound = (await this.undoReorganisation(head, start)) ? await lease() : leased;
      if (rewound === null) return;
      let next: bigint = rewound;
      const wallets = new Set(await this.ledger.watchedWallets(this.network.slug, this.ctx.clock()));
      while (next <= head) {
        const span = BigInt(this.network.nativeAsset && wallets.size > 0 ? Math.min(this.settings.maxBlocksPerRange, NATIVE_BLOCKS_PER_RANGE) : this.settings.maxBlocksPerRange);
        const to: bigint = next + span - 1n < head ? next + span - 1n : head;
        if (!(await this.scanRange(next, to, wallets))) return; // lost the lease or raced: the leader carries on
        next = to + 1n;
        this.metrics?.chainCursor.set({ network: this.network.slug }, Number(next));
      }
      // Everything mined before `headReadAt` is scanned now: expiry may stop waiting for this network.
      await this.ledger.markCaughtUp(this.network.slug, this.instanceId, head, headReadAt);
      await this.confirm(head);
      // Bound transactions are credited only once verified from their own receipt. Every
      // changed session is settled once all networks have ticked (startChainWatchers).
      await this.checkBoundTransactions(head);
      if (this.lastError) this.logger.info({ network: this.network.slug }, 'chain watcher recovered');
      this.lastError = null;
    } catch (error) {
      const message = (error as Error).message?.split('\n')[0] ?? String(error);
      // An unreachable RPC must not flood the log: report each new problem once.
      if (message !== this.lastError) this.logger.warn({ network: this.network.slug, err: message }, 'chain watcher tick failed; retrying');
      this.lastError = message;
    }
  }

  /** Issue 4 §1: the registry's decimals are checked against the chain before the first scan. */
  private async verifyRegistry(): Promise<void> {
    const chainId = await this.rpc.chainId();
    const problems: string[] = [];
    if (chainId !== this.network.chainId) problems.push(`RPC serves chain id ${chainId}, the registry says ${this.network.chainId}`);
    for (const token of this.network.tokens) {
      const decimals = await this.rpc.tokenDecimals(token.address);
      if (decimals === null) problems.push(`${token.ticker}: no ERC-20 contract at ${token.address}`);
      else if (decimals !== token.decimals) problems.push(`${token.ticker} at ${token.address} has ${decimals} decimals on chain, the registry says ${token.decimals}`);
    }
    if (problems.length > 0) {
      this.refused = true;
      this.logger.error({ network: this.network.slug, problems }, `refusing to watch ${this.network.slug}: the network registry does not match the chain`);
      return;
    }
    this.tokensVerified = true;
  }

  /**
   * Compares the newest recorded block hash with the chain. A block hash
   * commits to all its ancestors, so one match means no reorganisation below
   * it; on a mismatch, walks down to the newest recorded block that still
   * matches and rolls everything above it back.
   */
  private async undoReorganisation(head: bigint, start: bigint): Promise<boolean> {
    const recorded = await this.ledger.recordedBlocks(this.network.slug, REORG_LOOKBACK);
    if (recorded.length === 0) return false;
    let forkAt: bigint | null = null;
    let matched = false;
    for (const block of recorded) {
      const onChain = block.number <= head ? await this.rpc.block(block.number) : null;
      if (onChain?.hash === block.hash) {
        matched = true;
        break;
      }
      forkAt = block.number;
    }
    if (forkAt === null) return false;
    // Nothing recorded matches (a restarted sandbox chain, or deeper than the lookback): rescan from the backfill start too.
    if (!matched && start < forkAt) forkAt = start;
    const reversed = await this.ledger.rollBack(this.network.slug, forkAt, this.ctx.clock());
    this.metrics?.reorgs.inc({ network: this.network.slug });
    this.logger.warn({ network: this.network.slug, fromBlock: forkAt.toString(), reversedPayments: reversed }, 'chain reorganisation: rolled back');
    return true;
  }

  private async scanRange(from: bigint, to: bigint, wallets: ReadonlySet<string>): Promise<boolean> {
    const transfers: ChainTransfer[] = [];
    if (wallets.size > 0) {
      // Native coin: every block of the range is read anyway, and its timestamp serves the token logs too.
      const blocks = new Map<string, RpcBlock>();
      const native = this.network.nativeAsset ? await this.nativeTransfers(from, to, wallets, blocks) : [];
      const walletList = [...wallets];
      for (let i = 0; i < walletList.length; i += WALLETS_PER_QUERY) {
        const topics = walletList.slice(i, i + WALLETS_PER_QUERY).map(addressTopic);
        const logs = await this.logsSplitting(from, to, topics);
        transfers.push(...decodeTransferLogs(logs, this.network, this.tokens, wallets, await this.blockTimes(blocksOf(logs, wallets), blocks)));
      }
      transfers.push(...native);
    }
    const end = await this.rpc.block(to);
    if (!end) return false; // the chain got shorter under us: the next tick's reorg check sorts it out
    const recorded = await this.ledger.recordRange(
      { network: this.network.slug, chainId: this.chainId, fromBlock: from, toBlock: to, toBlockHash: end.hash, transfers },
      this.instanceId,
      attributeTransfer,
      this.ctx.clock(),
    );
    if (recorded) {
      for (const transfer of transfers) this.metrics?.paymentsRecorded.inc({ network: this.network.slug, asset: transfer.asset });
      if (transfers.length > 0) this.logger.info({ network: this.network.slug, fromBlock: from.toString(), toBlock: to.toString(), transfers: transfers.length }, 'recorded transfers');
    }
    return recorded;
  }

  /**
   * The timestamps of the blocks holding matched logs: from the blocks read already (by hash),
   * else one eth_getBlockByNumber each, RPC_CONCURRENCY at a time.
   */
  private async blockTimes(blocks: ReadonlyMap<string, bigint>, known: ReadonlyMap<string, RpcBlock>): Promise<Map<string, Date>> {
    const times = new Map<string, Date>();
    const missing: Array<[string, bigint]> = [];
    for (const [hash, number] of blocks) {
      const block = known.get(hash);
      if (block) times.set(hash, new Date(Number(block.timestamp) * 1000));
      else missing.push([hash, number]);
    }
    await inParallel(missing, RPC_CONCURRENCY, async ([hash, number]) => {
      const block = await this.rpc.block(number);
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
      return await this.rpc.logs({ fromBlock: from, toBlock: to, addresses: [...this.tokens.keys()], topics: [TRANSFER_TOPIC, null, walletTopics] });
    } catch (error) {
      if (from === to || !isRangeTooLarge(error)) throw error;
      const middle = from + (to - from) / 2n;
      return [...(await this.logsSplitting(from, middle, walletTopics)), ...(await this.logsSplitting(middle + 1n, to, walletTopics))];
    }
  }

  /**
   * Native-coin transfers to watched wallets that succeeded (a reverted transaction moves no value).
   * Blocks are read RPC_CONCURRENCY at a time and kept in `blocks` (by hash) for the token logs' times.
   */
  private async nativeTransfers(from: bigint, to: bigint, wallets: ReadonlySet<string>, blocks: Map<string, RpcBlock>): Promise<ChainTransfer[]> {
    const numbers: bigint[] = [];
    for (let number = from; number <= to; number += 1n) numbers.push(number);
    const read = await inParallel(numbers, RPC_CONCURRENCY, (number) => this.rpc.blockTransactions(number));
    const transfers: ChainTransfer[] = [];
    for (const found of read) {
      if (!found) continue;
      blocks.set(found.block.hash, found.block);
      for (const tx of found.transactions) {
        if (!tx.to || !wallets.has(tx.to) || tx.value === 0n) continue;
        const receipt = await this.rpc.receipt(tx.hash);
        if (receipt?.status !== 'success') continue;
        transfers.push({
          network: this.network.slug,
          chainId: this.chainId,
          txHash: tx.hash,
          logIndex: -1,
          from: tx.from,
          to: tx.to,
          asset: this.network.nativeAsset!,
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

  /** Payments with enough confirmations count, after their block hash is checked once more. */
  private async confirm(head: bigint): Promise<void> {
    const needed = BigInt(Math.max(1, this.network.confirmations));
    const through = head - needed + 1n;
    const waiting = await this.ledger.paymentsAwaitingConfirmation(this.network.slug, through);
    const confirmed: string[] = [];
    const hashes = new Map<bigint, string | null>();
    for (const payment of waiting) {
      if (!hashes.has(payment.blockNumber)) hashes.set(payment.blockNumber, (await this.rpc.block(payment.blockNumber))?.hash ?? null);
      if (hashes.get(payment.blockNumber) !== payment.blockHash) {
        // Its block left the chain between the scan and now.
        await this.ledger.confirmPayments(confirmed, this.ctx.clock());
        await this.ledger.rollBack(this.network.slug, payment.blockNumber, this.ctx.clock());
        this.metrics?.reorgs.inc({ network: this.network.slug });
        this.logger.warn({ network: this.network.slug, fromBlock: payment.blockNumber.toString() }, 'chain reorganisation found while confirming: rolled back');
        return;
      }
      confirmed.push(payment.id);
    }
    await this.ledger.confirmPayments(confirmed, this.ctx.clock());
    await this.ledger.updateConfirmations(this.network.slug, head);
  }

  /** Bound transactions are verified from their own receipt and Transfer logs (README "Payment rules"). */
  private async checkBoundTransactions(head: bigint): Promise<void> {
    const unverified = await this.ledger.boundTransactionsToCheck(this.chainId, 50);
    for (const bound of unverified) {
      const evidence = await this.evidence(bound.txHash, head);
      const now = this.ctx.clock();
      await this.ctx.store.transaction(async (tx) => {
        const session = await tx.lockSession(bound.sessionId);
        const current = session && (await tx.transactionsOfSession(session.id)).find((t) => t.id === bound.id);
        if (!session || current?.state !== 'unverified') return;
        const verdict = judgeBoundTransaction(session, current, this.network, evidence, now, this.settings.droppedAfterMinutes);
        const outcome = await applyBoundTxVerdict(this.ctx, tx, session, current, verdict, now);
        if (outcome.state === 'rejected') {
          this.logger.info({ network: this.network.slug, sessionId: session.id, reason: outcome.reason }, 'bound transaction rejected');
        }
      });
    }
  }

  private async evidence(txHash: string, head: bigint): Promise<BoundTxEvidence> {
    const evidence = await readEvidence(this.rpc, txHash, head);
    if (evidence.kind === 'missing') return { kind: 'missing', foundOn: await this.findElsewhere(txHash) };
    return evidence;
  }
}
