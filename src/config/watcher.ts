import type { EnvReader } from './env-reader.js';

/** The chain watchers (src/chain). */
export interface WatcherConfig {
  readonly enabled: boolean;
  readonly intervalMs: number;
  readonly maxBlocksPerRange: number;
  readonly backfillBlocks: number;
  readonly leaseSeconds: number;
  readonly rpcTimeoutMs: number;
}

export function readWatcherConfig(read: EnvReader, development: boolean): WatcherConfig {
  return {
    enabled: read.boolean('KASSA_WATCHER', true),
    intervalMs: read.integer('KASSA_WATCH_INTERVAL_MS', development ? 1000 : 4000, 20, 600_000),
    maxBlocksPerRange: read.integer('KASSA_SCAN_MAX_BLOCKS', 1000, 1, 100_000),
    backfillBlocks: read.integer('KASSA_SCAN_BACKFILL_BLOCKS', 100, 0, 1_000_000),
    leaseSeconds: read.integer('KASSA_WATCH_LEASE_SECONDS', 30, 2, 3600),
    rpcTimeoutMs: read.integer('KASSA_RPC_TIMEOUT_MS', 10_000, 100, 120_000),
  };
}
