import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import {
  DEPOSIT_FACTORY_ADDRESS,
  SWEEPER_INIT_CODE_HASH,
  sessionDepositAddress,
} from '../../src/domain/organisations/deposit-addresses.js';
import { depositAddress, depositFactoryAddress, sweeperInitCodeHash } from '../../src/chain/deposit-contracts.js';

describe("the domain's deposit addresses", () => {
  it('use the factory address and sweeper init code hash the committed artefacts give', () => {
    expect(DEPOSIT_FACTORY_ADDRESS).toBe(depositFactoryAddress());
    expect(SWEEPER_INIT_CODE_HASH).toBe(sweeperInitCodeHash());
  });

  it('are the addresses the chain module derives, lower-case, one per wallet and session', () => {
    const wallet = '0x70997970c51812dc3a010c7d01b50e0d17dc79c8';
    const id = '4a4d3c0e-7f43-4c8b-9a53-0d3f5b2b8f11';
    expect(sessionDepositAddress(wallet, id)).toBe(depositAddress(wallet, id).toLowerCase());
    expect(sessionDepositAddress(wallet, id)).not.toBe(sessionDepositAddress(wallet, `${id.slice(0, -1)}2`));
    expect(sessionDepositAddress(wallet, id)).not.toBe(sessionDepositAddress(`0x${'ab'.repeat(20)}`, id));
    expect(() => sessionDepositAddress(`0x${'0'.repeat(40)}`, id)).toThrow(/destination/);
    // Any id, any case of the wallet: the same as the chain module's (viem's CREATE2) derivation.
    const checksummed = '0x70997970C51812dc3A010C7d01b50e0d17dc79C8';
    for (let i = 0; i < 20; i++) {
      const any = randomUUID();
      expect(sessionDepositAddress(checksummed, any)).toBe(depositAddress(checksummed, any).toLowerCase());
    }
  });
});
