import { randomBytes } from 'node:crypto';
import { Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startChainWatchers, type ChainWatchers } from '../../src/chain/chain-watcher.js';
import { TRANSFERS_PER_WRITE } from '../../src/chain/range-parts.js';
import { ensureDepositContracts, sandboxContractTransfers } from '../../src/chain/sandbox.js';
import { setPaymentPolicy } from '../../src/domain/organisations/organisations.js';
import { Decimal } from '../../src/domain/shared/money.js';
import { createLogger } from '../../src/logging.js';
import { checkoutRequest } from '../factories/checkout-request.js';
import { createMerchant } from '../factories/merchant.js';
import { startTestChain, WATCH_SETTINGS, type TestChain } from '../support/chain.js';
import { startTestKassa, type TestKassa } from '../support/kassa.js';
import { createSession } from '../support/rest-kassa.js';

/**
 * A scanned range holding more transfers than one write takes (TRANSFERS_PER_WRITE, src/chain/range-parts.ts) is
 * recorded in parts of whole blocks, each its own database transaction, and every transfer of it is credited. Against a
 * real anvil: three contract batches (one block each) of tiny USDT transfers to one deposit-mode session's address,
 * all found by one tick's single range. The parts are read from the scanner's "recorded transfers" log lines, one per
 * write.
 */

const BATCHES = 3; // 210 transfers: the first two batches make one part, the third another
const PER_BATCH = 70;
const UNITS = 10_000n; // 0.01 USDT (6 decimals): the session stays partly paid, so every transfer is credited to it

const lines: Array<Record<string, any>> = [];
const sink = new Writable({
  write(chunk, _encoding, done) {
    for (const line of String(chunk).split('\n').filter(Boolean)) lines.push(JSON.parse(line));
    done();
  },
});
let chain: TestChain;
let kassa: TestKassa;
let watchers: ChainWatchers;

beforeAll(async () => {
  chain = await startTestChain();
  // As `npm start` prepares the sandbox: the deposit factory and Multicall3 (contract batches, balance checks).
  await ensureDepositContracts(chain.url, chain.network);
  kassa = await startTestKassa({
    env: { KASSA_NETWORKS: 'local', KASSA_RPC_URLS_LOCAL: chain.url, KASSA_CONFIRMATIONS_LOCAL: '1' },
  });
  watchers = startChainWatchers(kassa.ctx, WATCH_SETTINGS, createLogger('info', sink));
}, 60_000);

afterAll(async () => {
  await watchers?.stop();
  await kassa?.close();
  await chain?.stop();
});

describe('a range with more transfers than one write', () => {
  it('is recorded in consecutive parts of whole blocks, none over TRANSFERS_PER_WRITE, and every transfer is credited', async () => {
    expect(BATCHES * PER_BATCH).toBeGreaterThan(TRANSFERS_PER_WRITE);
    const merchant = await createMerchant(kassa.ctx, { wallet: `0x${randomBytes(20).toString('hex')}` });
    await setPaymentPolicy(kassa.ctx, merchant.organisationId, { receiving: 'deposit' });
    const session = await createSession(
      kassa,
      merchant,
      checkoutRequest({ items: [{ name: 'Order', quantity: 1, unit_price: 100 }] }),
    );
    const sessionId = session.session_id as string;
    const address = session.wallet_address as string;
    await watchers.tick(); // the cursor at the head: the next tick scans the batches' blocks as one range
    lines.length = 0;

    const usdt = chain.network.tokens.find((token) => token.ticker === 'USDT')!.address;
    const blocks: bigint[] = [];
    for (let batch = 0; batch < BATCHES; batch += 1) {
      const transfers = Array.from({ length: PER_BATCH }, () => ({
        to: address,
        tokenAddress: usdt,
        baseUnits: UNITS,
      }));
      const sent = await sandboxContractTransfers(chain.url, 3, transfers, { chainId: chain.network.chainId });
      expect(sent.status).toBe('success');
      blocks.push(sent.blockNumber);
    }
    await watchers.tick();

    const payments = await kassa.ctx.store.chain.paymentsOfSession(sessionId);
    expect(payments).toHaveLength(BATCHES * PER_BATCH);
    expect(new Set(payments.map((p) => `${p.txHash}:${p.logIndex}`)).size).toBe(BATCHES * PER_BATCH);
    expect(payments.reduce((sum, p) => sum.plus(p.amount), new Decimal(0)).toFixed()).toBe(
      new Decimal(BATCHES * PER_BATCH).mul('0.01').toFixed(),
    );

    const parts = lines
      .filter((line) => line.msg === 'recorded transfers')
      .map((line) => ({ from: BigInt(line.fromBlock), to: BigInt(line.toBlock), transfers: line.transfers as number }));
    expect(parts.length).toBeGreaterThan(1);
    for (const part of parts) expect(part.transfers).toBeLessThanOrEqual(TRANSFERS_PER_WRITE);
    expect(parts.reduce((sum, part) => sum + part.transfers, 0)).toBe(BATCHES * PER_BATCH);
    parts.slice(1).forEach((part, index) => expect(part.from).toBe(parts[index]!.to + 1n));
    expect(parts[0]!.from).toBeLessThanOrEqual(blocks[0]!);
    expect(parts.at(-1)!.to).toBeGreaterThanOrEqual(blocks.at(-1)!);
  }, 60_000);
});
