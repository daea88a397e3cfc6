import { randomUUID } from 'node:crypto';
import { decodeEventLog, parseAbi, type Hex, type PublicClient, type TransactionReceipt } from 'viem';
import { depositFactoryAddress, depositFactoryArtefact } from './deposit-contracts.js';
import { NATIVE_COIN_DECIMALS, type Network } from '../domain/shared/networks.js';
import type { CollectedAsset, DepositCollection } from '../domain/organisations/deposit-collections.js';
import { ERC20, nativeAsset, readNativeBalances, type DepositAddress } from './collect.js';

const COLLECTED_EVENT = parseAbi(['event Collected(address indexed deposit, address indexed destination)'])[0];

/**
 * What a mined collect moved per session and asset, from its receipt (native coin: balance in the block before); only
 * `sessionsAt`'s deposit-mode sessions count. Null when it moved nothing of the organisation's or reverted.
 */
export async function collectionFromReceipt(
  client: PublicClient,
  network: Network,
  organisationId: string,
  receipt: TransactionReceipt,
  sessionsAt: (addresses: string[]) => Promise<DepositAddress[]>,
): Promise<DepositCollection | null> {
  if (receipt.status !== 'success') return null;
  const factory = depositFactoryAddress().toLowerCase();
  const factoryAbi = depositFactoryArtefact().abi;
  const collected = new Map<string, string>(); // deposit address → destination
  for (const log of receipt.logs) {
    if (log.address.toLowerCase() !== factory) continue;
    try {
      const event = decodeEventLog({ abi: factoryAbi, data: log.data, topics: log.topics });
      if (event.eventName !== 'Collected') continue;
      const args = event.args as unknown as { deposit: Hex; destination: Hex };
      collected.set(args.deposit.toLowerCase(), args.destination.toLowerCase());
    } catch {
      // Another event of the factory: nothing to record.
    }
  }
  if (collected.size === 0) return null;
  const sessions = await sessionsAt([...collected.keys()]);
  const known = sessions.filter((session) => collected.get(session.depositAddress) === session.destination);
  if (known.length === 0) return null;
  const bySession = new Map(known.map((session) => [session.depositAddress, session]));
  const items: CollectedAsset[] = [];

  const tokens = new Map(network.tokens.map((token) => [token.address.toLowerCase(), token]));
  for (const log of receipt.logs) {
    const token = tokens.get(log.address.toLowerCase());
    if (!token) continue;
    try {
      const event = decodeEventLog({ abi: ERC20, data: log.data, topics: log.topics, eventName: 'Transfer' });
      const session = bySession.get(event.args.from.toLowerCase());
      if (!session || event.args.to.toLowerCase() !== session.destination || event.args.value === 0n) continue;
      items.push({
        sessionId: session.sessionId,
        depositAddress: session.depositAddress,
        asset: token.ticker,
        tokenAddress: token.address.toLowerCase(),
        decimals: token.decimals,
        baseUnits: event.args.value,
      });
    } catch {
      // Not a Transfer.
    }
  }
  const before = await readNativeBalances(
    client,
    known.map((session) => session.depositAddress),
    receipt.blockNumber - 1n,
  );
  const sweptEarlier = await collectedEarlierInBlock(
    client,
    receipt,
    known.map((session) => session.depositAddress),
  );
  known.forEach((session, index) => {
    // What the block before left there was taken by that earlier collect, not by this one.
    if (before[index]! > 0n && !sweptEarlier.has(session.depositAddress))
      items.push({
        sessionId: session.sessionId,
        depositAddress: session.depositAddress,
        asset: nativeAsset(network),
        tokenAddress: null,
        decimals: NATIVE_COIN_DECIMALS,
        baseUnits: before[index]!,
      });
  });
  if (items.length === 0) return null;
  const block = await client.getBlock({ blockNumber: receipt.blockNumber });
  return {
    id: randomUUID(),
    organisationId,
    network: network.slug,
    chainId: String(network.chainId),
    destination: known[0]!.destination,
    txHash: receipt.transactionHash.toLowerCase(),
    blockNumber: receipt.blockNumber,
    gasUsed: receipt.gasUsed,
    collectedAt: new Date(Number(block.timestamp) * 1000),
    items,
  };
}

/** The addresses a collect earlier in the same block collected (two senders of one batch, say). */
async function collectedEarlierInBlock(
  client: PublicClient,
  receipt: TransactionReceipt,
  addresses: readonly string[],
): Promise<Set<string>> {
  const logs = await client.getLogs({
    address: depositFactoryAddress(),
    event: COLLECTED_EVENT,
    args: { deposit: addresses as Hex[] },
    fromBlock: receipt.blockNumber,
    toBlock: receipt.blockNumber,
  });
  return new Set(
    logs
      .filter((log) => log.transactionIndex !== null && log.transactionIndex < receipt.transactionIndex)
      .map((log) => log.args.deposit!.toLowerCase()),
  );
}
