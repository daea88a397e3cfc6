import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import {
  DEPOSIT_FACTORY_ADDRESS,
  SWEEPER_INIT_CODE_HASH,
  sessionDepositAddress,
} from '../../src/domain/organisations/deposit-addresses.js';
import { fundsCollectedSchema, toFundsCollectedView } from '../../src/domain/organisations/deposit-collections.js';
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

describe('the funds.collected view', () => {
  it('shows each amount rounded down to 8 digits beside its exact base units, and validates against its schema', () => {
    const view = toFundsCollectedView({
      id: '4a4d3c0e-7f43-4c8b-9a53-0d3f5b2b8f11',
      organisationId: '0b0e2a61-3a57-4f3c-9d4e-9b2f6c1d2e3f',
      network: 'base',
      chainId: '8453',
      destination: '0x70997970c51812dc3a010c7d01b50e0d17dc79c8',
      txHash: `0x${'ab'.repeat(32)}`,
      blockNumber: 123n,
      gasUsed: 48_211n,
      collectedAt: new Date('2026-12-06T12:00:00.000Z'),
      items: [
        {
          sessionId: '4a4d3c0e-7f43-4c8b-9a53-0d3f5b2b8f12',
          depositAddress: '0x1111111111111111111111111111111111111111',
          asset: 'ETH',
          tokenAddress: null,
          decimals: 18,
          baseUnits: 123_456_789_999_999_999n,
        },
        {
          sessionId: '4a4d3c0e-7f43-4c8b-9a53-0d3f5b2b8f12',
          depositAddress: '0x1111111111111111111111111111111111111111',
          asset: 'USDT',
          tokenAddress: '0x2222222222222222222222222222222222222222',
          decimals: 6,
          baseUnits: 12_500_000n,
        },
      ],
    });
    expect(view.collected.map((item) => [item.amount, item.base_units])).toEqual([
      ['0.12345678', '123456789999999999'],
      ['12.50000000', '12500000'],
    ]);
    expect(view).toMatchObject({ block_number: '123', gas_used: '48211', collected_at: '2026-12-06T12:00:00.000Z' });
    expect(fundsCollectedSchema.parse(view)).toEqual(view);
  });
});
