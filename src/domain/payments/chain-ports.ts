import type { AssetTicker } from '../shared/assets.js';
import type { RejectionCode } from '../shared/reason-codes.js';
import type { ChainTransfer, PaymentRecord, ScanOutcome, TransferSnapshot } from './payment-ports.js';

/**
 * What the domain needs to know about chains: the watcher's ledger, the transactions payers bind, and what a network
 * says about one of them.
 */

/** A transaction a payer bound to a session: a hint, verified from its own receipt before anything is credited. */
export interface BoundTransaction {
  readonly id: string;
  readonly sessionId: string;
  readonly network: string;
  readonly chainId: string;
  readonly txHash: string;
  readonly cryptoCurrency: AssetTicker;
  readonly payerWalletAddress: string | null;
  readonly state: 'unverified' | 'verified' | 'rejected';
  /** Why it was rejected, as a code (what code branches on) and as text (what people read). */
  readonly reasonCode: RejectionCode | null;
  readonly reason: string | null;
  /** When the chain first knew the transaction (pending or mined); null while it does not. */
  readonly seenOnChainAt: Date | null;
  /** The client address it was bound from (as rate limits tell it); null when bound by `kassa dev pay`. */
  readonly clientAddress: string | null;
  readonly createdAt: Date;
}

/** What the chain says about a bound transaction. */
export type BoundTxEvidence =
  /** Mined: its receipt, the Transfer logs in it, and the native value it moved. */
  | {
      readonly kind: 'mined';
      readonly reverted: boolean;
      readonly blockNumber: bigint;
      readonly blockHash: string;
      readonly blockTime: Date;
      readonly confirmations: number;
      readonly transfers: ReadonlyArray<{
        tokenAddress: string;
        from: string;
        to: string;
        baseUnits: bigint;
        logIndex: number;
      }>;
      readonly nativeTo: string | null;
      readonly nativeValue: bigint;
      /** The transaction's sender; null when the node did not return the transaction. */
      readonly sender: string | null;
    }
  /** Known to the node but not mined yet. */
  | { readonly kind: 'pending' }
  /** Unknown to the bound chain; `foundOn` names another enabled network that has it. */
  | { readonly kind: 'missing'; readonly foundOn: { slug: string; chainId: number } | null };

/** Asks a network about one transaction (the bind use-case verifies at once what is already mined). */
export interface ChainReader {
  /** What `network` says about `txHash` now; null when it cannot be asked (no RPC URL, or no answer in time). */
  evidence(network: string, txHash: string): Promise<BoundTxEvidence | null>;
  /** Whether the deposit factory has code on `network` (always on the sandbox); null when nobody can tell. */
  depositFactoryDeployed?(network: string): Promise<boolean | null>;
}

/** The bound-transaction part of storage inside one transaction (TxStore, src/domain/ports.ts). */
export interface BoundTransactionTxStore {
  transactionsOfSession(sessionId: string): Promise<BoundTransaction[]>;
  /** Sessions other than `sessionId` holding `txHash` on `chainId` as a bound transaction not rejected. */
  otherSessionsBinding(txHash: string, chainId: string, sessionId: string): Promise<BoundTransaction[]>;
  insertBoundTransaction(bound: BoundTransaction): Promise<void>;
  /** Deletes a candidate (a rejected one that a new bind of the same hash replaces). */
  removeBoundTransaction(id: string): Promise<void>;
  updateBoundTransaction(
    id: string,
    patch: {
      state?: BoundTransaction['state'];
      reasonCode?: RejectionCode;
      reason?: string;
      seenOnChainAt?: Date;
      checkedAt: Date;
    },
  ): Promise<void>;
}

/** A range of blocks scanned on one network, to be recorded at once. */
export interface ScannedRange {
  readonly network: string;
  readonly chainId: string;
  /** The cursor the scan started from; the write is refused if another scanner moved it meanwhile. */
  readonly fromBlock: bigint;
  readonly toBlock: bigint;
  readonly toBlockHash: string;
  readonly transfers: readonly ChainTransfer[];
}

/**
 * Storage for the chain watcher: per-network cursors with a leader lease,
 * block hashes for reorg detection, and payments.
 */
export interface ChainLedger {
  /**
   * Takes or renews the lease on scanning `network` for `instanceId`. Returns
   * the block to scan next, or null when another live instance leads.
   */
  leaseNetwork(
    network: string,
    chainId: string,
    instanceId: string,
    leaseSeconds: number,
    startBlock: bigint,
  ): Promise<bigint | null>;
  releaseNetwork(network: string, instanceId: string): Promise<void>;
  /** Receiving wallets to watch: of open sessions and of sessions inside their late-payment window. */
  watchedWallets(network: string, now: Date): Promise<WatchedWallet[]>;
  /**
   * Watched deposit addresses on `network` in `holding` or ever collected: the native coin recorded arriving before
   * `beforeBlock` less what recorded collects took by then, in base units (open or late-window sessions only).
   */
  depositNativeBooks(
    network: string,
    beforeBlock: bigint,
    now: Date,
    holding: readonly string[],
  ): Promise<DepositNativeBook[]>;
  /** The newest recorded block hashes, newest first. */
  recordedBlocks(network: string, limit: number): Promise<Array<{ number: bigint; hash: string }>>;
  /**
   * Payments (each as `judge` decides; null credits nobody), the range end's block hash and the cursor, in one
   * transaction; false, with nothing written, when the cursor moved from `fromBlock` or the lease was lost.
   */
  recordRange(
    range: ScannedRange,
    instanceId: string,
    judge: (snapshot: TransferSnapshot) => ScanOutcome | null,
    now: Date,
  ): Promise<boolean>;
  /**
   * Records that the leader `instanceId` has scanned through `head`, read at `at`: every
   * block mined before `at` is scanned (expiry waits for that, docs/payment-rules.md, rule 6).
   */
  markCaughtUp(network: string, instanceId: string, head: bigint, at: Date): Promise<void>;
  /** Undoes everything from `fromBlock` up on `network` (a reorganisation): payments reversed, cursor rewound. */
  rollBack(network: string, fromBlock: bigint, now: Date): Promise<number>;
  /** Payments seen up to `throughBlock` and not yet confirmed, oldest first. */
  paymentsAwaitingConfirmation(
    network: string,
    throughBlock: bigint,
  ): Promise<Array<{ id: string; blockNumber: bigint; blockHash: string }>>;
  /**
   * Marks payments confirmed and their sessions as needing settlement: each only while still at the block whose hash
   * was checked (a bind or another instance's rescan may move a row to a new block meanwhile).
   */
  confirmPayments(payments: ReadonlyArray<{ id: string; blockHash: string }>, now: Date): Promise<void>;
  /** Stores the confirmation counts of not yet confirmed payments, for display. */
  updateConfirmations(network: string, head: bigint): Promise<void>;
  /** Bound transactions on `chainId` not judged yet, of open sessions, the least recently checked first. */
  boundTransactionsToCheck(chainId: string, limit: number): Promise<BoundTransaction[]>;
  unattributedPayments(limit: number): Promise<PaymentRecord[]>;
  paymentsOfSession(sessionId: string): Promise<PaymentRecord[]>;
}

/** A deposit address and the native coin Kassa's records say it holds (docs/payment-detection.md). */
/** A watched receiving wallet; `deposit` when it is a deposit-mode session's own address. */
export interface WatchedWallet {
  readonly address: string;
  readonly deposit: boolean;
}

export interface DepositNativeBook {
  readonly address: string;
  readonly known: bigint;
}
