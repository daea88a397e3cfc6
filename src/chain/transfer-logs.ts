import type { AssetTicker } from '../domain/shared/assets.js';
import { fromBaseUnits } from '../domain/shared/money.js';
import type { Network } from '../domain/shared/networks.js';
import type { ChainTransfer } from '../domain/payments/payment-ports.js';

/** keccak256("Transfer(address,address,uint256)"). */
export const TRANSFER_TOPIC = '0xddf252ad1be2c89b69c2b068fc378daa952ba7f163c4a11628f55a4df523b3ef';

/** A log as eth_getLogs returns it (hex quantities). */
export interface RawLog {
  readonly address: string;
  readonly topics: readonly string[];
  readonly data: string;
  readonly blockNumber: string;
  readonly blockHash: string;
  readonly transactionHash: string;
  readonly logIndex: string;
  readonly removed?: boolean;
}

export interface TokenInfo {
  readonly ticker: AssetTicker;
  readonly decimals: number;
}

/** The network's tokens by lower-case contract address. */
export function tokenIndex(network: Network): Map<string, TokenInfo> {
  return new Map(
    network.tokens.map((token) => [token.address.toLowerCase(), { ticker: token.ticker, decimals: token.decimals }]),
  );
}

/** The 32-byte topic of an address (for eth_getLogs filters). */
export function addressTopic(address: string): string {
  return `0x${address.toLowerCase().replace(/^0x/, '').padStart(64, '0')}`;
}

/** An ERC-20 Transfer log: the event topic and two indexed addresses (ERC-721's has a third). */
export function isErc20Transfer(log: RawLog): boolean {
  return !log.removed && log.topics.length === 3 && log.topics[0] === TRANSFER_TOPIC;
}

/** The address in an indexed 32-byte topic, lower-case. */
export function topicAddress(topic: string): string {
  return `0x${topic.slice(26).toLowerCase()}`;
}

/** The uint256 value of a Transfer log's data; null when the data is not one 32-byte word. */
export function transferValue(data: string): bigint | null {
  return data.length < 3 || data.length > 66 ? null : BigInt(data);
}

/**
 * Decodes ERC-20 Transfer logs of the network's tokens to watched wallets, by hand since this runs on every log (`npm
 * run bench`); skips ERC-721 transfers, removed logs, unknown contracts and zero-value (address-poisoning) transfers.
 */
export function decodeTransferLogs(
  logs: readonly RawLog[],
  network: Network,
  tokens: ReadonlyMap<string, TokenInfo>,
  wallets: ReadonlySet<string>,
  /** Block timestamps by lower-case block hash (see {@link blocksOf}). */
  blockTimes: ReadonlyMap<string, Date>,
): ChainTransfer[] {
  const chainId = String(network.chainId);
  const transfers: ChainTransfer[] = [];
  for (const log of logs) {
    if (!isErc20Transfer(log)) continue;
    const token = tokens.get(log.address.toLowerCase());
    if (!token) continue;
    const to = topicAddress(log.topics[2]!);
    if (!wallets.has(to)) continue;
    const baseUnits = transferValue(log.data);
    if (!baseUnits) continue; // malformed, or zero
    transfers.push({
      network: network.slug,
      chainId,
      txHash: log.transactionHash.toLowerCase(),
      logIndex: Number(BigInt(log.logIndex)),
      from: topicAddress(log.topics[1]!),
      to,
      asset: token.ticker,
      tokenAddress: log.address.toLowerCase(),
      baseUnits,
      amount: fromBaseUnits(baseUnits, token.decimals),
      blockNumber: BigInt(log.blockNumber),
      blockHash: log.blockHash.toLowerCase(),
      blockTime: blockTimes.get(log.blockHash.toLowerCase()) ?? new Date(0),
    });
  }
  return transfers;
}

/**
 * The blocks holding Transfer logs to watched wallets, by lower-case hash with their number,
 * so their timestamps can be read once each (a log itself carries no time).
 */
export function blocksOf(logs: readonly RawLog[], wallets: ReadonlySet<string>): Map<string, bigint> {
  const blocks = new Map<string, bigint>();
  for (const log of logs) {
    if (isErc20Transfer(log) && wallets.has(topicAddress(log.topics[2]!)))
      blocks.set(log.blockHash.toLowerCase(), BigInt(log.blockNumber));
  }
  return blocks;
}
