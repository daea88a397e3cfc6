import { createPublicClient, fallback, http, parseAbi, type Hex, type PublicClient } from 'viem';
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

const GET_ETH_BALANCE = parseAbi(['function getEthBalance(address addr) view returns (uint256 balance)']);
/** Balances read per Multicall3 call (one eth_call each). */
const BALANCES_PER_CALL = 500;

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
   * The native balances of `addresses` at block `blockNumber`, through Multicall3's getEthBalance in chunks; null when
   * the chain has no Multicall3 or the calls fail (the caller learns nothing this time).
   */
  async nativeBalances(addresses: readonly string[], blockNumber: bigint): Promise<bigint[] | null> {
    const balances: bigint[] = [];
    try {
      for (let start = 0; start < addresses.length; start += BALANCES_PER_CALL) {
        const results = await this.client.multicall({
          contracts: addresses.slice(start, start + BALANCES_PER_CALL).map((address) => ({
            address: MULTICALL3_ADDRESS as Hex,
            abi: GET_ETH_BALANCE,
            functionName: 'getEthBalance' as const,
            args: [address as Hex] as const,
          })),
          multicallAddress: MULTICALL3_ADDRESS,
          allowFailure: false,
          batchSize: 0,
          blockNumber,
        });
        balances.push(...(results as bigint[]));
      }
    } catch {
      return null;
    }
    return balances;
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
