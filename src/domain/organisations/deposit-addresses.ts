import { hexToBytes, keccak256, type Hex } from 'viem';
import type { ReceivingMode } from './organisation-ports.js';

/**
 * A session's deposit address (docs/decisions/0028-deposit-addresses.md), derived without a node; the constants follow
 * from contracts/build/, and a unit test holds them equal to what src/chain/deposit-contracts.ts derives.
 */

/** DepositFactory's address on every chain (CREATE2 through the deterministic deployer, zero salt). */
export const DEPOSIT_FACTORY_ADDRESS: Hex = '0x4730DCEf7BC85A085978361479697f50F22b2625';
/** keccak256 of DepositSweeper's constant init code. */
export const SWEEPER_INIT_CODE_HASH: Hex = '0x8beeb59c3c61b61c6cf7fa4c497b8ad9733b53eb5795049e2a8ee34f77967d30';

const FACTORY_BYTES = hexToBytes(DEPOSIT_FACTORY_ADDRESS);
const INIT_CODE_HASH_BYTES = hexToBytes(SWEEPER_INIT_CODE_HASH);
const UTF8 = new TextEncoder();

/**
 * Lower-case; `destination` (the organisation's wallet at creation) is part of the CREATE2 salt, so the address leads
 * there and nowhere else. Keccaks over bytes, as this runs on create's hot path.
 */
export function sessionDepositAddress(destination: string, sessionId: string): string {
  // Money at an address made for the zero address would be burnt when collected.
  if (!/^0x[0-9a-fA-F]{40}$/.test(destination) || /^0x0{40}$/i.test(destination))
    throw new Error('a deposit address needs a destination wallet (20 bytes, not 0x0)');
  const encoded = new Uint8Array(64);
  encoded.set(hexToBytes(destination as Hex), 12);
  encoded.set(keccak256(UTF8.encode(sessionId), 'bytes'), 32);
  const create2 = new Uint8Array(85);
  create2[0] = 0xff;
  create2.set(FACTORY_BYTES, 1);
  create2.set(keccak256(encoded, 'bytes'), 21);
  create2.set(INIT_CODE_HASH_BYTES, 53);
  return `0x${keccak256(create2).slice(26)}`;
}

/**
 * How a new session receives money: its organisation's mode at creation and, in deposit mode, per network slug the
 * organisation's wallet its deposit address there was derived for (where that address's money can go, for good).
 */
export interface SessionReceiving {
  readonly mode: ReceivingMode;
  readonly destinations: Readonly<Record<string, string>>;
}

export const SHARED_WALLET_RECEIVING: SessionReceiving = { mode: 'shared_wallet', destinations: {} };
