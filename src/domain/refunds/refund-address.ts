import { getAddress, isAddress } from 'viem';
import { invalid } from '../shared/errors.js';
import type { RefundTx } from './refund-ports.js';

const ZERO_ADDRESS = '0x0000000000000000000000000000000000000000';

/**
 * The problem with an address on an EVM network, or null: 0x and 40 hex digits, and when it mixes cases, a valid
 * EIP-55 checksum (a mistyped checksummed address is refused, not sent to).
 */
export function evmAddressProblem(address: string, field = 'destination'): string | null {
  const problem = evmAddressFormatProblem(address, field);
  if (problem) return problem;
  return address.toLowerCase() === ZERO_ADDRESS ? `${field} must not be the zero address` : null;
}

/** evmAddressProblem without the zero-address rule (a request schema checks the form; the rule refuses the rest). */
export function evmAddressFormatProblem(address: string, field = 'destination'): string | null {
  if (!/^0x[0-9a-fA-F]{40}$/.test(address)) return `${field} must be an address: 0x and 40 hexadecimal digits`;
  const body = address.slice(2);
  const mixed = body !== body.toLowerCase() && body !== body.toUpperCase();
  if (mixed && (!isAddress(address, { strict: true }) || getAddress(address) !== address))
    return `${field} has a wrong EIP-55 checksum (check its upper and lower case letters)`;
  return null;
}

/**
 * The destination a refund may be sent to on `network`, lower-case; refuses a malformed address (400
 * validation_failed) and the organisation's own wallet or deposit address (400 destination_refused).
 */
export async function acceptDestination(
  tx: Pick<RefundTx, 'isOwnAddress'>,
  organisationId: string,
  network: string,
  address: string,
): Promise<string> {
  const problem = evmAddressProblem(address);
  if (problem) throw invalid([problem], problem.includes('zero') ? 'destination_refused' : undefined);
  const lower = address.toLowerCase();
  if (await tx.isOwnAddress(organisationId, network, lower))
    throw invalid(
      [`destination ${lower} is the organisation's own wallet or deposit address on ${network}`],
      'destination_refused',
    );
  return lower;
}
