import { createPublicClient, fallback, http, type PublicClient } from 'viem';
import { MULTICALL3_ADDRESS } from './deposit-contracts.js';
import type { RawLog } from './transfer-logs.js';

export interface RpcBlock {
  readonly number: bigint;
  readonly hash: string;
  readonly timestamp: bigint;
}

export interface RpcTransaction {
  readonly hash: string;
  readonly from: string;
  readonly to: string | null;
  readonly value: bigint;
  readonly blockNumber: bigint | null;
}

export interface RpcReceipt {
  readonly status: 'success' | 'reverted';
  readonly blockNumber: bigint;
  readonly blockHash: string;
  readonly logs: readonly RawLog[];
}

export interface LogFilter {
  readonly fromBlock: bigint;
  readonly toBlock: bigint;
  readonly addresses: readonly string[];
  readonly topics: ReadonlyArray<string | readonly string[] | null>;
}

/**
 * Balances read per Multicall3 call: about 5,500 gas each, so a call stays near 11 million gas, well under the 50
 * million that geth and most providers allow an eth_call.
 */
export const BALANCES_PER_CALL = 2_000;

/**
 * JSON-RPC to one EVM network through viem's transport (retries, fallback across the URLs): raw methods, lower-case hex
 * out, so the watcher decodes only what it needs.
 */
export class ChainRpc {
  private readonly client: PublicClient;

  constructor(urls: readonly string[], timeoutMs: number, options: { retryCount?: number } = {}) {
    const transports = urls.map((url) =>
      http(url, { timeout: timeoutMs, retryCount: options.retryCount ?? 1, retryDelay: 200 }),
    );
    this.client = createPublicClient({ transport: transports.length === 1 ? transports[0]! : fallback(transports) });
  }

  private request<T>(method: string, params: unknown[], options?: { retryCount?: number }): Promise<T> {
    return (
      this.client.request as (
        args: { method: string; params: unknown[] },
        options?: { retryCount?: number },
      ) => Promise<T>
    )({ method, params }, options);
  }

  async chainId(): Promise<number> {
    return Number(BigInt(await this.request<string>('eth_chainId', [])));
  }

  async blockNumber(): Promise<bigint> {
    return BigInt(await this.request<string>('eth_blockNumber', []));
  }

  /** The block at `number`, or null when the chain is not that long (any more). */
  async block(number: bigint): Promise<RpcBlock | null> {
    const block = await this.request<{ number: string; hash: string; timestamp: string } | null>(
      'eth_getBlockByNumber',
      [hex(number), false],
    );
    return block
      ? { number: BigInt(block.number), hash: block.hash.toLowerCase(), timestamp: BigInt(block.timestamp) }
      : null;
  }

  async blockTransactions(number: bigint): Promise<{ block: RpcBlock; transactions: RpcTransaction[] } | null> {
    const block = await this.request<{
      number: string;
      hash: string;
      timestamp: string;
      transactions: RawTransaction[];
    } | null>('eth_getBlockByNumber', [hex(number), true]);
    if (!block) return null;
    return {
      block: { number: BigInt(block.number), hash: block.hash.toLowerCase(), timestamp: BigInt(block.timestamp) },
      transactions: block.transactions.map(toTransaction),
    };
  }

  async logs(filter: LogFilter): Promise<RawLog[]> {
    // No retry here: a range the provider refuses is split by the caller, and retrying it only waits.
    return this.request<RawLog[]>(
      'eth_getLogs',
      [
        {
          fromBlock: hex(filter.fromBlock),
          toBlock: hex(filter.toBlock),
          address: filter.addresses,
          topics: filter.topics,
        },
      ],
      { retryCount: 0 },
    );
  }

  async transaction(hash: string): Promise<RpcTransaction | null> {
    const tx = await this.request<RawTransaction | null>('eth_getTransactionByHash', [hash]);
    return tx ? toTransaction(tx) : null;
  }

  async receipt(hash: string): Promise<RpcReceipt | null> {
    const receipt = await this.request<{
      status: string;
      blockNumber: string;
      blockHash: string;
      logs: RawLog[];
    } | null>('eth_getTransactionReceipt', [hash]);
    if (!receipt) return null;
    return {
      status: BigInt(receipt.status) === 1n ? 'success' : 'reverted',
      blockNumber: BigInt(receipt.blockNumber),
      blockHash: receipt.blockHash.toLowerCase(),
      logs: receipt.logs,
    };
  }

  /**
   * The native balances of `addresses` at block `blockNumber`, through Multicall3's getEthBalance in chunks of
   * BALANCES_PER_CALL (one eth_call each, encoded by hand); null when the chain has no Multicall3 or a call fails.
   */
  async nativeBalances(addresses: readonly string[], blockNumber: bigint): Promise<bigint[] | null> {
    const chunks: Array<readonly string[]> = [];
    for (let start = 0; start < addresses.length; start += BALANCES_PER_CALL)
      chunks.push(addresses.slice(start, start + BALANCES_PER_CALL));
    try {
      const answers: string[] = [];
      for (const chunk of chunks) {
        const call = { to: MULTICALL3_ADDRESS, data: encodeBalanceCalls(chunk) };
        answers.push(await this.request<string>('eth_call', [call, hex(blockNumber)]));
      }
      return answers.flatMap((answer, index) => decodeBalances(answer, chunks[index]!.length));
    } catch {
      return null;
    }
  }

