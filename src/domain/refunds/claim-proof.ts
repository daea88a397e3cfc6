import { getAddress, isAddress, verifyMessage, type Hex } from 'viem';
import { formatAmount, type Decimal } from '../shared/money.js';

/** What a payer signs to prove the refund's destination was chosen by the wallet that paid (EIP-191). */
export interface ClaimProofTerms {
  readonly refundId: string;
  readonly amount: Decimal;
  readonly asset: string;
  /** The network's name and its EIP-155 chain id, so a signature names one chain. */
  readonly networkName: string;
  readonly chainId: number;
  /** The destination as the payer entered it (compared lower-case). */
  readonly destination: string;
}

/**
 * The exact text the wallet shows and signs with personal_sign. Every line is checked by rebuilding it on the
 * server, so a signature for another refund, amount or address proves nothing here.
 */
export function claimProofMessage(terms: ClaimProofTerms): string {
  return [
    'Kassa refund claim',
    `Refund: ${terms.refundId}`,
    `Amount: ${formatAmount(terms.amount)} ${terms.asset}`,
    `Network: ${terms.networkName} (chain ${terms.chainId})`,
    `Send to: ${terms.destination.toLowerCase()}`,
  ].join('\n');
}

/** A personal_sign signature: 65 bytes (r, s, v), or a 64-byte EIP-2098 compact one. */
export function isProofSignature(value: unknown): value is Hex {
  return typeof value === 'string' && /^0x([0-9a-fA-F]{130}|[0-9a-fA-F]{128})$/.test(value);
}

/**
 * Which of the session's paying addresses signed `terms`, or null when none did. Only an externally owned account
 * can sign this way: a payment made through a contract or an exchange cannot be proved.
 */
export async function proofSigner(
  terms: ClaimProofTerms,
  signature: Hex,
  payers: readonly string[],
): Promise<string | null> {
  const message = claimProofMessage(terms);
  for (const payer of new Set(payers.map((address) => address.toLowerCase()))) {
    if (!isAddress(payer, { strict: false })) continue;
    const valid = await verifyMessage({ address: getAddress(payer), message, signature }).catch(() => false);
    if (valid) return payer;
  }
  return null;
}
