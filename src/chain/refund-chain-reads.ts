import type { RefundPayout } from '../domain/refunds/refund-transfer.js';
import { paysRefund, type SeenTransfer } from '../domain/refunds/refund-sightings.js';
import type { ChainRpc } from './rpc.js';

/** The refund watcher's reads of the chain: a transaction's transfers, and transfers that may pay a refund. */

/** keccak256("Transfer(address,address,uint256)"). */
const TRANSFER_TOPIC = '0xddf252ad1be2c89b69c2b068fc378daa952ba7f163c4a11628f55a4df523b3ef';

/** The receipt's block and outcome, or null while not mined. */
export async function receiptOf(rpc: ChainRpc, txHash: string) {
  const receipt = await rpc.receipt(txHash);
  return receipt
    ? { blockNumber: receipt.blockNumber, blockHash: receipt.blockHash, success: receipt.status === 'success' }
    : null;
}

/** The Transfer logs of a mined transaction, and its value as a coin transfer (log index -1). */
export async function transfersOf(
  rpc: ChainRpc,
  txHash: string,
  receipt: {
    blockNumber: bigint;
    blockHash: string;
    logs: ReadonlyArray<{ address: string; topics: readonly string[]; data: string; logIndex: string }>;
  },
): Promise<SeenTransfer[]> {
  const block = { blockNumber: receipt.blockNumber, blockHash: receipt.blockHash };
  const seen: SeenTransfer[] = receipt.logs.flatMap((log) => {
    const decoded = decodeTransfer(log);
    return decoded ? [{ txHash, logIndex: Number(BigInt(log.logIndex)), ...decoded, ...block }] : [];
  });
  const tx = await rpc.transaction(txHash);
  if (tx && tx.to && tx.value > 0n)
    seen.push({ txHash, logIndex: -1, token: null, from: tx.from, to: tx.to, baseUnits: tx.value, ...block });
  return seen;
}

function decodeTransfer(log: { address: string; topics: readonly string[]; data: string }) {
  if (
    log.topics.length !== 3 ||
    log.topics[0]?.toLowerCase() !== TRANSFER_TOPIC ||
    !/^0x[0-9a-fA-F]{64}$/.test(log.data)
  )
    return null;
  const address = (topic: string) => `0x${topic.slice(-40)}`.toLowerCase();
  return {
    token: log.address.toLowerCase(),
    from: address(log.topics[1]!),
    to: address(log.topics[2]!),
    baseUnits: BigInt(log.data),
  };
}

const addressTopic = (address: string) => `0x${address.toLowerCase().slice(2).padStart(64, '0')}`;

/** Token transfers to the refund's destination in [from, to] from one of `senders` that pay it. */
export async function scanLogs(rpc: ChainRpc, payout: RefundPayout, senders: string[], from: bigint, to: bigint) {
  const logs = await rpc.logs({
    fromBlock: from,
    toBlock: to,
    addresses: [payout.contractAddress!],
    topics: [TRANSFER_TOPIC, null, addressTopic(payout.destination)],
  });
  const paying: SeenTransfer[] = [];
  for (const log of logs) {
    const decoded = decodeTransfer(log);
    if (!decoded || log.removed) continue;
    const seen: SeenTransfer = {
      txHash: log.transactionHash.toLowerCase(),
      logIndex: Number(BigInt(log.logIndex)),
      ...decoded,
      blockNumber: BigInt(log.blockNumber),
      blockHash: log.blockHash.toLowerCase(),
    };
    if (paysRefund(payout, seen, senders)) paying.push(seen);
  }
  return paying;
}

/** Coin transfers in the whole blocks [from, to] from one of `senders` that pay the refund and succeeded. */
export async function scanBlocks(rpc: ChainRpc, payout: RefundPayout, senders: string[], from: bigint, to: bigint) {
  const paying: SeenTransfer[] = [];
  for (let number = from; number <= to; number += 1n) {
    const found = await rpc.blockTransactions(number);
    if (!found) break;
    for (const tx of found.transactions) {
      if (!tx.to) continue;
      const seen: SeenTransfer = {
        txHash: tx.hash,
        logIndex: -1,
        token: null,
        from: tx.from,
        to: tx.to,
        baseUnits: tx.value,
        blockNumber: found.block.number,
        blockHash: found.block.hash,
      };
      // A reverted transaction moved nothing.
      if (paysRefund(payout, seen, senders) && (await rpc.receipt(tx.hash))?.status === 'success') paying.push(seen);
    }
  }
  return paying;
}
