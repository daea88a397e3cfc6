import type { ChainTransfer } from '../domain/payments/payment-ports.js';

/**
 * Transfers recorded in one database transaction at most, unless one block holds more: a range with more is recorded
 * in parts of whole blocks, so its transaction stays well inside its 30 s limit (1,000 took 30 s on a loaded host).
 */
export const TRANSFERS_PER_WRITE = 200;

export interface RangePart {
  readonly fromBlock: bigint;
  readonly toBlock: bigint;
  readonly toBlockHash: string;
  readonly transfers: readonly ChainTransfer[];
}

/**
 * [from, to] as consecutive parts of whole blocks holding at most TRANSFERS_PER_WRITE transfers each (or one block's),
 * each ending at a block whose hash is known; the transfers keep their order within each part. One part when few.
 */
export function rangeParts(from: bigint, to: bigint, toHash: string, transfers: readonly ChainTransfer[]): RangePart[] {
  if (transfers.length <= TRANSFERS_PER_WRITE)
    return [{ fromBlock: from, toBlock: to, toBlockHash: toHash, transfers }];
  const perBlock = new Map<bigint, { hash: string; count: number }>();
  for (const transfer of transfers) {
    const block = perBlock.get(transfer.blockNumber);
    if (block) block.count += 1;
    else perBlock.set(transfer.blockNumber, { hash: transfer.blockHash, count: 1 });
  }
  const cuts: Array<{ number: bigint; hash: string }> = [];
  let held = 0;
  let last: { number: bigint; hash: string } | null = null;
  for (const [number, block] of [...perBlock].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) {
    if (last && held + block.count > TRANSFERS_PER_WRITE) {
      cuts.push(last);
      held = 0;
    }
    held += block.count;
    last = { number, hash: block.hash };
  }
  const parts: RangePart[] = [];
  let start = from;
  for (const cut of [...cuts, { number: to, hash: toHash }]) {
    const inPart = transfers.filter((t) => t.blockNumber >= start && t.blockNumber <= cut.number);
    parts.push({ fromBlock: start, toBlock: cut.number, toBlockHash: cut.hash, transfers: inPart });
    start = cut.number + 1n;
  }
  return parts;
}
