import { randomBytes } from 'node:crypto';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { expireDueSessions } from '../../src/domain/sessions/expire-sessions.js';
import { setPaymentPolicy } from '../../src/domain/organisations/organisations.js';
import { requoteDueSessions } from '../../src/domain/sessions/requote-sessions.js';
import { checkoutRequest } from '../factories/checkout-request.js';
import { createMerchant } from '../factories/merchant.js';
import { startChainKassa, startTestChain, type ChainKassa, type TestChain } from '../support/chain.js';
import { fixedRates } from '../support/fixed-rates.js';
import { controllableClock, postBind, postCreate } from '../support/rest-kassa.js';

/**
 * A closed session that was not paid keeps its unique amounts through its late-payment window
 * (docs/payment-rules.md, rule 4), against a real anvil: its payer may still send the amount their page showed, and
 * that transfer must never pay a stranger's newer session of the same price. Before, the claims were freed about a
 * minute after the close; a stranger who created sessions until the amount came round collected the late transfer.
 */

const MIN = 60_000;
const STEPS = 3;
let chain: TestChain;
let node: ChainKassa;
const time = controllableClock();
const { rates } = fixedRates();

beforeAll(async () => {
  chain = await startTestChain();
  const env = { KASSA_QUOTE_TTL_MINUTES: '30', KASSA_UNIQUE_AMOUNT_STEPS: String(STEPS) };
  node = await startChainKassa(chain.url, { clock: time.clock, env, override: { rates } });
}, 90_000);

afterAll(async () => {
  await node?.close();
  await chain?.stop();
});

afterEach(() => time.release());

const randomWallet = () => `0x${randomBytes(20).toString('hex')}`;
const lamp = checkoutRequest({ items: [{ name: 'Lamp', quantity: 1, unit_price: 100 }], expires_in_minutes: 60 });

async function nextBlockAt(at: number): Promise<void> {
  await chain.rpc('evm_setNextBlockTimestamp', [Math.floor(at / 1000)]);
}

/** A block mined at `at`, then the watcher's tick with Kassa's clock there. */
async function scanAt(at: number): Promise<void> {
  await nextBlockAt(at);
  await chain.mine(1);
  time.freeze(at);
  await node.watchers.tick();
}

const usdtOf = (body: Record<string, unknown>) =>
  (body.crypto_options as Array<{ ticker: string; amount: string }>).find((o) => o.ticker === 'USDT')!.amount;

async function eventTypes(id: string): Promise<string[]> {
  const rows = await node.kassa.runtime.db.prisma.$queryRaw<Array<{ type: string }>>`
    SELECT type FROM outbox_events WHERE session_id = ${id}::uuid ORDER BY seq`;
  return rows.map((row) => row.type.replace('checkout_session.', ''));
}

