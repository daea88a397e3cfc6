import { randomBytes } from 'node:crypto';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { expireDueSessions } from '../../src/domain/sessions/expire-sessions.js';
import { requoteDueSessions } from '../../src/domain/sessions/requote-sessions.js';
import { Decimal } from '../../src/domain/shared/money.js';
import { checkoutRequest } from '../factories/checkout-request.js';
import { createMerchant } from '../factories/merchant.js';
import { startChainKassa, startTestChain, type ChainKassa, type TestChain } from '../support/chain.js';
import { fixedRates } from '../support/fixed-rates.js';
import { controllableClock, createSession, postBind } from '../support/rest-kassa.js';

/**
 * Found by an attacker-minded review (2026-11-28), against a real anvil: a stranger's bound part of their own — a
 * dust transfer in another asset, or in the session's asset — changed which amounts a session held (its asset
 * locked to another; its rest asked anew). The payer's transfer of the amount their page had asked for then paid no
 * session by amount, and any other open session of the merchant could bind it: the attacker's own. Such a transfer
 * is now reserved for the session that asked for it (docs/payment-rules.md, rule 2), a first part must pay half
 * of the session's price to select its asset (rule 3), and the payer's exact transfer outranks bound parts of another
 * asset (rule 2, docs/decisions/0024). Each test failed before, but the two that pin where outranking stops (a
 * transfer after the quote's lifetime; bound parts that pay the price).
 */

const MIN = 60_000;
let chain: TestChain;
let node: ChainKassa;
const time = controllableClock();
const { rates } = fixedRates();

beforeAll(async () => {
  chain = await startTestChain();
  const env = { KASSA_QUOTE_TTL_MINUTES: '30', KASSA_CONFIRMATIONS_LOCAL: '1' };
  node = await startChainKassa(chain.url, { clock: time.clock, env, override: { rates } });
}, 90_000);

afterAll(async () => {
  await node?.close();
  await chain?.stop();
});

afterEach(() => time.release());

// Each test runs hours after the last one's blocks, so block times only move forward.
let nextStart = Date.now() + 60 * MIN;
function startOfTest(): number {
  const t0 = nextStart;
  nextStart += 4 * 60 * MIN;
  return t0;
}

const randomWallet = () => `0x${randomBytes(20).toString('hex')}`;
const lamp = checkoutRequest({ items: [{ name: 'Lamp', quantity: 1, unit_price: 100 }], expires_in_minutes: 60 });

async function nextBlockAt(at: number): Promise<void> {
  await chain.rpc('evm_setNextBlockTimestamp', [Math.floor(at / 1000)]);
}

async function scanAt(at: number): Promise<void> {
  time.freeze(at);
  await node.watchers.tick();
}

const read = async (id: string) => (await node.kassa.http.get(`/checkout-sessions/${id}`)).body;
const paymentsOf = (id: string) => node.kassa.ctx.store.chain.paymentsOfSession(id);
const amountDue = async (id: string): Promise<string> => {
  const asked = await node.kassa.http
    .post('/graphql')
    .send({ query: `{ checkoutSession(id: "${id}") { amountDue } }` });
  return asked.body.data.checkoutSession.amountDue as string;
};

/** The attacker's session A and the victim's V, same basket, one wallet, the chain scanned at t0 + 1 s. */
async function twoSessions(t0: number, basket: Record<string, unknown> = lamp) {
  time.freeze(t0);
  await nextBlockAt(t0);
  await chain.mine(1);
  const merchant = await createMerchant(node.kassa.ctx, { wallet: randomWallet() });
  const a = (await createSession(node.kassa, merchant, basket)).session_id as string;
  const body = await createSession(node.kassa, merchant, basket);
  const options = body.crypto_options as Array<{ ticker: string; amount: string }>;
  const amountIn = (ticker: string) => options.find((o) => o.ticker === ticker)!.amount;
  const v = { id: body.session_id as string, usdt: amountIn('USDT'), usdc: amountIn('USDC') };
  await scanAt(t0 + 1_000);
  return { merchant, a, v };
}

