import type { Network } from '../domain/networks.js';
import type { ChainReader } from '../domain/ports.js';
import { ChainRpc } from './rpc.js';
import { readEvidence } from './transaction-evidence.js';

/**
 * The bind use-case's view of the chains: one RPC client per enabled network with an
 * RPC URL. A network that does not answer within `timeoutMs` is as good as unknown
 * (null): the bind is then kept as an unverified candidate for the watcher.
 */
export function createChainReader(networks: readonly Network[], timeoutMs: number): ChainReader {
  const clients = new Map(networks.filter((n) => n.rpcUrls.length > 0).map((n) => [n.slug, new ChainRpc(n.rpcUrls, timeoutMs)]));
  return {
    async evidence(network, txHash) {
      const rpc = clients.get(network);
      if (!rpc) return null;
      try {
        return await withTimeout(readEvidence(rpc, txHash), timeoutMs);
      } catch {
        return null;
      }
    },
  };
}

function withTimeout<T>(work: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms);
  });
  return Promise.race([work, timeout]).finally(() => clearTimeout(timer));
}
