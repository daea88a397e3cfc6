import { randomUUID } from 'node:crypto';
import type { DomainContext } from '../domain/context.js';
import type { Logger } from '../logging.js';
import type { Metrics } from '../metrics.js';
import { NetworkWatcher, type NetworkWatchSettings } from './network-watcher.js';
import { ChainRpc } from './rpc.js';
import { settleChangedSessions } from './settle-changed-sessions.js';

export interface WatcherSettings extends NetworkWatchSettings {
  /** Pause between scans of a network. */
  readonly intervalMs: number;
  readonly rpcTimeoutMs: number;
}

export interface ChainWatchers {
  /** Runs one scan of every network now (tests and `kassa dev pay --wait`). */
  tick(): Promise<void>;
  stop(): Promise<void>;
}

/**
 * One watcher per enabled network on one timer (docs/payment-detection.md); after every tick the changed sessions are
 * settled by any instance. Ticks never overlap; stop waits for the running one and gives up the leases.
 */
export function startChainWatchers(
  ctx: DomainContext,
  settings: WatcherSettings,
  logger: Logger,
  metrics?: Metrics,
): ChainWatchers {
  const instanceId = randomUUID();
  const watchers = ctx.networks
    .filter((network) => network.rpcUrls.length > 0)
    .map((network) => {
      const rpc = new ChainRpc(network.rpcUrls, settings.rpcTimeoutMs);
      const chainId = String(network.chainId);
      return new NetworkWatcher({ ctx, network, chainId, rpc, instanceId, logger, metrics }, settings);
    });
  for (const network of ctx.networks.filter((n) => n.rpcUrls.length === 0)) {
    const variable = `KASSA_RPC_URLS_${network.slug.toUpperCase()}`;
    const message = `no RPC URL for ${network.slug}: its payments are not watched (set ${variable})`;
    logger.warn({ network: network.slug }, message);
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
      const release = ({ watched }: NetworkWatcher) => ctx.store.chain.releaseNetwork(watched.network.slug, instanceId);
      await Promise.allSettled(watchers.map(release));
    },
  };
}

/** The first other network whose node knows `hash` (a payer bound a transaction to the wrong chain). */
async function findOnOtherNetworks(
  watchers: readonly NetworkWatcher[],
  hash: string,
): Promise<{ slug: string; chainId: number } | null> {
  for (const { watched } of watchers) {
    const found = await watched.rpc.transaction(hash).catch(() => null);
    if (found) return { slug: watched.network.slug, chainId: watched.network.chainId };
  }
  return null;
}
