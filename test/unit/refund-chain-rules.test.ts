import { describe, expect, it } from 'vitest';
import { privateKeyToAccount, generatePrivateKey } from 'viem/accounts';
import { decodeFunctionData, parseAbi, type Hex } from 'viem';
import { Decimal } from '../../src/domain/shared/money.js';
import type { Network } from '../../src/domain/shared/networks.js';
import { checkClaimAddress, claimAddressProblem } from '../../src/domain/refunds/claim-address.js';
import { claimProofMessage, isProofSignature, proofSigner } from '../../src/domain/refunds/claim-proof.js';
import { refundTransfer, refundUri, unsignedRefundTransaction } from '../../src/domain/refunds/refund-transfer.js';
import { paysRefund, refundChainStep } from '../../src/domain/refunds/refund-sightings.js';

const ETHEREUM: Network = {
  slug: 'ethereum',
  name: 'Ethereum',
  chainId: 1,
  nativeAsset: 'ETH',
  confirmations: 12,
  tokens: [{ ticker: 'USDT', address: '0xdAC17F958D2ee523a2206206994597C13D831ec7', decimals: 6 }],
  rpcUrls: [],
};
const TO = '0x70997970c51812dc3a010c7d01b50e0d17dc79c8';

describe('claim addresses', () => {
  it('takes 0x and 40 hex digits, lower-cased, and a correct EIP-55 checksum', () => {
    expect(checkClaimAddress(` ${TO} `)).toEqual({ ok: true, address: TO });
    expect(checkClaimAddress('0x70997970C51812dc3A010C7d01b50e0d17dc79C8')).toEqual({ ok: true, address: TO });
    expect(checkClaimAddress(TO.toUpperCase().replace('0X', '0x'))).toEqual({ ok: true, address: TO });
  });

  it('refuses a wrong checksum, the zero address, junk and an empty entry', () => {
    expect(checkClaimAddress('0x70997970C51812dc3A010C7d01b50e0d17dc79c8')).toMatchObject({ reason: 'bad_checksum' });
    expect(checkClaimAddress(`0x${'0'.repeat(40)}`)).toMatchObject({ reason: 'zero_address' });
    expect(checkClaimAddress('0x1234')).toMatchObject({ reason: 'not_hex' });
    expect(checkClaimAddress('   ')).toMatchObject({ reason: 'empty' });
  });

  it("names another network's address format", () => {
    const cases: Array<[string, string]> = [
      ['bc1qar0srrr7xfkvy5l643lydnw9re59gtzzwf5mdq', 'bitcoin'],
      ['1BvBMSEYstWetqTFn5Au4m4GFg7xJaNVN2', 'bitcoin'],
      ['TLsV52sRDL79HXGGm9yzwKibb6BeruhUzy', 'tron'],
      ['7EcDhSYGxXyscszYEp35KHN8vvw3svAuLKTzXwCFLtV', 'solana'],
      ['vitalik.eth', 'ens'],
    ];
    for (const [entry, format] of cases) {
      const check = checkClaimAddress(entry);
      expect(check, entry).toMatchObject({ ok: false, reason: 'foreign_format', format });
      if (!check.ok) expect(claimAddressProblem(check, 'Ethereum')).toMatch(/this refund is sent on Ethereum/);
    }
  });
});

describe('claim proof (EIP-191)', () => {
  const payer = privateKeyToAccount(generatePrivateKey());
  const terms = {
    refundId: '0b6f2f5e-4c1d-4b7e-9a53-2f1f4f7a9c10',
    amount: new Decimal('0.5'),
    asset: 'ETH',
    networkName: 'Ethereum',
    chainId: 1,
    destination: TO,
  };

  it('names the refund, the amount with 8 digits, the chain and the destination', () => {
    expect(claimProofMessage(terms)).toBe(
      'Kassa refund claim\nRefund: 0b6f2f5e-4c1d-4b7e-9a53-2f1f4f7a9c10\nAmount: 0.50000000 ETH\n' +
        `Network: Ethereum (chain 1)\nSend to: ${TO}`,
    );
  });

  it('recovers the paying wallet that signed, and no other', async () => {
    const signature = await payer.signMessage({ message: claimProofMessage(terms) });
    expect(isProofSignature(signature)).toBe(true);
    const stranger = privateKeyToAccount(generatePrivateKey()).address;
    expect(await proofSigner(terms, signature, [stranger, payer.address.toLowerCase()])).toBe(
      payer.address.toLowerCase(),
    );
    expect(await proofSigner(terms, signature, [stranger])).toBeNull();
  });

  it('proves nothing for another destination, amount or refund', async () => {
    const signature = await payer.signMessage({ message: claimProofMessage(terms) });
    const payers = [payer.address];
    expect(await proofSigner({ ...terms, destination: payer.address }, signature, payers)).toBeNull();
    expect(await proofSigner({ ...terms, amount: new Decimal('0.50000001') }, signature, payers)).toBeNull();
    expect(await proofSigner({ ...terms, refundId: terms.refundId.replace('0b', '0c') }, signature, payers)).toBeNull();
    expect(isProofSignature('0x1234')).toBe(false);
  });
});

