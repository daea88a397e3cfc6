import { getAddress, parseAbi, type Hex, type PublicClient } from 'viem';
import { MULTICALL3_ADDRESS } from './deposit-contracts.js';
import { NATIVE_COIN_DECIMALS, type Network } from '../domain/shared/networks.js';

/**
 * `kassa collect` (docs/operations.md#collecting-deposits): reads deposit addresses' holdings on chain; packing and
 * sending are in collect-batches.ts, what a mined collect moved in collect-receipt.ts.
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

export const ERC20 = parseAbi([
  'function balanceOf(address owner) view returns (uint256)',
  'event Transfer(address indexed from, address indexed to, uint256 value)',
]);
const MULTICALL3 = parseAbi(['function getEthBalance(address addr) view returns (uint256 balance)']);
/** Calls per Multicall3 request: well under what nodes accept for one eth_call. */
const CALLS_PER_REQUEST = 500;

/** The native coin's name in records: the network's asset, or `native` where it is none of Kassa's. */
export const nativeAsset = (network: Network) => network.nativeAsset ?? 'native';

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

/** The native coin at each of `addresses` at `blockNumber`, in their order (0 where the read fails). */
export async function readNativeBalances(
  client: PublicClient,
  addresses: readonly string[],
  blockNumber: bigint,
): Promise<bigint[]> {
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
