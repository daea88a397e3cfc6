import type { RefundPayout } from './refund-transfer.js';

/** A transfer seen on the chain that may pay a refund: a Transfer log, or a transaction's value (logIndex -1). */
export interface SeenTransfer {
  readonly txHash: string;
  readonly logIndex: number;
  /** The token contract, lower-case; null for the coin. */
  readonly token: string | null;
  readonly from: string;
  readonly to: string;
  readonly baseUnits: bigint;
  readonly blockNumber: bigint;
  readonly blockHash: string;
}

/**
 * Whether `seen` pays `expected`: exactly its base units of its asset to its address. `senders` are the wallets a
 * transfer found by scanning must come from; a hash the merchant reported is taken from any sender.
 */
export function paysRefund(expected: RefundPayout, seen: SeenTransfer, senders: readonly string[] | 'any'): boolean {
  return (
    seen.token === expected.contractAddress &&
    seen.to.toLowerCase() === expected.destination &&
    seen.baseUnits === expected.baseUnits &&
    (senders === 'any' || senders.some((sender) => sender.toLowerCase() === seen.from.toLowerCase()))
  );
}

/** What a refund's transfer has become since it was last looked at. */
export type RefundChainStep =
  | { readonly kind: 'wait' }
  | { readonly kind: 'mined'; readonly blockNumber: bigint; readonly blockHash: string }
  | { readonly kind: 'confirm'; readonly blockNumber: bigint; readonly blockHash: string }
  | { readonly kind: 'unmine' };

/**
 * A known transfer against the chain now: `chainHash` is the hash of the recorded block as the node has it today
 * (null when the chain is no longer that long), `receipt` the transaction's block, if mined.
 */
export function refundChainStep(input: {
  readonly recorded: { readonly blockNumber: bigint; readonly blockHash: string } | null;
  readonly chainHash: string | null;
  readonly receipt: { readonly blockNumber: bigint; readonly blockHash: string; readonly success: boolean } | null;
  readonly head: bigint;
  readonly confirmations: number;
}): RefundChainStep {
  const { recorded, chainHash, receipt, head } = input;
  // A block hash commits to its ancestors: the recorded block left the chain when the node's hash differs.
  if (recorded && chainHash !== recorded.blockHash) return { kind: 'unmine' };
  if (!receipt || !receipt.success) return recorded ? { kind: 'unmine' } : { kind: 'wait' };
  if (recorded && receipt.blockHash !== recorded.blockHash) return { kind: 'unmine' };
  const needed = BigInt(Math.max(1, input.confirmations));
  const block = { blockNumber: receipt.blockNumber, blockHash: receipt.blockHash };
  if (head - receipt.blockNumber + 1n >= needed) return { kind: 'confirm', ...block };
  return recorded ? { kind: 'wait' } : { kind: 'mined', ...block };
}
