import { fromBaseUnits } from '../domain/shared/money.js';
import { NATIVE_COIN_DECIMALS } from '../domain/shared/networks.js';
import type { ChainTransfer } from '../domain/payments/payment-ports.js';
import type { RpcBlock } from './rpc.js';
import type { WatchedNetwork } from './watched-network.js';

/** The block scanner's reads of the native coin: value transfers in whole blocks, and balances of deposit addresses. */

/** JSON-RPC reads of one scan in flight at once (blocks and their timestamps), instead of one after another. */
export const RPC_CONCURRENCY = 8;

/** `work` over `items`, at most `limit` at once; the results in the items' order. */
export async function inParallel<T, R>(
  items: readonly T[],
  limit: number,
  work: (item: T) => Promise<R>,
): Promise<R[]> {
  const results: R[] = new Array(items.length);
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const index = next++;
      results[index] = await work(items[index]!);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  return results;
}

/** A payment found by a deposit address's balance (no transaction or log of its own): marked as such. */
export const BALANCE_CHECK_LOG_INDEX = -2;
const UNKNOWN_SENDER = '0x0000000000000000000000000000000000000000';
/** The `tx_hash` of native coin found at `address` by the balance read at `block`: one per address and block. */
export const balanceCheckHash = (block: bigint, address: string) => `balance:${block}:${address}`;

/**
 * Native coin that reached deposit addresses by internal transfers in [from, end]: what Multicall3 reads at `end`
 * above what is recorded (`direct`: this range's) and not collected; only addresses holding coin need their books.
 */
export async function internalNative(
  watched: WatchedNetwork,
  from: bigint,
  end: RpcBlock,
  direct: readonly ChainTransfer[],
  deposits: readonly string[],
): Promise<ChainTransfer[]> {
  const { ctx, network, rpc } = watched;
  const read = await rpc.nativeBalances(deposits, end.number);
  if (!read) return [];
  const balances = new Map<string, bigint>();
  for (const [index, address] of deposits.entries()) if (read[index]! > 0n) balances.set(address, read[index]!);
  const books = await ctx.store.chain.depositNativeBooks(network.slug, from, ctx.clock(), [...balances.keys()]);
  if (books.length === 0) return [];
  const arrived = new Map<string, bigint>();
  for (const transfer of direct) arrived.set(transfer.to, (arrived.get(transfer.to) ?? 0n) + transfer.baseUnits);
  const found: ChainTransfer[] = [];
  let listed: Set<string> | undefined;
  for (const book of books) {
    // An address that opened after this tick's list was read: its balance is read next tick.
    if (!balances.has(book.address) && !(listed ??= new Set(deposits)).has(book.address)) continue;
    const unexplained = (balances.get(book.address) ?? 0n) - book.known - (arrived.get(book.address) ?? 0n);
    if (unexplained <= 0n) continue;
    found.push({
      network: network.slug,
      chainId: watched.chainId,
      txHash: balanceCheckHash(end.number, book.address),
      logIndex: BALANCE_CHECK_LOG_INDEX,
      from: UNKNOWN_SENDER,
      to: book.address,
      asset: network.nativeAsset!,
      tokenAddress: null,
      baseUnits: unexplained,
      amount: fromBaseUnits(unexplained, NATIVE_COIN_DECIMALS),
      blockNumber: end.number,
      blockHash: end.hash,
      blockTime: new Date(Number(end.timestamp) * 1000),
    });
  }
  return found;
}

/**
 * Native-coin transfers to watched wallets that succeeded (a reverted transaction moves no value).
 * Blocks are read RPC_CONCURRENCY at a time and kept in `blocks` (by hash) for the token logs' times.
 */
export async function nativeTransfers(
  watched: WatchedNetwork,
  from: bigint,
  to: bigint,
  wallets: ReadonlySet<string>,
  blocks: Map<string, RpcBlock>,
): Promise<ChainTransfer[]> {
  const { network, rpc } = watched;
  const numbers: bigint[] = [];
  for (let number = from; number <= to; number += 1n) numbers.push(number);
  const read = await inParallel(numbers, RPC_CONCURRENCY, (number) => rpc.blockTransactions(number));
  const transfers: ChainTransfer[] = [];
  for (const found of read) {
    if (!found) continue;
    blocks.set(found.block.hash, found.block);
    for (const tx of found.transactions) {
      if (!tx.to || !wallets.has(tx.to) || tx.value === 0n) continue;
      const receipt = await rpc.receipt(tx.hash);
      if (receipt?.status !== 'success') continue;
      transfers.push({
        network: network.slug,
        chainId: watched.chainId,
        txHash: tx.hash,
        logIndex: -1,
        from: tx.from,
        to: tx.to,
        asset: network.nativeAsset!,
        tokenAddress: null,
        baseUnits: tx.value,
        amount: fromBaseUnits(tx.value, NATIVE_COIN_DECIMALS),
        blockNumber: found.block.number,
        blockHash: found.block.hash,
        blockTime: new Date(Number(found.block.timestamp) * 1000),
      });
    }
  }
  return transfers;
}
