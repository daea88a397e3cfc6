import type { Hex, PublicClient, TransactionReceipt, WalletClient } from 'viem';
import { collectCalldata, depositFactoryAddress } from './deposit-contracts.js';
import type { Holding } from './collect.js';

/** Packing deposit addresses' holdings into collect transactions under a gas limit, and sending them. */

/** One collect transaction: to the factory, for one destination. */
export interface CollectBatch {
  readonly destination: string;
  readonly holdings: readonly Holding[];
  readonly tokens: readonly Hex[];
  readonly to: Hex;
  readonly data: Hex;
  /** The node's estimate. */
  readonly gas: bigint;
}

/** Sessions whose collect the node estimates to learn a destination's gas per session. */
const PROBE_SESSIONS = 50;

/**
 * The holdings packed into collect transactions: one destination each, cut so each stays under `maxGas` by the node's
 * estimates. `from` is only the would-be sender (the estimate does not depend on it).
 */
export async function planCollect(
  client: PublicClient,
  holdings: readonly Holding[],
  maxGas: bigint,
  from: Hex,
): Promise<CollectBatch[]> {
  const byDestination = new Map<string, Holding[]>();
  for (const holding of holdings) {
    const group = byDestination.get(holding.destination) ?? [];
    group.push(holding);
    byDestination.set(holding.destination, group);
  }
  const batches: CollectBatch[] = [];
  for (const [destination, group] of byDestination) {
    const probe = await estimate(client, destination, group.slice(0, PROBE_SESSIONS), from);
    const perSession = probe.gas / BigInt(probe.holdings.length);
    const size = Math.max(1, Number(maxGas / (perSession > 0n ? perSession : 1n)));
    for (let start = 0; start < group.length; start += size)
      batches.push(...(await fit(client, destination, group.slice(start, start + size), maxGas, from)));
  }
  return batches;
}

async function estimate(
  client: PublicClient,
  destination: string,
  holdings: readonly Holding[],
  from: Hex,
): Promise<CollectBatch> {
  const tokens = [
    ...new Set(holdings.flatMap((holding) => holding.balances.flatMap((balance) => balance.token ?? []))),
  ];
  const to = depositFactoryAddress();
  const data = collectCalldata(
    destination,
    holdings.map((holding) => holding.sessionId),
    tokens,
  );
  const gas = await client.estimateGas({ account: from, to, data });
  return { destination, holdings, tokens, to, data, gas };
}

/** The batch if it fits; otherwise the share that should fit (gas grows about linearly) and the rest, each fitted. */
async function fit(
  client: PublicClient,
  destination: string,
  holdings: readonly Holding[],
  maxGas: bigint,
  from: Hex,
): Promise<CollectBatch[]> {
  const batch = await estimate(client, destination, holdings, from);
  if (batch.gas <= maxGas || holdings.length === 1) return [batch];
  const share = Number((BigInt(holdings.length) * maxGas) / batch.gas);
  const take = Math.min(holdings.length - 1, Math.max(1, share));
  return [
    ...(await fit(client, destination, holdings.slice(0, take), maxGas, from)),
    ...(await fit(client, destination, holdings.slice(take), maxGas, from)),
  ];
}

/** The gas a collect may use: `requested`, at most half the latest block's gas limit. */
export async function collectGasLimit(client: PublicClient, requested: bigint): Promise<bigint> {
  const block = await client.getBlock({ blockTag: 'latest' });
  const half = block.gasLimit / 2n;
  return requested < half ? requested : half;
}

/** Sends a batch from `wallet` and waits for it to be mined; the gas limit leaves a fifth above the estimate. */
export async function sendCollect(
  client: PublicClient,
  wallet: WalletClient,
  batch: CollectBatch,
): Promise<TransactionReceipt> {
  if (!wallet.account) throw new Error('sending a collect needs a signing account');
  const hash = await wallet.sendTransaction({
    account: wallet.account,
    chain: wallet.chain,
    to: batch.to,
    data: batch.data,
    gas: batch.gas + batch.gas / 5n,
  });
  return client.waitForTransactionReceipt({ hash, pollingInterval: 100 });
}
