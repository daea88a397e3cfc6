import { BlockScanner } from './block-scanner.js';
import { checkBoundTransactions, type FindElsewhere } from './bound-transaction-checks.js';
import { confirmSeenPayments } from './payment-confirmations.js';
import { registryMismatches } from './registry-check.js';
import { undoReorganisation } from './reorg-check.js';
import { tokenIndex } from './transfer-logs.js';
import type { WatchedNetwork } from './watched-network.js';

// Native-coin transfers need every block's transactions: ranges are kept short for them.
const NATIVE_BLOCKS_PER_RANGE = 50;

/** What one network's ticks are tuned by (part of the watchers' settings, src/chain/chain-watcher.ts). */
export interface NetworkWatchSettings {
  /** Largest block range asked of eth_getLogs at once (halved while the provider refuses it). */
  readonly maxBlocksPerRange: number;
  /** On the very first scan of a network, how far behind the head to start. */
  readonly backfillBlocks: number;
  readonly leaseSeconds: number;
  /**
   * A bound transaction unknown to its chain for this long is dropped (the in-flight grace:
   * docs/payment-rules.md, rule 3).
   */
  readonly droppedAfterMinutes: number;
}

/**
 * One network's watcher: a tick checks the registry (once), takes the lease, undoes a reorganisation, scans, confirms
 * and judges bound transactions, in that order; the steps live in their own modules.
 */
export class NetworkWatcher {
  private readonly scanner: BlockScanner;
  private tokensVerified = false;
  private refused = false;
  private lastError: string | null = null;
  /** Set by startChainWatchers once every network's watcher exists. */
  findElsewhere: FindElsewhere = async () => null;

  constructor(
    readonly watched: WatchedNetwork,
    private readonly settings: NetworkWatchSettings,
  ) {
    this.scanner = new BlockScanner(watched, tokenIndex(watched.network));
  }

  async tick(): Promise<void> {
    if (this.refused) return;
    const { ctx, network, rpc, metrics, chainId, instanceId } = this.watched;
    const { backfillBlocks, leaseSeconds, maxBlocksPerRange } = this.settings;
    const ledger = ctx.store.chain;
    try {
      if (!this.tokensVerified) await this.verifyRegistry();
      if (this.refused) return;
      const headReadAt = ctx.clock();
      const head = await rpc.blockNumber();
      metrics?.chainHead.set({ network: network.slug }, Number(head));
      const backfill = BigInt(backfillBlocks);
      const start = head > backfill ? head - backfill : 0n;
      const lease = () => ledger.leaseNetwork(network.slug, chainId, instanceId, leaseSeconds, start);
      const leased = await lease();
      if (leased === null) return; // another instance leads this network
      const rewound = (await undoReorganisation(this.watched, head, start)) ? await lease() : leased;
      if (rewound === null) return;
      let next: bigint = rewound;
      const watchedWallets = await ledger.watchedWallets(network.slug, ctx.clock());
      const wallets = new Set(watchedWallets.map((wallet) => wallet.address));
      // Deposit addresses get a native balance check per range; none open, none asked (the books query included).
      const deposits = watchedWallets.filter((wallet) => wallet.deposit).map((wallet) => wallet.address);
      while (next <= head) {
        const nativeScan = network.nativeAsset && wallets.size > 0;
        const span = BigInt(nativeScan ? Math.min(maxBlocksPerRange, NATIVE_BLOCKS_PER_RANGE) : maxBlocksPerRange);
        const to: bigint = next + span - 1n < head ? next + span - 1n : head;
        // Not recorded: the lease was lost or another scanner raced us; the leader carries on.
        if (!(await this.scanner.scanRange(next, to, wallets, deposits))) return;
        next = to + 1n;
        metrics?.chainCursor.set({ network: network.slug }, Number(next));
      }
      // Everything mined before `headReadAt` is scanned now: expiry may stop waiting for this network.
      await ledger.markCaughtUp(network.slug, instanceId, head, headReadAt);
      await confirmSeenPayments(this.watched, head);
      // Bound transactions are credited only once verified from their own receipt. Every
      // changed session is settled once all networks have ticked (startChainWatchers).
      await checkBoundTransactions(this.watched, head, this.settings.droppedAfterMinutes, this.findElsewhere);
      if (this.lastError) this.watched.logger.info({ network: network.slug }, 'chain watcher recovered');
      this.lastError = null;
    } catch (error) {
      // The line that says what happened: the first, or the last of a Prisma error ("Invalid … invocation:" first).
      const lines = ((error as Error).message ?? String(error)).split('\n').filter((line) => line.trim() !== '');
      const message = (lines[0]?.startsWith('Invalid `') ? lines.at(-1) : lines[0]) ?? String(error);
      // An unreachable RPC must not flood the log: report each new problem once.
      if (message !== this.lastError) {
        this.watched.logger.warn({ network: network.slug, err: message }, 'chain watcher tick failed; retrying');
      }
      this.lastError = message;
    }
  }

  /** A network whose registry entry does not match its chain is refused for good (until a restart). */
  private async verifyRegistry(): Promise<void> {
    const { network } = this.watched;
    const problems = await registryMismatches(this.watched.rpc, network);
    if (problems.length > 0) {
      this.refused = true;
      this.watched.logger.error(
        { network: network.slug, problems },
        `refusing to watch ${network.slug}: the network registry does not match the chain`,
      );
      return;
    }
    this.tokensVerified = true;
  }
}
