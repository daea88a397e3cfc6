import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Decimal } from '../../src/domain/shared/money.js';
import { requoteDueSessions } from '../../src/domain/sessions/requote-sessions.js';
import { checkoutRequest } from '../factories/checkout-request.js';
import { createMerchant } from '../factories/merchant.js';
import { startChainKassa, startTestChain, type ChainKassa, type TestChain } from '../support/chain.js';
import { fixedRates } from '../support/fixed-rates.js';
import { controllableClock, createSession } from '../support/rest-kassa.js';

/**
 * Found by the second review: a paid session a reorganisation reopens was re-priced before its
 * transfer was re-included (a reversed payment did not count as payment activity, and the rolled
 * back scan looked caught up), so the revived exact payment was judged against the new, higher
 * amount and the session ended partial. A session whose payment was seen keeps its quote
 * (docs/payment-rules.md, rule 7), reversed or not. Against a real anvil.
 */

const MIN = 60_000;
let chain: TestChain;
let node: ChainKassa;
const time = controllableClock();
const { rates } = fixedRates();
beforeAll(async () => {
  chain = await startTestChain();
  node = await startChainKassa(chain.url, {
    clock: time.clock,
    override: { rates },
    env: { KASSA_QUOTE_TTL_MINUTES: '30', KASSA_CONFIRMATIONS_LOCAL: '1' },
  });
}, 90_000);
afterAll(async () => {
  await node?.close();
  await chain?.stop();
});

const lamp = checkoutRequest({ items: [{ name: 'Lamp', quantity: 1, unit_price: 100 }] });
const read = async (id: string) => (await node.kassa.http.get(`/checkout-sessions/${id}`)).body;
const nextBlockAt = (at: number) => chain.rpc('evm_setNextBlockTimestamp', [Math.floor(at / 1000)]);
const scanAt = async (at: number) => {
  time.freeze(at);
  await node.watchers.tick();
};

describe('a session reopened by a reorg, re-priced before its transfer is re-included', () => {
  it('keeps its quote, and its re-included exact payment pays it', async () => {
    const t0 = Date.now() + 60 * MIN;
    time.freeze(t0);
    const merchant = await createMerchant(node.kassa.ctx, { wallet: `0x${randomBytes(20).toString('hex')}` });
    const body = await createSession(node.kassa, merchant, lamp);
    const id = body.session_id as string;
    const usdt = (body.crypto_options as Array<{ ticker: string; amount: string }>).find(
      (o) => o.ticker === 'USDT',
    )!.amount;
    const raw = await chain.signPayment(merchant.wallet, 'USDT', usdt, { from: 8 });
    const snapshot = await chain.snapshot();
    // Paid near the end of the quote's life.
    await nextBlockAt(t0 + 29 * MIN);
    await chain.sendRaw(raw);
    await chain.mine(2);
    await scanAt(t0 + 29 * MIN + 20_000);
    await node.watchers.tick();
    expect((await read(id)).status).toBe('paid');
    // A reorg drops the block; the transfer goes back to the mempool and is re-mined a bit later.
    await chain.revert(snapshot);
    await nextBlockAt(t0 + 30 * MIN + 40_000);
    await chain.mine(5);
    await scanAt(t0 + 31 * MIN);
    await node.watchers.tick();
    const reopened = await read(id);
    expect(reopened.status).toBe('waiting_payment');
    // The quote-lifetime round runs while the transfer waits to be re-mined.
    time.freeze(t0 + 31 * MIN + 10_000);
    const requoted = await requoteDueSessions(node.kassa.ctx);
    const after = await read(id);
    expect(requoted).toBe(0);
    expect(after.total_amount_crypto).toBe(reopened.total_amount_crypto);
    // Re-included.
    await nextBlockAt(t0 + 31 * MIN + 30_000);
    await chain.sendRaw(raw);
    await chain.mine(2);
    await scanAt(t0 + 32 * MIN);
    await node.watchers.tick();
    const end = await read(id);
    const pays = await node.kassa.ctx.store.chain.paymentsOfSession(id);
    expect(pays.map((p) => [p.amount.toFixed(), p.attribution])).toEqual([
      [new Decimal(usdt).toFixed(), 'exact_amount'],
    ]);
    expect(end.status).toBe('paid');
  });
});
