import type { Network } from '../domain/shared/networks.js';
import type { ChainReader } from '../domain/payments/chain-ports.js';
import { ChainRpc } from './rpc.js';
import { readEvidence } from './transaction-evidence.js';
import { withTimeout } from '../with-timeout.js';
import { depositFactoryDeployed } from './deposit-contracts.js';

/** After a network failed to answer, binds skip it this long (the watcher judges their transactions meanwhile). */
export const UNREACHABLE_PAUSE_MS = 5_000;

/**
 * The bind's view of the chains, asked once (the watcher checks a bind again anyway). A network silent past `timeoutMs`
 * is unknown and left alone for UNREACHABLE_PAUSE_MS, so an outage costs no payer a wait.
 */
export function createChainReader(
  networks: readonly Network[],
  timeoutMs: number,
  now: () => number = Date.now,
  options: { sandboxNetwork?: string } = {},
): ChainReader {
  const clients = new Map(
    networks
      .filter((n) => n.rpcUrls.length > 0)
      .map((n) => [n.slug, new ChainRpc(n.rpcUrls, timeoutMs, { retryCount: 0 })]),
  );
  const pausedUntil = new Map<string, number>();
  return {
    async evidence(network, txHash) {
      const rpc = clients.get(network);
      if (!rpc || (pausedUntil.get(network) ?? 0) > now()) return null;
      try {
        return await withTimeout(readEvidence(rpc, txHash), timeoutMs);
      } catch {
        pausedUntil.set(network, now() + UNREACHABLE_PAUSE_MS);
        return null;
      }
    },
    async depositFactoryDeployed(network) {
      // The sandbox deploys the factory each time it starts, even if its chain is not running now.
      if (network === options.sandboxNetwork) return true;
      const urls = networks.find((n) => n.slug === network)?.rpcUrls ?? [];
      return urls.length === 0 ? null : depositFactoryDeployed(urls, timeoutMs);
    },
  };
}
