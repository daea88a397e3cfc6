import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Decimal } from '../../src/domain/shared/money.js';
import type { ChainTransfer } from '../../src/domain/payments/payment-ports.js';
import { checkoutRequest, txHash } from '../factories/checkout-request.js';
import { createMerchant } from '../factories/merchant.js';
import { startTestKassa, type TestKassa } from '../support/kassa.js';
import { createSession } from '../support/rest-kassa.js';

/**
 * docs/payment-rules.md, rule 4 (shared amounts), at the store (src/db/payments/amount-claims.ts) against a real database: who
 * may bind a transfer of an amount two sessions ask for (amountContenders) and whose it is by amount
 * (exactAmountOwner), by when the transfer was mined. A holder counts only while its claim covers the block: held
 * then (released after, or not yet) and, for a claim handed over from another session, held since before it.
 */
let kassa: TestKassa;
beforeAll(async () => {
  kassa = await startTestKassa();
});
afterAll(() => kassa?.close());

const NETWORK = 'contenders-test';
const T0 = Date.now();
const at = (seconds: number) => new Date(T0 + seconds * 1000);
let amounts = 0;

async function sessions(count: number) {
  const merchant = await createMerchant(kassa.ctx);
  const ids: string[] = [];
  for (let i = 0; i < count; i++)
    ids.push((await createSession(kassa, merchant, checkoutRequest())).session_id as string);
  return { wallet: merchant.wallet.toLowerCase(), ids };
}

function transferAt(wallet: string, amount: string, seconds: number): ChainTransfer {
  return {
    network: NETWORK,
    chainId: '31337',
    txHash: txHash(seconds + 1000),
    logIndex: 0,
    from: `0x${'1'.repeat(40)}`,
    to: wallet,
    asset: 'USDT',
    tokenAddress: `0x${'2'.repeat(40)}`,
    baseUnits: 0n,
    amount: new Decimal(amount),
    blockNumber: 1n,
    blockHash: txHash(1),
    blockTime: at(seconds),
  };
}

/** The columns a claim and a share of `amount` on `wallet` held by `session` have in common. */
const amountOf = (row: { wallet: string; amount: string; session: string }) => ({
  network: NETWORK,
  walletAddress: row.wallet,
  asset: 'USDT',
  amount: row.amount,
  sessionId: row.session,
});

async function claim(row: { wallet: string; amount: string; session: string; released?: Date; heldSince?: Date }) {
  await kassa.runtime.db.prisma.paymentAmountClaim.create({
    data: { ...amountOf(row), createdAt: at(-10), releasedAt: row.released ?? null, heldSince: row.heldSince ?? null },
  });
}

async function share(row: { wallet: string; amount: string; session: string; created: Date; released?: Date }) {
  await kassa.runtime.db.prisma.paymentAmountShare.create({
    data: { ...amountOf(row), createdAt: row.created, releasedAt: row.released ?? null },
  });
}

const judged = (transfer: ChainTransfer) =>
  kassa.ctx.store.transaction(async (tx) => ({
    contenders: (await tx.amountContenders(transfer)).sort(),
    owner: await tx.exactAmountOwner(transfer),
  }));

const nextAmount = () => `777.${String(++amounts).padStart(8, '0')}`;

describe('a shared amount: contenders and owner by block time', () => {
  it('the holder contends only for blocks its claim covers: not after its release', async () => {
    const { wallet, ids } = await sessions(2);
    const [holder, sharer] = ids as [string, string];
    const amount = nextAmount();
    await claim({ wallet, amount, session: holder, released: at(60) });
    await share({ wallet, amount, session: sharer, created: at(5) });

    expect(await judged(transferAt(wallet, amount, 30))).toEqual({ contenders: [holder, sharer].sort(), owner: null });
    // Mined after the holder gave the amount up: only the sharer asks for it.
    expect(await judged(transferAt(wallet, amount, 90))).toEqual({ contenders: [sharer], owner: null });
  });

  it('a claim handed over contends, and owns, only from held_since on', async () => {
    const { wallet, ids } = await sessions(3);
    const [heir, sharer, alone] = ids as [string, string, string];
    const shared = nextAmount();
    await claim({ wallet, amount: shared, session: heir, heldSince: at(60) });
    await share({ wallet, amount: shared, session: sharer, created: at(5) });
    expect(await judged(transferAt(wallet, shared, 30))).toEqual({ contenders: [sharer], owner: null });
    expect(await judged(transferAt(wallet, shared, 90))).toEqual({ contenders: [heir, sharer].sort(), owner: null });

    // Not shared: no contenders, and the heir owns what was mined from held_since on, not before.
    const own = nextAmount();
    await claim({ wallet, amount: own, session: alone, heldSince: at(60) });
    expect(await judged(transferAt(wallet, own, 30))).toEqual({ contenders: [], owner: null });
    expect(await judged(transferAt(wallet, own, 90))).toEqual({ contenders: [], owner: alone });
  });

  it('a share counts from its writing (less the clock skew) until its release', async () => {
    const { wallet, ids } = await sessions(2);
    const [holder, sharer] = ids as [string, string];
    const amount = nextAmount();
    await claim({ wallet, amount, session: holder });
    await share({ wallet, amount, session: sharer, created: at(100), released: at(200) });

    // Mined well before the share was written: the holder's alone.
    expect(await judged(transferAt(wallet, amount, 30))).toEqual({ contenders: [], owner: holder });
    expect(await judged(transferAt(wallet, amount, 150))).toEqual({ contenders: [holder, sharer].sort(), owner: null });
    // Mined after the share's release: the holder's again.
    expect(await judged(transferAt(wallet, amount, 250))).toEqual({ contenders: [], owner: holder });
  });
});
