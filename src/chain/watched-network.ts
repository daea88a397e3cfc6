import type { DomainContext } from '../domain/context.js';
import type { Network } from '../domain/shared/networks.js';
import type { Logger } from '../logging.js';
import type { Metrics } from '../metrics.js';
import type { ChainRpc } from './rpc.js';

/**
 * One enabled network as each step of its watcher sees it (src/chain/network-watcher.ts):
 * the domain context, where to ask the chain, whom to tell, and which instance is asking.
 */
export interface WatchedNetwork {
  readonly ctx: DomainContext;
  readonly network: Network;
  /** The chain id as storage keeps it: a decimal string. */
  readonly chainId: string;
  readonly rpc: ChainRpc;
  /** This process among the instances on one database: leases are taken in its name. */
  readonly instanceId: string;
  readonly logger: Logger;
  readonly metrics?: Metrics;
}
