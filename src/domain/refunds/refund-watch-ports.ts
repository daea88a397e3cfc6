/** What the refund chain watcher keeps per refund (src/db/refunds/refund-watch.store.ts, docs/refund-claims.md). */

/** A refund the watcher holds for this round: where its scan resumes (null: never scanned). */
export interface WatchedRefund {
  readonly refundId: string;
  readonly nextBlock: bigint | null;
}

export interface RefundWatchStore {
  /**
   * Leases up to `limit` refunds on `network` that need following (ready, sent, confirmed and not settled) to
   * `instanceId` until `now` + `leaseSeconds`; a refund another live lease holds is left out.
   */
  lease(network: string, instanceId: string, now: Date, leaseSeconds: number, limit: number): Promise<WatchedRefund[]>;
  /** The scan of this refund resumes at `nextBlock`. */
  advance(refundId: string, nextBlock: bigint): Promise<void>;
  /** A confirmed refund deeper than any reorganisation looked for: no longer followed. */
  settle(refundId: string, now: Date): Promise<void>;
  /** Whether another refund (not failed) already holds this transfer (a transaction and its log index). */
  heldByAnother(refundId: string, chainId: string, txHash: string, logIndex: number): Promise<boolean>;
  /** The addresses an organisation receives at on a network (its wallets, now and before), lower-case. */
  walletsOf(organisationId: string, network: string): Promise<string[]>;
}