describe('the refund transfer', () => {
  it('sends a token with transfer(to, units), base units rounded down', () => {
    const transfer = refundTransfer(ETHEREUM, 'USDT', new Decimal('12.3456789'), TO.toUpperCase().replace('0X', '0x'));
    expect(transfer).toMatchObject({ baseUnits: 12_345_678n, destination: TO, decimals: 6 });
    const tx = unsignedRefundTransaction(transfer);
    expect(tx).toMatchObject({ chainId: 1, to: '0xdac17f958d2ee523a2206206994597c13d831ec7', value: '0' });
    const call = decodeFunctionData({
      abi: parseAbi(['function transfer(address to, uint256 amount) returns (bool)']),
      data: tx.data as Hex,
    });
    expect(call.args).toEqual([expect.stringMatching(new RegExp(TO, 'i')), 12_345_678n]);
    expect(refundUri(transfer)).toBe(
      `ethereum:0xdac17f958d2ee523a2206206994597c13d831ec7@1/transfer?address=${TO}&uint256=12345678`,
    );
  });

  it('sends the coin as value', () => {
    const transfer = refundTransfer(ETHEREUM, 'ETH', new Decimal('0.01'), TO);
    expect(unsignedRefundTransaction(transfer)).toEqual({ chainId: 1, to: TO, data: '0x', value: '10000000000000000' });
    expect(refundUri(transfer)).toBe(`ethereum:${TO}@1?value=10000000000000000`);
    expect(() => refundTransfer(ETHEREUM, 'BNB', new Decimal(1), TO)).toThrow(/not carried/);
  });

  it('matches exactly that amount of that asset to that address, from the senders asked', () => {
    const expected = refundTransfer(ETHEREUM, 'USDT', new Decimal('5'), TO);
    const seen = {
      txHash: '0xab',
      logIndex: 0,
      token: expected.contractAddress,
      from: '0x1111111111111111111111111111111111111111',
      to: TO,
      baseUnits: 5_000_000n,
      blockNumber: 10n,
      blockHash: '0xbb',
    };
    expect(paysRefund(expected, seen, ['0x1111111111111111111111111111111111111111'])).toBe(true);
    expect(paysRefund(expected, seen, ['0x2222222222222222222222222222222222222222'])).toBe(false);
    expect(paysRefund(expected, seen, 'any')).toBe(true);
    expect(paysRefund(expected, { ...seen, baseUnits: 5_000_001n }, 'any')).toBe(false);
    expect(paysRefund(expected, { ...seen, token: null }, 'any')).toBe(false);
    expect(paysRefund(expected, { ...seen, to: seen.from }, 'any')).toBe(false);
  });
});

describe('a refund transfer against the chain', () => {
  const base = { head: 100n, confirmations: 3 };
  const receipt = { blockNumber: 99n, blockHash: '0xaa', success: true };

  it("waits, is mined, then confirmed after the network's confirmations", () => {
    expect(refundChainStep({ ...base, recorded: null, chainHash: null, receipt: null })).toEqual({ kind: 'wait' });
    expect(refundChainStep({ ...base, recorded: null, chainHash: null, receipt })).toEqual({
      kind: 'mined',
      blockNumber: 99n,
      blockHash: '0xaa',
    });
    const recorded = { blockNumber: 99n, blockHash: '0xaa' };
    expect(refundChainStep({ ...base, recorded, chainHash: '0xaa', receipt })).toEqual({ kind: 'wait' });
    expect(refundChainStep({ ...base, head: 101n, recorded, chainHash: '0xaa', receipt })).toMatchObject({
      kind: 'confirm',
    });
  });

  it('unmines a transfer whose block left the chain or whose receipt moved or vanished', () => {
    const recorded = { blockNumber: 99n, blockHash: '0xaa' };
    expect(refundChainStep({ ...base, recorded, chainHash: '0xcc', receipt })).toEqual({ kind: 'unmine' });
    expect(refundChainStep({ ...base, recorded, chainHash: null, receipt: null })).toEqual({ kind: 'unmine' });
    expect(refundChainStep({ ...base, recorded, chainHash: '0xaa', receipt: null })).toEqual({ kind: 'unmine' });
    const moved = { ...receipt, blockNumber: 100n, blockHash: '0xdd' };
    expect(refundChainStep({ ...base, recorded, chainHash: '0xaa', receipt: moved })).toEqual({ kind: 'unmine' });
  });
});
