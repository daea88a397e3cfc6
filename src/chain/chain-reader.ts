import type { Network } from '../domain/shared/networks.js';
import type { ChainReader } from '../domain/payments/chain-ports.js';
import { ChainRpc } from './rpc.js';
import { readEvidence } from './transaction-evidence.js';
import { withTimeout } from '../with-timeout.js';

/** After a network failed to answer, binds skip it this long (the watcher judges their transactions meanwhile). */
export const UNREACHABLE_PAUSE_MS = 5_000;

/**
 * The bind use-case's view of the chains: one RPC client per enabled network with an
 * RPC URL, asked once (no retries: a bind is a hint the watcher checks again anyway).
 * A network that does not answer within `timeoutMs` is as good as unknown (null): the
 * bind is then kept as an unverified candidate for the watcher, and for
 * UNREACHABLE_PAUSE_MS binds do not ask that network again, so an outage costs
 * neither every payer's wait nor the server's time.
 */
export function createChainReader(
  networks: readonly Network[],
  timeoutMs: number,
  now: () => number = Date.now,
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
  };
}