/** A stranger's 50.1 USDC (half V's price and a little more), mined at `at` and bound to V at once, then scanned. */
async function halfBoundInUsdc(wallet: string, sessionId: string, at: number): Promise<{ hash: string }> {
  await nextBlockAt(at);
  time.freeze(at);
  const half = await chain.pay(wallet, 'USDC', '50.1', { from: 7 });
  const bound = await postBind(node.kassa, sessionId, {
    tx_hash: half.hash,
    chain_id: '31337',
    crypto_currency: 'USDC',
  });
  expect(bound.status, JSON.stringify(bound.body)).toBe(200);
  await chain.mine(1);
  await scanAt(at + 2_000);
  return half;
}

describe("a stranger's bound part of another asset strands no payer's exact transfer", () => {
  it("a unit of another asset, bound to a waiting session, selects nothing: the payer's exact transfer pays it", async () => {
    const t0 = startOfTest();
    const { merchant, a, v } = await twoSessions(t0);

    // A stranger binds a pending unit of USDC to V: judged once mined, it is too small to select V's asset (docs/
    // payment-rules.md, rule 3: a first part pays half at least), and it fails nothing. It locked V to USDC before.
    const t1 = t0 + MIN;
    await nextBlockAt(t1);
    time.freeze(t1);
    const pending = await chain.payPending(merchant.wallet, 'USDC', '0.000002', { from: 7 });
    const held = await postBind(node.kassa, v.id, {
      tx_hash: pending.hash,
      chain_id: '31337',
      crypto_currency: 'USDC',
    });
    expect(held.status, JSON.stringify(held.body)).toBe(200);
    await pending.release();
    await chain.mine(1);
    await scanAt(t1 + 2_000);
    const candidates = await node.kassa.http.post('/graphql').send({
      query: `{ checkoutSession(id: "${v.id}") { status cryptoCurrency transactions { state reason reasonCode } } }`,
    });
    expect(candidates.body.data.checkoutSession).toMatchObject({
      status: 'WAITING_PAYMENT',
      cryptoCurrency: null,
      transactions: [
        {
          state: 'REJECTED',
          reason: expect.stringMatching(/^too small: .* pays 0.000002 USDC, under/),
          reasonCode: 'bind_too_small',
        },
      ],
    });

    // V's payer sends exactly V's USDT amount; before the block is scanned, the stranger sends another unit of USDC
    // and binds it, mined: refused at once, it writes nothing.
    const t2 = t1 + 10_000;
    await nextBlockAt(t2);
    time.freeze(t2);
    const paid = await chain.pay(merchant.wallet, 'USDT', v.usdt, { from: 4 });
    await nextBlockAt(t2 + 1_000);
    const dust = await chain.pay(merchant.wallet, 'USDC', '0.000001', { from: 7 });
    time.freeze(t2 + 2_000);
    const refused = await postBind(node.kassa, v.id, {
      tx_hash: dust.hash,
      chain_id: '31337',
      crypto_currency: 'USDC',
    });
    expect(refused.status, JSON.stringify(refused.body)).toBe(409);
    expect(refused.body.message).toMatch(
      /^too small: transaction 0x[0-9a-f]{64} pays 0.000001 USDC, under half of the/,
    );
    expect((await read(v.id)).crypto_currency).toBeNull();

    await chain.mine(1);
    await scanAt(t2 + 3_000);
    expect(await read(v.id)).toMatchObject({ status: 'paid', crypto_currency: 'USDT' });
    expect((await paymentsOf(v.id)).map((p) => [p.txHash, p.attribution])).toEqual([[paid.hash, 'exact_amount']]);
    expect(await paymentsOf(a)).toEqual([]);
  });

  it("half its price in another asset, bound, does not outrank the payer's exact transfer mined before it", async () => {
    const t0 = startOfTest();
    const { merchant, a, v } = await twoSessions(t0);

    // V's payer sends exactly V's USDT amount; before the block is scanned, a stranger sends half V's price in USDC and
    // binds it to V: verified on the spot, it locks V to USDC.
    const t1 = t0 + MIN;
    await nextBlockAt(t1);
    time.freeze(t1);
    const paid = await chain.pay(merchant.wallet, 'USDT', v.usdt, { from: 4 });
    await nextBlockAt(t1 + 1_000);
    const half = await chain.pay(merchant.wallet, 'USDC', '50.1', { from: 7 });
    time.freeze(t1 + 2_000);
    const locked = await postBind(node.kassa, v.id, { tx_hash: half.hash, chain_id: '31337', crypto_currency: 'USDC' });
    expect(locked.status, JSON.stringify(locked.body)).toBe(200);
    expect(locked.body.crypto_currency).toBe('USDC');

    // The scan finds the payer's exact USDT: it pays V, in USDT (it was reserved for V, stranded, before: docs/
    // decisions/0024). The stranger's USDC no longer counts for V: credited to nobody, reserved for V, its bind
    // rejected as superseded; the stranger's own session cannot take it.
    await chain.mine(1);
    await scanAt(t1 + 3_000);
    await chain.mine(1);
    await scanAt(t1 + 4_000);
    expect(await read(v.id)).toMatchObject({ status: 'paid', crypto_currency: 'USDT', bound_tx_hash: null });
    expect((await paymentsOf(v.id)).map((p) => [p.txHash, p.attribution])).toEqual([[paid.hash, 'exact_amount']]);
    const unattributed = await node.kassa.ctx.store.chain.unattributedPayments(1000);
    expect(unattributed.find((p) => p.txHash === half.hash)?.reservedFor).toBe(v.id);
    const candidates = await node.kassa.http.post('/graphql').send({
      query: `{ checkoutSession(id: "${v.id}") { status cryptoCurrency transactions { state reason reasonCode } } }`,
    });
    expect(candidates.body.data.checkoutSession).toMatchObject({
      status: 'PAID',
      cryptoCurrency: 'USDT',
      transactions: [
        {
          state: 'REJECTED',
          reason: expect.stringMatching(
            /^superseded: transaction 0x[0-9a-f]{64} pays this checkout session's exact amount of [0-9.]+ USDT/,
          ),
          reasonCode: 'superseded',
        },
      ],
    });
    const stolen = await postBind(node.kassa, a, { tx_hash: half.hash, chain_id: '31337', crypto_currency: 'USDC' });
    expect(stolen.status, JSON.stringify(stolen.body)).toBe(409);
    expect(await paymentsOf(a)).toEqual([]);
  });

  it("nor the payer's exact transfer mined after it, once V is partial in the other asset", async () => {
    const t0 = startOfTest();
    const { merchant, v } = await twoSessions(t0);

    // A stranger sees V's payer's transfer on its way and binds half V's price in USDC first: V is partial in USDC.
    const t1 = t0 + MIN;
    const half = await halfBoundInUsdc(merchant.wallet, v.id, t1);
    expect(await read(v.id)).toMatchObject({ status: 'partial', crypto_currency: 'USDC' });

    // The payer's exact USDT, the amount their page showed, is mined after the lock: V keeps the amounts it asked in
    // other assets while bound parts alone lock it, so the transfer still pays it by amount.
    const t2 = t1 + 10_000;
    await nextBlockAt(t2);
    time.freeze(t2);
    const paid = await chain.pay(merchant.wallet, 'USDT', v.usdt, { from: 4 });
    await chain.mine(1);
    await scanAt(t2 + 2_000);
    await scanAt(t2 + 3_000);
    expect(await read(v.id)).toMatchObject({ status: 'paid', crypto_currency: 'USDT', total_amount_crypto: v.usdt });
    expect((await paymentsOf(v.id)).map((p) => p.txHash)).toEqual([paid.hash]);
    const unattributed = await node.kassa.ctx.store.chain.unattributedPayments(1000);
    expect(unattributed.find((p) => p.txHash === half.hash)?.reservedFor).toBe(v.id);
    const history = await node.kassa.runtime.db.prisma.$queryRaw<Array<{ to_status: string }>>`
      SELECT to_status::text FROM checkout_session_status_history WHERE session_id = ${v.id}::uuid ORDER BY id`;
    expect(history.map((row) => row.to_status)).toEqual(['waiting_payment', 'partial', 'paid']);
    // V's claims are given up with its close: none is left.
    const claims = await node.kassa.runtime.db.prisma.$queryRaw<Array<{ n: number }>>`
      SELECT count(*)::int AS n FROM payment_amount_claims WHERE session_id = ${v.id}::uuid AND released_at IS NULL`;
    expect(claims).toEqual([{ n: 0 }]);
  });

  it("an amount of another asset paid after the session's quote lifetime does not outrank the bound part", async () => {
    const t0 = startOfTest();
    const { merchant, v } = await twoSessions(t0, { ...lamp, expires_in_minutes: 180 });

    // Half V's price in USDC, bound: V is partial in USDC and never re-priced (a payment was credited).
    const t1 = t0 + MIN;
    const half = await halfBoundInUsdc(merchant.wallet, v.id, t1);

    // V's USDT amount, sent once its quote's lifetime (30 min) is over: an unlocked V would have been re-priced by
    // then, so it pays nothing at that old price (a payer cannot wait for the rate to move and pay the old amount).
    const t2 = t0 + 31 * MIN;
    await nextBlockAt(t2);
    time.freeze(t2);
    const stale = await chain.pay(merchant.wallet, 'USDT', v.usdt, { from: 4 });
    await chain.mine(1);
    await scanAt(t2 + 2_000);
    expect(await read(v.id)).toMatchObject({ status: 'partial', crypto_currency: 'USDC' });
    expect((await paymentsOf(v.id)).map((p) => p.txHash)).toEqual([half.hash]);
    const unattributed = await node.kassa.ctx.store.chain.unattributedPayments(1000);
    expect(unattributed.find((p) => p.txHash === stale.hash)?.reservedFor).toBe(v.id);
  });

  it('a bound part that pays the session in full is not outranked: the exact transfer stays reserved for it', async () => {
    const t0 = startOfTest();
    const { merchant, a, v } = await twoSessions(t0);

    // V's payer pays V's whole USDC price and a little more (not V's unique amount: it pays by its bind alone), bound
    // and verified at once; someone then sends V's exact USDT amount, scanned while the USDC waits for confirmation.
    const t1 = t0 + MIN;
    await nextBlockAt(t1);
    time.freeze(t1);
    const full = await chain.pay(merchant.wallet, 'USDC', new Decimal(v.usdc).plus('0.5').toFixed(6), { from: 4 });
    expect(
      (await postBind(node.kassa, v.id, { tx_hash: full.hash, chain_id: '31337', crypto_currency: 'USDC' })).status,
    ).toBe(200);
    expect((await read(v.id)).crypto_currency).toBe('USDC');
    await nextBlockAt(t1 + 2_000);
    const exact = await chain.pay(merchant.wallet, 'USDT', v.usdt, { from: 5 });
    await chain.mine(1);
    await scanAt(t1 + 4_000);
    await scanAt(t1 + 5_000);
    expect(await read(v.id)).toMatchObject({ status: 'paid', crypto_currency: 'USDC' });
    expect((await paymentsOf(v.id)).map((p) => p.txHash)).toEqual([full.hash]);
    const unattributed = await node.kassa.ctx.store.chain.unattributedPayments(1000);
    expect(unattributed.find((p) => p.txHash === exact.hash)?.reservedFor).toBe(v.id);
    const stolen = await postBind(node.kassa, a, { tx_hash: exact.hash, chain_id: '31337', crypto_currency: 'USDT' });
    expect(stolen.status, JSON.stringify(stolen.body)).toBe(409);

    // A expires and V's claims are purged: the transfer stays V's, and A, closed, would take a mined transaction inside
    // its late-payment window.
    await scanAt(t0 + 62 * MIN);
    await expireDueSessions(node.kassa.ctx);
    expect((await read(a)).status).toBe('expired');
    await scanAt(t0 + 64 * MIN);
    await requoteDueSessions(node.kassa.ctx);
    const claims = await node.kassa.runtime.db.prisma.$queryRaw<Array<{ n: number }>>`
      SELECT count(*)::int AS n FROM payment_amount_claims WHERE session_id = ${v.id}::uuid`;
    expect(claims).toEqual([{ n: 0 }]);
    const late = await postBind(node.kassa, a, { tx_hash: exact.hash, chain_id: '31337', crypto_currency: 'USDT' });
    expect(late.status, JSON.stringify(late.body)).toBe(409);
    expect(JSON.stringify(late.body)).toMatch(/other checkout sessions ask for/);
    expect(await paymentsOf(a)).toEqual([]);
  });

  it("a new rest forced by a stranger's part leaves the rest asked before reserved for the session", async () => {
    const t0 = startOfTest();
    const { merchant, a, v } = await twoSessions(t0, { ...lamp, expires_in_minutes: 180 });

    // V's payer sends a part, bound: V is partial and asks for its rest R.
    const t1 = t0 + MIN;
    await nextBlockAt(t1);
    time.freeze(t1);
    const part = await chain.pay(merchant.wallet, 'USDT', '60', { from: 4 });
    expect(
      (await postBind(node.kassa, v.id, { tx_hash: part.hash, chain_id: '31337', crypto_currency: 'USDT' })).status,
    ).toBe(200);
    await chain.mine(1);
    await scanAt(t1 + 2_000);
    expect((await read(v.id)).status).toBe('partial');
    const rest = await amountDue(v.id);

    // A stranger binds a unit of USDT of their own to V: once confirmed, V owes less and asks a new rest.
    const t2 = t1 + 10_000;
    await nextBlockAt(t2);
    time.freeze(t2);
    const dust = await chain.pay(merchant.wallet, 'USDT', '0.000001', { from: 7 });
    expect(
      (await postBind(node.kassa, v.id, { tx_hash: dust.hash, chain_id: '31337', crypto_currency: 'USDT' })).status,
    ).toBe(200);
    await chain.mine(1);
    await scanAt(t2 + 2_000);
    expect(await amountDue(v.id)).not.toBe(rest);
    // Scanned past that change: a freed amount would be free here.
    await scanAt(t2 + 40_000);
    await requoteDueSessions(node.kassa.ctx);

    // V's payer sends the rest their page showed a moment before; the scan credits it to nobody by amount.
    const t3 = t2 + 45_000;
    await nextBlockAt(t3);
    time.freeze(t3);
    const topUp = await chain.pay(merchant.wallet, 'USDT', rest, { from: 5 });
    await chain.mine(1);
    await scanAt(t3 + 2_000);
    const stolen = await postBind(node.kassa, a, { tx_hash: topUp.hash, chain_id: '31337', crypto_currency: 'USDT' });
    expect(stolen.status, JSON.stringify(stolen.body)).toBe(409);
    expect(JSON.stringify(stolen.body)).toMatch(/other checkout sessions ask for/);
    expect(await paymentsOf(a)).toEqual([]);
    const reserved = await node.kassa.ctx.store.chain.unattributedPayments(1000);
    expect(reserved.find((p) => p.txHash === topUp.hash)?.reservedFor).toBe(v.id);

    // An open session keeps an amount it gave up for a quote lifetime (30 min here; at most the in-flight grace) after
    // it did, no longer (amounts would run out); the transfer scanned meanwhile stays reserved for it.
    const restClaim = () => node.kassa.runtime.db.prisma.$queryRaw<Array<{ session_id: string }>>`
      SELECT session_id::text FROM payment_amount_claims WHERE wallet_address = ${merchant.wallet}
         AND asset = 'USDT' AND amount = ${rest}::numeric`;
    await scanAt(t2 + 2_000 + 29 * MIN);
    await requoteDueSessions(node.kassa.ctx);
    expect(await restClaim()).toEqual([{ session_id: v.id }]);
    // Freed once a quote lifetime has passed and the chain is scanned past its end (with the 30 s skew allowed).
    await scanAt(t2 + 2_000 + 30 * MIN + 29_000);
    await requoteDueSessions(node.kassa.ctx);
    expect(await restClaim()).toEqual([{ session_id: v.id }]);
    await scanAt(t2 + 2_000 + 30 * MIN + 31_000);
    await requoteDueSessions(node.kassa.ctx);
    expect(await restClaim()).toEqual([]);
    const late = await postBind(node.kassa, a, { tx_hash: topUp.hash, chain_id: '31337', crypto_currency: 'USDT' });
    expect(late.status, JSON.stringify(late.body)).toBe(409);
    expect(JSON.stringify(late.body)).toMatch(/other checkout sessions ask for/);

    // V's own bind takes it: V is paid.
    const own = await postBind(node.kassa, v.id, { tx_hash: topUp.hash, chain_id: '31337', crypto_currency: 'USDT' });
    expect(own.status, JSON.stringify(own.body)).toBe(200);
    await chain.mine(1);
    await scanAt(t2 + 32 * MIN);
    expect((await read(v.id)).status).toBe('paid');
  });
});
