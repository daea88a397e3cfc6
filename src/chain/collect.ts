import { randomUUID } from 'node:crypto';
import {
  decodeEventLog,
  getAddress,
  parseAbi,
  type Hex,
  type PublicClient,
  type TransactionReceipt,
  type WalletClient,
} from 'viem';
import {
  collectCalldata,
  depositFactoryAddress,
  depositFactoryArtefact,
  MULTICALL3_ADDRESS,
} from './deposit-contracts.js';
import { NATIVE_COIN_DECIMALS, type Network } from '../domain/shared/networks.js';
import type { CollectedAsset, DepositCollection } from '../domain/organisations/deposit-collections.js';

/**
 * `kassa collect` (docs/operations.md#collecting-deposits): reads deposit addresses' holdings on chain, packs them
 * into collect transactions, and turns a mined collect's receipt into what it moved per session and asset.
 */

/** A deposit-mode session's address on the network and the wallet it leads to. */
export interface DepositAddress {
  readonly sessionId: string;
  readonly depositAddress: string;
  readonly destination: string;
}

/** One asset at a deposit address; `token` null for the native coin. */
export interface AssetBalance {
  readonly asset: string;
  readonly token: Hex | null;
  readonly decimals: number;
  readonly units: bigint;
}

export interface Holding extends DepositAddress {
  readonly balances: readonly AssetBalance[];
}

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

const ERC20 = parseAbi([
  'function balanceOf(address owner) view returns (uint256)',
  'event Transfer(address indexed from, address indexed to, uint256 value)',
]);
const COLLECTED_EVENT = parseAbi(['event Collected(address indexed deposit, address indexed destination)'])[0];
const MULTICALL3 = parseAbi(['function getEthBalance(address addr) view returns (uint256 balance)']);
/** Calls per Multicall3 request: well under what nodes accept for one eth_call. */
const CALLS_PER_REQUEST = 500;

/** The native coin's name in records: the network's asset, or `native` where it is none of Kassa's. */
const nativeAsset = (network: Network) => network.nativeAsset ?? 'native';

/** Multicall3 must be there: every public chain has it; the sandbox deploys it. */
async function requireMulticall3(client: PublicClient, network: Network): Promise<void> {
  const code = await client.getCode({ address: MULTICALL3_ADDRESS });
  if (code === undefined || code === '0x')
    throw new Error(`${network.slug} has no Multicall3 at ${MULTICALL3_ADDRESS}: balances cannot be read in batches`);
}

/**
 * What each address holds of the registry's tokens and the native coin at `blockNumber` (default latest), read in
 * batches of CALLS_PER_REQUEST; only the addresses holding something.
 */
export async function readHoldings(
  client: PublicClient,
  network: Network,
  addresses: readonly DepositAddress[],
  blockNumber?: bigint,
): Promise<Holding[]> {
  if (addresses.length === 0) return [];
  await requireMulticall3(client, network);
  const assets: Array<Omit<AssetBalance, 'units'>> = [
    ...network.tokens.map((token) => ({
      asset: token.ticker as string,
      token: getAddress(token.address),
      decimals: token.decimals,
    })),
    { asset: nativeAsset(network), token: null, decimals: NATIVE_COIN_DECIMALS },
  ];
  const calls = addresses.flatMap((address) =>
    assets.map((asset) =>
      asset.token
        ? {
            address: asset.token,
            abi: ERC20,
            functionName: 'balanceOf' as const,
            args: [address.depositAddress as Hex] as const,
          }
        : {
            address: MULTICALL3_ADDRESS as Hex,
            abi: MULTICALL3,
            functionName: 'getEthBalance' as const,
            args: [address.depositAddress as Hex] as const,
          },
    ),
  );
  const results: Array<{ status: 'success' | 'failure'; result?: unknown }> = [];
  for (let start = 0; start < calls.length; start += CALLS_PER_REQUEST) {
    const chunk = await client.multicall({
      contracts: calls.slice(start, start + CALLS_PER_REQUEST),
      multicallAddress: MULTICALL3_ADDRESS,
      allowFailure: true,
      batchSize: 0,
      ...(blockNumber === undefined ? {} : { blockNumber }),
    });
    results.push(...(chunk as typeof results));
  }
  const holdings: Holding[] = [];
  addresses.forEach((address, index) => {
    const balances = assets.flatMap((asset, offset) => {
      const result = results[index * assets.length + offset]!;
      // A token whose balanceOf fails holds nothing Kassa can move.
      const units = result.status === 'success' ? (result.result as bigint) : 0n;
      return units > 0n ? [{ ...asset, units }] : [];
    });
    if (balances.length > 0) holdings.push({ ...address, balances });
  });
  return holdings;
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

async function readNativeBalances(client: PublicClient, addresses: readonly string[], blockNumber: bigint) {
  const balances: bigint[] = [];
  for (let start = 0; start < addresses.length; start += CALLS_PER_REQUEST) {
    const chunk = await client.multicall({
      contracts: addresses.slice(start, start + CALLS_PER_REQUEST).map((address) => ({
        address: MULTICALL3_ADDRESS as Hex,
        abi: MULTICALL3,
        functionName: 'getEthBalance' as const,
        args: [address as Hex] as const,
      })),
      multicallAddress: MULTICALL3_ADDRESS,
      allowFailure: true,
      batchSize: 0,
      blockNumber,
    });
    for (const result of chunk) balances.push(result.status === 'success' ? (result.result as bigint) : 0n);
  }
  return balances;
}
