import type { BoundTxEvidence } from '../domain/payments/chain-ports.js';
import type { ChainRpc } from './rpc.js';
import { isErc20Transfer, topicAddress, transferValue } from './transfer-logs.js';

/**
 * What one network says about a transaction: receipt with every ERC-20 Transfer (any token, so a verdict can name
 * wrong assets), native value, sender and block time; or that it is pending or unknown.
 */
export async function readEvidence(rpc: ChainRpc, txHash: string, head?: bigint): Promise<BoundTxEvidence> {
  const receipt = await rpc.receipt(txHash);
  if (!receipt) {
    if (await rpc.transaction(txHash)) return { kind: 'pending' };
    return { kind: 'missing', foundOn: null };
  }
  const [tx, block, current] = await Promise.all([
    rpc.transaction(txHash),
    rpc.block(receipt.blockNumber),
    head === undefined ? rpc.blockNumber() : head,
  ]);
  // reorganised under us: look again next time
  if (!block || block.hash !== receipt.blockHash) return { kind: 'pending' };
  const transfers = receipt.logs.flatMap((log) => {
    const baseUnits = isErc20Transfer(log) ? transferValue(log.data) : null;
    if (baseUnits === null) return [];
    return [
      {
        tokenAddress: log.address.toLowerCase(),
        from: topicAddress(log.topics[1]!),
        to: topicAddress(log.topics[2]!),
        baseUnits,
        logIndex: Number(BigInt(log.logIndex)),
      },
    ];
  });
  return {
    kind: 'mined',
    reverted: receipt.status === 'reverted',
    blockNumber: receipt.blockNumber,
    blockHash: receipt.blockHash,
    blockTime: new Date(Number(block.timestamp) * 1000),
    confirmations: Number(current - receipt.blockNumber + 1n),
    transfers,
    nativeTo: tx?.to ?? null,
    nativeValue: tx?.value ?? 0n,
    sender: tx?.from ?? null,
  };
}
