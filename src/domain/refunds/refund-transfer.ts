import { encodeFunctionData, parseAbi, type Hex } from 'viem';
import { eip681Uri } from '../payments/payment-uri.js';
import { Decimal, fromBaseUnits } from '../shared/money.js';
import { NATIVE_COIN_DECIMALS, type Network } from '../shared/networks.js';
import type { Refund } from './refund.js';

/** The one transfer that pays a refund: exactly these base units of this asset to this address. */
export interface RefundPayout {
  readonly network: string;
  readonly chainId: number;
  readonly asset: string;
  /** The ERC-20 contract, lower-case; null for the network's own coin. */
  readonly contractAddress: string | null;
  readonly decimals: number;
  /** Lower-case. */
  readonly destination: string;
  readonly baseUnits: bigint;
}

/** What a wallet signs: `to`, `data` and `value` of one transaction on `chainId`. */
export interface UnsignedRefundTransaction {
  readonly chainId: number;
  readonly to: string;
  readonly data: string;
  /** Wei, decimal. */
  readonly value: string;
}

const ERC20_TRANSFER = parseAbi(['function transfer(address to, uint256 amount) returns (bool)']);

/**
 * The transfer of `amount` of `asset` on `network` to `destination`. Base units are rounded down: a token with fewer
 * decimals than the amount's is never sent more than was refunded.
 */
export function refundTransfer(network: Network, asset: string, amount: Decimal, destination: string): RefundPayout {
  const token = network.nativeAsset === asset ? null : network.tokens.find((t) => t.ticker === asset);
  if (token === undefined) throw new Error(`${asset} is not carried on ${network.slug}`);
  const decimals = token ? token.decimals : NATIVE_COIN_DECIMALS;
  const scaled = amount.times(new Decimal(10).pow(decimals)).toDecimalPlaces(0, Decimal.ROUND_FLOOR);
  return {
    network: network.slug,
    chainId: network.chainId,
    asset,
    contractAddress: token ? token.address.toLowerCase() : null,
    decimals,
    destination: destination.toLowerCase(),
    baseUnits: BigInt(scaled.toFixed(0)),
  };
}

/** The EIP-681 request a wallet app scans or opens (the checkout page's QR format, docs/refund-claims.md). */
export function refundUri(transfer: RefundPayout): string {
  return eip681Uri({
    chainId: String(transfer.chainId),
    walletAddress: transfer.destination,
    contractAddress: transfer.contractAddress,
    decimals: transfer.decimals,
    amount: fromBaseUnits(transfer.baseUnits, transfer.decimals),
  });
}

/** The transaction for any wallet to sign: a token's `transfer(destination, units)`, or the coin sent as value. */
export function unsignedRefundTransaction(transfer: RefundPayout): UnsignedRefundTransaction {
  if (transfer.contractAddress === null)
    return { chainId: transfer.chainId, to: transfer.destination, data: '0x', value: transfer.baseUnits.toString() };
  const data = encodeFunctionData({
    abi: ERC20_TRANSFER,
    functionName: 'transfer',
    args: [transfer.destination as Hex, transfer.baseUnits],
  });
  return { chainId: transfer.chainId, to: transfer.contractAddress, data, value: '0' };
}

/** The transfer a refund with a destination must be paid by, from its recorded token, decimals and base units. */
export function payoutOf(
  refund: Pick<Refund, 'network' | 'chainId' | 'asset' | 'tokenAddress' | 'decimals' | 'baseUnits' | 'destination'>,
): RefundPayout {
  if (refund.destination === null) throw new Error('a refund without a destination has no transfer yet');
  return {
    network: refund.network,
    chainId: Number(refund.chainId),
    asset: refund.asset,
    contractAddress: refund.tokenAddress?.toLowerCase() ?? null,
    decimals: refund.decimals,
    destination: refund.destination.toLowerCase(),
    baseUnits: refund.baseUnits,
  };
}