describe('an expired session keeps its amounts through its late-payment window', () => {
  it('its amount comes round to no stranger, and its late exact transfer is its own (late)', async () => {
    const t0 = Date.now() + 60 * MIN;
    await scanAt(t0);
    const merchant = await createMerchant(node.kassa.ctx, { wallet: randomWallet() });
    const created = await postCreate(node.kassa, merchant, lamp);
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const expired = { id: created.body.session_id as string, usdt: usdtOf(created.body) };
    await scanAt(t0 + 1_000);

    // Its time is up, the chain is scanned past it: expired. Then the round that frees released amounts runs, after
    // the network was scanned past the close (what freed them before).
    await scanAt(t0 + 61 * MIN);
    await expireDueSessions(node.kassa.ctx);
    expect((await node.kassa.http.get(`/checkout-sessions/${expired.id}`)).body.status).toBe('expired');
    await scanAt(t0 + 63 * MIN);
    await requoteDueSessions(node.kassa.ctx);
    await scanAt(t0 + 65 * MIN);
    await requoteDueSessions(node.kassa.ctx);

    // A stranger creates sessions of the same price until every amount would have come round.
    const strangers: Array<{ id: string; usdt: string }> = [];
    const refused: number[] = [];
    for (let i = 0; i < STEPS; i++) {
      const response = await postCreate(node.kassa, merchant, lamp);
      if (response.status === 201) strangers.push({ id: response.body.session_id, usdt: usdtOf(response.body) });
      else refused.push(response.status);
    }
    expect(strangers.map((s) => s.usdt)).not.toContain(expired.usdt);
    expect(strangers).toHaveLength(STEPS - 1);
    expect(refused).toEqual([409]);

    // The expired session's payer sends what their page showed, half an hour late (inside the 24 h window).
    const lateAt = t0 + 95 * MIN;
    await nextBlockAt(lateAt);
    time.freeze(lateAt);
    const late = await chain.pay(merchant.wallet, 'USDT', expired.usdt, { from: 4 });
    await scanAt(lateAt + 2_000);
    for (const stranger of strangers)
      expect((await node.kassa.http.get(`/checkout-sessions/${stranger.id}`)).body.status).toBe('waiting_payment');
    const [recorded] = await node.kassa.runtime.db.prisma.$queryRaw<
      Array<{ session_id: string | null; reserved_for: string | null }>
    >`SELECT session_id::text, reserved_for::text FROM payments WHERE tx_hash = ${late.hash}`;
    expect(recorded).toEqual({ session_id: null, reserved_for: expired.id });
    // A stranger's bind of it is refused; the payer's bind credits it to the expired session, late.
    const stolen = await postBind(node.kassa, strangers[0]!.id, {
      tx_hash: late.hash,
      chain_id: '31337',
      crypto_currency: 'USDT',
    });
    expect(stolen.status, JSON.stringify(stolen.body)).toBe(409);
    const own = await postBind(node.kassa, expired.id, {
      tx_hash: late.hash,
      chain_id: '31337',
      crypto_currency: 'USDT',
    });
    expect(own.status, JSON.stringify(own.body)).toBe(200);
    await scanAt(lateAt + 4_000);
    expect((await node.kassa.http.get(`/checkout-sessions/${expired.id}`)).body.status).toBe('expired');
    expect(await eventTypes(expired.id)).toEqual(['created', 'expired', 'tx_bound', 'late_payment']);
    const credited = await node.kassa.ctx.store.chain.paymentsOfSession(expired.id);
    expect(credited.map((p) => ({ tx: p.txHash, late: p.late }))).toEqual([{ tx: late.hash, late: true }]);
  }, 60_000);

  it('once the window is over, the amount is free for another session', async () => {
    const t0 = Date.now() + 6 * 60 * MIN;
    await scanAt(t0);
    const merchant = await createMerchant(node.kassa.ctx, { wallet: randomWallet() });
    await setPaymentPolicy(node.kassa.ctx, merchant.organisationId, { latePaymentWindowMinutes: '30' });
    const created = await postCreate(node.kassa, merchant, lamp);
    const id = created.body.session_id as string;
    const amount = usdtOf(created.body);
    const claimed = async () =>
      (
        await node.kassa.runtime.db.prisma.$queryRaw<Array<{ amount: string }>>`
        SELECT amount::numeric(38, 8)::text AS amount FROM payment_amount_claims
         WHERE session_id = ${id}::uuid AND asset = 'USDT'`
      ).map((row) => row.amount);
    await scanAt(t0 + 61 * MIN);
    await expireDueSessions(node.kassa.ctx);
    // Ten minutes before the window's end (expires_at + 30 min) the amount is still the expired session's.
    await scanAt(t0 + 80 * MIN);
    await requoteDueSessions(node.kassa.ctx);
    expect(await claimed()).toEqual([amount]);
    const during = await postCreate(node.kassa, merchant, lamp);
    expect(usdtOf(during.body)).not.toBe(amount);
    // Past it, the round frees it.
    await scanAt(t0 + 91 * MIN);
    await requoteDueSessions(node.kassa.ctx);
    expect(await claimed()).toEqual([]);
  }, 60_000);
});
