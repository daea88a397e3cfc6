import { toBaseUnitsCeil, type Decimal } from '../shared/money.js';

/**
 * EIP-681 payment requests for the hosted checkout page's QR code. Pure: the
 * amount is a Decimal and base units a bigint, never a float.
 */

/** What a wallet needs to pay one asset on one chain. */
export interface PaymentRequest {
  /** EIP-155 chain id, decimal. */
  readonly chainId: string;
  /** The merchant's receiving wallet on that chain. */
  readonly walletAddress: string;
  /** The ERC-20 contract; null for the chain's own coin (sent as value). */
  readonly contractAddress: string | null;
  readonly decimals: number;
  /** What the payer owes in the asset (8 fractional digits on the wire). */
  readonly amount: Decimal;
}

/** amount × 10^decimals, rounded up so a 6-decimal token never pays less than the quote. */
export function paymentBaseUnits(request: Pick<PaymentRequest, 'amount' | 'decimals'>): bigint {
  return toBaseUnitsCeil(request.amount, request.decimals);
}

/**
 * `ethereum:<token>@<chainId>/transfer?address=<wallet>&uint256=<units>` for a token,
 * `ethereum:<wallet>@<chainId>?value=<wei>` for the native coin; `baseUnits` when the caller has them already.
 */
export function eip681Uri(request: PaymentRequest, baseUnits: bigint = paymentBaseUnits(request)): string {
  const units = baseUnits.toString();
  if (request.contractAddress) {
    const token = `${request.contractAddress}@${request.chainId}`;
    return `ethereum:${token}/transfer?address=${request.walletAddress}&uint256=${units}`;
  }
  return `ethereum:${request.walletAddress}@${request.chainId}?value=${units}`;
}