  /** ERC-20 `decimals()`; null when there is no contract at the address. */
  async tokenDecimals(address: string): Promise<number | null> {
    const code = await this.request<string>('eth_getCode', [address, 'latest']);
    if (!code || code === '0x') return null;
    const result = await this.request<string>('eth_call', [{ to: address, data: '0x313ce567' }, 'latest']);
    return result && result !== '0x' ? Number(BigInt(result)) : null;
  }
}

interface RawTransaction {
  hash: string;
  from: string;
  to: string | null;
  value: string;
  blockNumber: string | null;
}

function toTransaction(tx: RawTransaction): RpcTransaction {
  return {
    hash: tx.hash.toLowerCase(),
    from: tx.from.toLowerCase(),
    to: tx.to?.toLowerCase() ?? null,
    value: BigInt(tx.value),
    blockNumber: tx.blockNumber === null ? null : BigInt(tx.blockNumber),
  };
}

function hex(value: bigint): string {
  return `0x${value.toString(16)}`;
}

/**
 * Whether a provider refused an eth_getLogs range as too large; the wording differs (Infura, Alchemy, QuickNode, geth
 * "exceed maximum block range", code -32005).
 */
export function isRangeTooLarge(error: unknown): boolean {
  const text = collectMessages(error).toLowerCase();
  // Throttling is not about the range: splitting would only send more requests.
  if (/(rate limit|too many requests|rate exceeded|\b429\b)/.test(text)) return false;
  return (
    /-32005/.test(text) || /(more than|too many|exceed|limit|range|too large|response size|block range)/.test(text)
  );
}

/**
 * Whether a provider refused an eth_getLogs filter for its OR-list of topics (geth and erigon allow 1,000 per position:
 * "exceed max topics", "… addresses or topics per search position").
 */
export function isTooManyTopics(error: unknown): boolean {
  return /(max(imum)? (of \d+ )?topics|topics per search position|too many topics)/.test(
    collectMessages(error).toLowerCase(),
  );
}

function collectMessages(error: unknown): string {
  const parts: string[] = [];
  let current: unknown = error;
  for (let depth = 0; current && depth < 6; depth += 1) {
    const e = current as { message?: unknown; details?: unknown; code?: unknown; cause?: unknown };
    parts.push(String(e.message ?? ''), String(e.details ?? ''), String(e.code ?? ''));
    current = e.cause;
  }
  return parts.join(' ');
}

// Multicall3 `aggregate((address,bytes)[])` of `getEthBalance(address)` calls to itself, encoded by hand: viem's
// generic encoder costs more CPU than the watcher's whole scan at 100,000 deposit addresses.
const AGGREGATE_SELECTOR = '252dba42';
const GET_ETH_BALANCE_SELECTOR = '4d2301cc';
const word = (value: number) => value.toString(16).padStart(64, '0');
const TARGET = word(0).slice(40) + MULTICALL3_ADDRESS.slice(2).toLowerCase();
// Each call's tuple: the target, its bytes' offset (64), their length (36), selector + address padded to 64 bytes.
const TUPLE_HEAD = `${word(64)}${word(36)}${GET_ETH_BALANCE_SELECTOR}${'0'.repeat(24)}`;
const TUPLE_TAIL = '0'.repeat(56);

function encodeBalanceCalls(addresses: readonly string[]): string {
  const count = addresses.length;
  const parts: string[] = [`0x${AGGREGATE_SELECTOR}`, word(32), word(count)];
  for (let i = 0; i < count; i += 1) parts.push(word(count * 32 + i * 160));
  for (const address of addresses) parts.push(TARGET, TUPLE_HEAD, address.slice(2).toLowerCase(), TUPLE_TAIL);
  return parts.join('');
}

/** The balances in `aggregate`'s answer `(uint256 blockNumber, bytes[] returnData)`, each a 32-byte word. */
function decodeBalances(answer: string, count: number): bigint[] {
  const data = answer.slice(2);
  if (data.length < 192) throw new Error('no Multicall3 answer (no contract there?)');
  const at = (byte: number) => Number.parseInt(data.slice(byte * 2, byte * 2 + 64), 16);
  const array = at(32);
  if (at(array) !== count) throw new Error(`Multicall3 answered ${at(array)} results for ${count} calls`);
  const balances: bigint[] = new Array(count);
  for (let i = 0; i < count; i += 1) {
    const element = array + 32 + at(array + 32 + i * 32);
    if (at(element) !== 32) throw new Error('Multicall3 answered a balance that is not one word');
    balances[i] = BigInt(`0x${data.slice((element + 32) * 2, (element + 64) * 2)}`);
  }
  return balances;
}
