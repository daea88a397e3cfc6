import { describe, expect, it } from 'vitest';
import { rangeParts, TRANSFERS_PER_WRITE } from '../../src/chain/range-parts.js';
import type { ChainTransfer } from '../../src/domain/payments/payment-ports.js';
import { Decimal } from '../../src/domain/shared/money.js';

/** A range with many transfers is recorded in parts of whole blocks (src/chain/block-scanner.ts). */

const transfer = (block: number, n: number): ChainTransfer => ({
  network: 'local',
  chainId: '31337',
  txHash: `0x${n.toString(16).padStart(64, '0')}`,
  logIndex: n,
  from: '0x1',
  to: '0x2',
  asset: 'USDT',
  tokenAddress: '0x3',
  baseUnits: 1n,
  amount: new Decimal(1),
  blockNumber: BigInt(block),
  blockHash: `0xhash${block}`,
  blockTime: new Date(0),
});

describe('rangeParts', () => {
  it('keeps a range of few transfers whole', () => {
    const transfers = [transfer(12, 1), transfer(11, 2)];
    expect(rangeParts(10n, 20n, '0xend', transfers)).toEqual([
      { fromBlock: 10n, toBlock: 20n, toBlockHash: '0xend', transfers },
    ]);
  });

  it('cuts after whole blocks, each part within the limit, the order kept and nothing lost', () => {
    // 150 transfers in each of blocks 11, 13 and 15, listed out of block order (token logs, then native).
    const transfers = [11, 13, 15].flatMap((block, b) =>
      Array.from({ length: 150 }, (_, i) => transfer(block, b * 1000 + i)),
    );
    const mixed = [...transfers.filter((_, i) => i % 2), ...transfers.filter((_, i) => i % 2 === 0)];
    const parts = rangeParts(10n, 20n, '0xend', mixed);
    expect(parts.map((p) => [p.fromBlock, p.toBlock, p.toBlockHash, p.transfers.length])).toEqual([
      [10n, 11n, '0xhash11', 150],
      [12n, 13n, '0xhash13', 150],
      [14n, 20n, '0xend', 150],
    ]);
    expect(parts.flatMap((p) => p.transfers)).toHaveLength(mixed.length);
    for (const part of parts) {
      expect(part.transfers).toEqual(mixed.filter((t) => part.transfers.includes(t)));
      expect(part.transfers.length).toBeLessThanOrEqual(TRANSFERS_PER_WRITE);
    }
  });

  it('never splits a block, however many transfers it holds', () => {
    const transfers = Array.from({ length: TRANSFERS_PER_WRITE + 50 }, (_, i) => transfer(15, i));
    const parts = rangeParts(10n, 20n, '0xend', [transfer(12, 9999), ...transfers]);
    expect(parts.map((p) => [p.fromBlock, p.toBlock, p.transfers.length])).toEqual([
      [10n, 12n, 1],
      [13n, 20n, TRANSFERS_PER_WRITE + 50],
    ]);
  });
});
