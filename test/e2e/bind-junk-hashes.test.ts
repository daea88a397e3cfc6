import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAX_UNVERIFIED_BINDS } from '../../src/domain/payments/bind-transaction.js';
import { expireDueSessions } from '../../src/domain/sessions/expire-sessions.js';
import { checkoutRequest } from '../factories/checkout-request.js';
import { createMerchant } from '../factories/merchant.js';
import { startChainKassa, startTestChain, type ChainKassa, type TestChain } from '../support/chain.js';
import { controllableClock, createSession, postBind } from '../support/rest-kassa.js';

/**
 * Made-up hashes cannot keep a payer's mined transaction out (docs/payment-rules.md, rule 3). Found
 * by review: anyone with the session id filled its five unverified slots with random hashes, the
 * payer's own bind of an on-time, non-exact transfer got 409 for the whole in-flight grace, and
 * the session ended expired, the payment recorded late. Against a real anvil.
 */

const CHAIN_ID = '31337';
const MIN = 60_000;
let chain: TestChain;
let node: ChainKassa;
const time = controllableClock();

beforeAll(async () => {
  chain = await startTestChain();
  node = await startChainKassa(chain.url, { clock: time.clock, env: { KASSA_CONFIRMATIONS_LOCAL: '1' } });
}, 90_000);

afterAll(async () => {
  await node?.close();
  await chain?.stop();
});

const hex = (bytes: number) => `0x${randomBytes(bytes).toString('hex')}`;
const view = async (id: string) => (await node.kassa.http.get(`/checkout-sessions/${id}`)).body;

/** The payer binds their pending USDT transfer (200), then the chain mines it. */
async function bindPendingThenMine(id: string, pending: { hash: string; release: () => Promise<void> }) {
  try {
    const own = await postBind(node.kassa, id, { tx_hash: pending.hash, chain_id: CHAIN_ID, crypto_currency: 'USDT' });
    expect(own.status, JSON.stringify(own.body)).toBe(200);
  } finally {
    await pending.release();
  }
}

describe('the cap on unverified binds', () => {
  it("holds junk hashes only: the payer's mined transfer is bound and pays on time", async () => {
    const t0 = Date.now();
    time.freeze(t0);
    const merchant = await createMerchant(node.kassa.ctx, { wallet: hex(20) });
    const id = (await createSession(node.kassa, merchant, checkoutRequest())).session_id as string;
    for (let i = 0; i < MAX_UNVERIFIED_BINDS; i += 1) {
      const junk = await postBind(node.kassa, id, { tx_hash: hex(32), chain_id: CHAIN_ID, crypto_currency: 'USDT' });
      expect(junk.status).toBe(200);
    }
    // One more made-up hash is refused: the cap still bounds what a session stores unjudged.
    const over = await postBind(node.kassa, id, { tx_hash: hex(32), chain_id: CHAIN_ID, crypto_currency: 'USDT' });
    expect(over.status).toBe(409);
    expect(over.body.message).toMatch(/not verified yet/);

    // The payer's exchange withdrawal, a round sum above the price (not the exact amount): it needs a bind.
    const sent = await chain.pay(merchant.wallet, 'USDT', '106', { from: 2 });
    const own = await postBind(node.kassa, id, { tx_hash: sent.hash, chain_id: CHAIN_ID, crypto_currency: 'USDT' });
    expect(own.status, JSON.stringify(own.body)).toBe(200);
    await chain.mine(1);
    await node.watchers.tick();
    const paid = await view(id);
    expect(paid.status).toBe('paid');
    expect(paid.bound_tx_hash).toBe(sent.hash);

    // Its time runs out: paid stays paid, and nothing was late.
    time.freeze(t0 + 61 * MIN);
    await node.watchers.tick();
    await expireDueSessions(node.kassa.ctx);
    expect((await view(id)).status).toBe('paid');
    const events = await node.kassa.runtime.db.prisma.$queryRaw<Array<{ type: string }>>`
      SELECT type FROM outbox_events WHERE session_id = ${id}::uuid ORDER BY seq`;
    expect(events.map((event) => event.type)).not.toContain('checkout_session.late_payment');
  });

  it("counts hashes the chain does not know apart: junk cannot keep out the payer's pending transaction", async () => {
    time.freeze(Date.now());
    const merchant = await createMerchant(node.kassa.ctx, { wallet: hex(20) });
    const id = (await createSession(node.kassa, merchant, checkoutRequest())).session_id as string;
    for (let i = 0; i < MAX_UNVERIFIED_BINDS; i += 1) {
      const junk = await postBind(node.kassa, id, { tx_hash: hex(32), chain_id: CHAIN_ID, crypto_currency: 'USDT' });
      expect(junk.status).toBe(200);
    }
    await bindPendingThenMine(id, await chain.payPending(merchant.wallet, 'USDT', '106', { from: 2 }));
    await chain.mine(1);
    await node.watchers.tick();
    await node.watchers.tick();
    expect((await view(id)).status).toBe('paid');
  });

  it('junk judged first delays a pending exact transfer past its scan: once the session is paid, its bind is still verified', async () => {
    // The wall clock: each bind and each pass is checked at its own time, as the watcher orders them by it.
    time.release();
    const merchant = await createMerchant(node.kassa.ctx, { wallet: hex(20) });
    // 50 made-up hashes bound earlier, on other sessions: the watcher judges them first (BOUND_TRANSACTIONS_PER_PASS).
    for (let s = 0; s < 10; s += 1) {
      const other = (await createSession(node.kassa, merchant, checkoutRequest())).session_id as string;
      for (let i = 0; i < MAX_UNVERIFIED_BINDS; i += 1) {
        const junk = await postBind(node.kassa, other, {
          tx_hash: hex(32),
          chain_id: CHAIN_ID,
          crypto_currency: 'USDT',
        });
        expect(junk.status).toBe(200);
      }
    }
    const created = await createSession(node.kassa, merchant, checkoutRequest());
    const id = created.session_id as string;
    const exact = (created.crypto_options as Array<{ ticker: string; amount: string }>).find(
      (o) => o.ticker === 'USDT',
    )!;
    const pending = await chain.payPending(merchant.wallet, 'USDT', exact.amount, { from: 2 });
    await bindPendingThenMine(id, pending);
    // The scan pays the session by its exact amount; this pass judges only the junk.
    await node.watchers.tick();
    expect(await view(id)).toMatchObject({ status: 'paid', bound_tx_hash: null });
    // The next pass judges the payer's bind: the transfer is its session's already, so it is verified and named (a few
    // passes allowed: a pass that a slow node fails does nothing).
    for (let pass = 0; pass < 3 && (await view(id)).bound_tx_hash === null; pass += 1) await node.watchers.tick();
    expect(await view(id)).toMatchObject({ status: 'paid', bound_tx_hash: pending.hash });
    const bound = await node.kassa.ctx.store.sessions.transactionsOf(id);
    expect(bound.map((t) => [t.txHash, t.state])).toEqual([[pending.hash, 'verified']]);
  });
});
