import { getAddress, isAddress } from 'viem';

/** What a payer's entry looks like when it is not an address of this network (said in words on the page). */
export type ForeignAddressFormat = 'bitcoin' | 'solana' | 'tron' | 'litecoin' | 'cosmos' | 'ens';

/** An address the claim page may take, or why not. */
export type ClaimAddressCheck =
  | { readonly ok: true; readonly address: string }
  | {
      readonly ok: false;
      readonly reason: 'empty' | 'foreign_format' | 'not_hex' | 'bad_checksum' | 'zero_address';
      readonly format?: ForeignAddressFormat;
    };

const FOREIGN_FORMATS: ReadonlyArray<[ForeignAddressFormat, RegExp]> = [
  ['ens', /^[a-z0-9-]+(\.[a-z0-9-]+)*\.eth$/i],
  ['bitcoin', /^(bc1[02-9ac-hj-np-z]{11,71}|[13][1-9A-HJ-NP-Za-km-z]{25,34})$/],
  ['litecoin', /^(ltc1[02-9ac-hj-np-z]{11,71}|[LM][1-9A-HJ-NP-Za-km-z]{26,33})$/],
  ['tron', /^T[1-9A-HJ-NP-Za-km-z]{33}$/],
  ['cosmos', /^[a-z]{2,10}1[02-9ac-hj-np-z]{38,58}$/],
  ['solana', /^[1-9A-HJ-NP-Za-km-z]{32,44}$/],
];

/**
 * Checks an entry for an EVM network: 0x and 40 hex digits, its EIP-55 checksum when written in mixed case, not the
 * zero address. Another chain's format is named, so the page can say which network the address belongs to.
 */
export function checkClaimAddress(entry: string): ClaimAddressCheck {
  const text = entry.trim();
  if (text === '') return { ok: false, reason: 'empty' };
  if (!/^0x[0-9a-fA-F]{40}$/.test(text)) {
    const foreign = FOREIGN_FORMATS.find(([, pattern]) => pattern.test(text));
    return foreign ? { ok: false, reason: 'foreign_format', format: foreign[0] } : { ok: false, reason: 'not_hex' };
  }
  const mixed = text.slice(2) !== text.slice(2).toLowerCase() && text.slice(2) !== text.slice(2).toUpperCase();
  if (mixed && !isAddress(text, { strict: true })) return { ok: false, reason: 'bad_checksum' };
  if (/^0x0{40}$/.test(text)) return { ok: false, reason: 'zero_address' };
  return { ok: true, address: getAddress(text).toLowerCase() };
}

const FORMAT_NAMES: Record<ForeignAddressFormat, string> = {
  bitcoin: 'a Bitcoin address',
  solana: 'a Solana address',
  tron: 'a Tron address',
  litecoin: 'a Litecoin address',
  cosmos: 'a Cosmos-style address',
  ens: 'an ENS name, not an address',
};

/** The refusal in words, for the API answer (the page shows its own catalogue's text). */
export function claimAddressProblem(check: Exclude<ClaimAddressCheck, { ok: true }>, networkName: string): string {
  switch (check.reason) {
    case 'empty':
      return `address must be given: an address on ${networkName}`;
    case 'foreign_format':
      return (
        `address looks like ${FORMAT_NAMES[check.format!]}; this refund is sent on ${networkName}, which needs an ` +
        `address of 0x and 40 hexadecimal digits`
      );
    case 'not_hex':
      return `address must be an address on ${networkName}: 0x and 40 hexadecimal digits`;
    case 'bad_checksum':
      return 'address has a wrong checksum (its mix of capital letters): check it was copied whole';
    case 'zero_address':
      return 'address is the zero address: nobody can spend what is sent there';
  }
}
