import { randomBytes } from 'node:crypto';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { Decimal } from '../../src/domain/shared/money.js';
import { requoteDueSessions } from '../../src/domain/sessions/requote-sessions.js';
import { checkoutRequest } from '../factories/checkout-request.js';
import { createMerchant, type TestMerchant } from '../factories/merchant.js';
import { startChainKassa, startTestChain, type ChainKassa, type TestChain } from '../support/chain.js';
import { startTestKassa, type TestKassa } from '../support/kassa.js';
import { fixedRates } from '../support/fixed-rates.js';
import { controllableClock, createSession, postBind } from '../support/rest-kassa.js';

/**
 * Found by an outside review, against a real anvil: re-pricing a quote (docs/payment-rules.md, rule 7)
 * released its unique amount (rule 4) while a transfer of that amount, mined while the quote stood,
 * was not scanned yet. The amount went to another session, or the payment was judged against the
 * new quote. Each test here failed before the change that made it pass.
 */

const MIN = 60_000;
let chain: TestChain;
let node: ChainKassa;
let second: TestKassa;
const time = controllableClock();
const { rates, prices } = fixedRates();

beforeAll(async () => {
  chain = await startTestChain();
  const env = { KASSA_QUOTE_TTL_MINUTES: '30', KASSA_CONFIRMATIONS_LOCAL: '1' };
  node = await startChainKassa(chain.url, { clock: time.clock, env, override: { rates } });
  // A second instance on the same database, without a watcher: it hands out unique amounts too.
  second = await startTestKassa({
    clock: time.clock,
    database: node.kassa.database,
    override: { rates },
    env: { KASSA_NETWORKS: 'local', KASSA_RPC_URLS_LOCAL: chain.url, ...env },
  });
}, 90_000);

afterAll(async () => {
  await second?.close();
  await node?.close();
  await chain?.stop();
});

afterEach(() => {
  prices.BTC = '100000';
  time.release();
});

// Each test runs hours after the last one's blocks, so block times only move forward.
let nextStart = Date.now() + 60 * MIN;
function startOfTest(): number {
  const t0 = nextStart;
  nextStart += 3 * 60 * MIN;
  return t0;
}

const randomWallet = () => `0x${randomBytes(20).toString('hex')}`;
const lamp = checkoutRequest({ items: [{ name: 'Lamp', quantity: 1, unit_price: 100 }] });

async function create(kassa: TestKassa, merchant: TestMerchant, basket: Record<string, unknown> = lamp) {
  const body = await createSession(kassa, merchant, basket);
  const amount = (ticker: string) =>
    (body.crypto_options as Array<{ ticker: string; amount: string }>).find((o) => o.ticker === ticker)!.amount;
  return { id: body.session_id as string, usdt: amount('USDT'), btc: amount('BTC') };
}

const read = async (id: string) => (await node.kassa.http.get(`/checkout-sessions/${id}`)).body;
const usdtOf = async (id: string) =>
  ((await read(id)).crypto_options as Array<{ ticker: string; amount: string }>).find((o) => o.ticker === 'USDT')!
    .amount;
const paymentsOf = (id: string) => node.kassa.ctx.store.chain.paymentsOfSession(id);
const claimOf = (wallet: string, amount: string) => node.kassa.runtime.db.prisma.$queryRaw<
  Array<{ session_id: string; released_at: Date | null }>
>`SELECT session_id::text, released_at FROM payment_amount_claims
   WHERE wallet_address = ${wallet} AND asset = 'USDT' AND amount = ${amount}::numeric`;

/** Mines the next block at `at` (block times are whole seconds). */
async function nextBlockAt(at: number): Promise<void> {
  await chain.rpc('evm_setNextBlockTimestamp', [Math.floor(at / 1000)]);
}

/** The watcher scans everything mined so far, at app time `at`. */
async function scanAt(at: number): Promise<void> {
  time.freeze(at);
  await node.watchers.tick();
}

/**
 * X holds step 0 and S1 step 1 of the same basket on one wallet; X is paid (step 0 is free
 * again) and the watcher has scanned everything up to t0 + 2 s.
 */
async function twoSessionsOneFree(t0: number) {
  time.freeze(t0);
  const merchant = await createMerchant(node.kassa.ctx, { wallet: randomWallet() });
  const x = await create(node.kassa, merchant);
  const s1 = await create(node.kassa, merchant);
  expect(new Decimal(s1.usdt).minus(x.usdt).toFixed()).toBe('0.000001');
  await nextBlockAt(t0 + 1_000);
  await chain.pay(merchant.wallet, 'USDT', x.usdt, { from: 4 });
  await chain.mine(2);
  await scanAt(t0 + 2_000);
  expect((await read(x.id)).status).toBe('paid');
  return { merchant, x, s1 };
}

describe('re-pricing never hands an amount a payer may already have sent to someone else', () => {
  it("an exact payment mined after the quote's end, before the scan, pays its session, not a newer one", async () => {
    const t0 = startOfTest();
    const { merchant, s1 } = await twoSessionsOneFree(t0);

    // 30 min 30 s later S1's payer sends exactly S1's amount; the watcher has not scanned that block yet.
    const t1 = t0 + 30 * MIN + 30_000;
    await nextBlockAt(t1);
    time.freeze(t1);
    const sent = await chain.pay(merchant.wallet, 'USDT', s1.usdt, { from: 5 });

    // The re-pricing round runs first, then a second instance creates S2 for the same basket.
    time.freeze(t1 + 2_000);
    await requoteDueSessions(node.kassa.ctx);
    time.freeze(t1 + 5_000);
    const s2 = await create(second, merchant);
    expect(s2.usdt).not.toBe(s1.usdt);

    await chain.mine(2);
    await scanAt(t1 + 8_000);
    expect(await read(s1.id)).toMatchObject({ status: 'paid', total_amount_crypto: s1.usdt });
    expect((await paymentsOf(s1.id)).map((p) => [p.txHash, p.attribution])).toEqual([[sent.hash, 'exact_amount']]);
    expect(await paymentsOf(s2.id)).toEqual([]);
    expect((await read(s2.id)).status).toBe('waiting_payment');
  });

  it('a session is not re-priced while a network it can be paid on is not scanned past its quote', async () => {
    const t0 = startOfTest();
    const { s1 } = await twoSessionsOneFree(t0);
    // Due by the clock, but the watcher last caught up at t0 + 2 s.
    time.freeze(t0 + 31 * MIN);
    await requoteDueSessions(node.kassa.ctx);
    expect(await usdtOf(s1.id)).toBe(s1.usdt);
    // Scanned past the quote's end (and the clock skew allowed): re-priced, to the smallest free step.
    await scanAt(t0 + 31 * MIN);
    await requoteDueSessions(node.kassa.ctx);
    expect(await usdtOf(s1.id)).not.toBe(s1.usdt);
  });

  it('an exact payment of the old amount mined before a re-pricing pays its session at the old amount', async () => {
    const t0 = startOfTest();
    const { merchant, s1 } = await twoSessionsOneFree(t0);
    // The watcher is caught up past the quote's end, so re-pricing may go ahead ...
    await scanAt(t0 + 30 * MIN + 35_000);
    // ... but S1's payer sends the old amount in a block the watcher has not scanned when it does.
    const t1 = t0 + 30 * MIN + 40_000;
    await nextBlockAt(t1);
    time.freeze(t1);
    const sent = await chain.pay(merchant.wallet, 'USDT', s1.usdt, { from: 5 });
    time.freeze(t1 + 2_000);
    expect(await requoteDueSessions(node.kassa.ctx)).toBeGreaterThanOrEqual(1);
    const moved = await usdtOf(s1.id);
    expect(moved).not.toBe(s1.usdt);

    // The old amount stays out of reach of new sessions until the watcher has scanned past the re-pricing.
    time.freeze(t1 + 5_000);
    const s2 = await create(second, merchant);
    expect([s1.usdt, moved]).not.toContain(s2.usdt);

    await chain.mine(2);
    await scanAt(t1 + 8_000);
    expect(await read(s1.id)).toMatchObject({ status: 'paid', total_amount_crypto: s1.usdt, overpaid: false });
    expect((await paymentsOf(s1.id)).map((p) => [p.txHash, p.attribution])).toEqual([[sent.hash, 'exact_amount']]);
    expect(await paymentsOf(s2.id)).toEqual([]);

    // An open session keeps what it gave up (its payer's page may still show it); once the session is closed (paid
    // at t1 + 8 s) and that is scanned past (with the clock skew allowed), the amount is free again.
    expect(await claimOf(merchant.wallet, s1.usdt)).toEqual([{ session_id: s1.id, released_at: new Date(t1 + 2_000) }]);
    await scanAt(t1 + 8_000 + 29_000);
    await requoteDueSessions(node.kassa.ctx);
    expect(await claimOf(merchant.wallet, s1.usdt)).toHaveLength(1);
    await scanAt(t1 + 8_000 + 30_000);
    await requoteDueSessions(node.kassa.ctx);
    expect(await claimOf(merchant.wallet, s1.usdt)).toEqual([]);
  });

  it('an exact payment mined at 29:50, re-priced at 30:05 before the scan, pays its session (no bind)', async () => {
    const t0 = startOfTest();
    time.freeze(t0);
    await nextBlockAt(t0);
    await chain.mine(1);
    const merchant = await createMerchant(node.kassa.ctx, { wallet: randomWallet() });
    const s = await create(node.kassa, merchant);
    const t1 = t0 + 29 * MIN + 50_000;
    await nextBlockAt(t1);
    time.freeze(t1);
    const sent = await chain.pay(merchant.wallet, 'BTC', s.btc, { from: 6 });
    prices.BTC = '99000';
    time.freeze(t0 + 30 * MIN + 5_000);
    await requoteDueSessions(node.kassa.ctx);
    await chain.mine(2);
    await scanAt(t0 + 30 * MIN + 8_000);
    expect(await read(s.id)).toMatchObject({
      status: 'paid',
      crypto_currency: 'BTC',
      total_amount_crypto: s.btc,
      overpaid: false,
    });
    expect((await paymentsOf(s.id)).map((p) => [p.txHash, p.attribution])).toEqual([[sent.hash, 'exact_amount']]);
    const unattributed = (await node.kassa.ctx.store.chain.unattributedPayments(1000)).map((p) => p.txHash);
    expect(unattributed).not.toContain(sent.hash);
  });

  it('binds of stuck transactions hold a re-pricing only until the in-flight grace after the quote ends, one after another or not', async () => {
    // Found by a review: each pending bind held the quote until it was rejected `not mined`, a grace after its own
    // bind; binding one stuck transaction after another kept the old quote for as long as they came.
    const t0 = startOfTest();
    time.freeze(t0);
    await nextBlockAt(t0);
    await chain.mine(1);
    const merchant = await createMerchant(node.kassa.ctx, { wallet: randomWallet() });
    const body = await createSession(
      node.kassa,
      merchant,
      checkoutRequest({ items: [{ name: 'Lamp', quantity: 1, unit_price: 100 }], expires_in_minutes: 150 }),
    );
    const id = body.session_id as string;
    const usdt = await usdtOf(id);
    await scanAt(t0 + 1_000);
    const bindPending = async (at: number, from: number) => {
      time.freeze(at);
      const stuck = await chain.payPending(randomWallet(), 'USDT', '1', { from });
      const bound = await postBind(node.kassa, id, { tx_hash: stuck.hash, chain_id: '31337', crypto_currency: 'USDT' });
      expect(bound.status).toBe(200);
      return stuck;
    };
    await bindPending(t0 + 29 * MIN, 8);
    const last = await bindPending(t0 + 88 * MIN, 9);
    try {
      // The quote ended at 30 min, its grace at 90: the first bind is rejected `not mined` (89 min), the second is
      // still pending, and the session is re-priced.
      await scanAt(t0 + 95 * MIN);
      expect(await requoteDueSessions(node.kassa.ctx)).toBe(1);
      expect(await usdtOf(id)).not.toBe(usdt);
    } finally {
      await last.release();
    }
  });

  it("unique amounts are taken at Kassa's clock (block times are judged by it), by a create and by a re-pricing", async () => {
    const t0 = startOfTest();
    time.freeze(t0);
    const merchant = await createMerchant(node.kassa.ctx, { wallet: randomWallet() });
    const first = await create(node.kassa, merchant);
    // The other instance's first create of this basket tries the step the first one holds: the smallest free one.
    time.freeze(t0 + 1_000);
    const other = await create(second, merchant);
    expect(new Decimal(other.usdt).minus(first.usdt).toFixed()).toBe('0.000001');
    const takenAt = (id: string) =>
      node.kassa.runtime.db.prisma.$queryRaw<Array<{ created_at: Date }>>`
        SELECT DISTINCT created_at FROM payment_amount_claims WHERE session_id = ${id}::uuid AND released_at IS NULL`;
    expect(await takenAt(first.id)).toEqual([{ created_at: new Date(t0) }]);
    expect(await takenAt(other.id)).toEqual([{ created_at: new Date(t0 + 1_000) }]);
    await scanAt(t0 + 30 * MIN + 31_000);
    time.freeze(t0 + 30 * MIN + 40_000);
    expect(await requoteDueSessions(node.kassa.ctx)).toBe(2);
    expect(await takenAt(first.id)).toEqual([{ created_at: new Date(t0 + 30 * MIN + 40_000) }]);
  });

  it("an exact payment of the new amount, its block stamped seconds before the re-pricing (the chain's clock behind), is judged at the new amount", async () => {
    const t0 = startOfTest();
    time.freeze(t0);
    await nextBlockAt(t0);
    await chain.mine(1);
    const merchant = await createMerchant(node.kassa.ctx, { wallet: randomWallet() });
    const s = await create(node.kassa, merchant);
    await scanAt(t0 + 30 * MIN + 31_000);
    const repriced = t0 + 30 * MIN + 40_000;
    time.freeze(repriced);
    prices.BTC = '101000';
    expect(await requoteDueSessions(node.kassa.ctx)).toBe(1);
    const btc = ((await read(s.id)).crypto_options as Array<{ ticker: string; amount: string }>).find(
      (o) => o.ticker === 'BTC',
    )!.amount;
    expect(btc).not.toBe(s.btc);
    // The payer sent what the page asked after the re-pricing; the block's timestamp reads 10 s before it.
    await nextBlockAt(repriced - 10_000);
    await chain.pay(merchant.wallet, 'BTC', btc, { from: 6 });
    await chain.mine(2);
    await scanAt(repriced + 5_000);
    expect(await read(s.id)).toMatchObject({
      status: 'paid',
      crypto_currency: 'BTC',
      total_amount_crypto: btc,
      overpaid: false,
    });
  });

  it("an amount a re-pricing gave up stays its session's for a while: its payer's transfer of it is reserved for it", async () => {
    // Found by a review: S2 gives amount Y up when it is re-priced; once that was scanned past, Y was free. S2's
    // payer, on a page not yet updated, sends Y; before the block was scanned, S was re-priced onto Y and the scan paid
    // S with it. That was closed by judging the claim at the block's time (the transfer was no one's by amount), and
    // then S2's payer had to bind it first: any open session of the merchant could (2026-11-28, an attacker-minded
    // review). Now S2 keeps Y for the in-flight grace, and the transfer is reserved for S2 (docs/payment-rules.md, rule 2).
    const t0 = startOfTest();
    time.freeze(t0);
    await nextBlockAt(t0);
    await chain.mine(1);
    const merchant = await createMerchant(node.kassa.ctx, { wallet: randomWallet() });
    const s2 = await create(node.kassa, merchant);
    time.freeze(t0 + 10 * MIN);
    const s = await create(node.kassa, merchant);
    expect(new Decimal(s.usdt).minus(s2.usdt).toFixed()).toBe('0.000001');
    await scanAt(t0 + 10 * MIN + 1_000);

    // S2's quote ends (S's only ten minutes later): S2 is re-priced and gives Y up.
    await scanAt(t0 + 30 * MIN + 31_000);
    time.freeze(t0 + 30 * MIN + 32_000);
    expect(await requoteDueSessions(node.kassa.ctx)).toBe(1);
    expect(await usdtOf(s2.id)).not.toBe(s2.usdt);
    expect(await usdtOf(s.id)).toBe(s.usdt);
    expect(await claimOf(merchant.wallet, s2.usdt)).toEqual([
      { session_id: s2.id, released_at: new Date(t0 + 30 * MIN + 32_000) },
    ]);

    // Scanned past S2's release and S's quote end: S is re-priced, and Y is still S2's.
    const u = t0 + 40 * MIN + 31_000;
    await scanAt(u);
    await nextBlockAt(u + 10_000);
    time.freeze(u + 10_000);
    const sent = await chain.pay(merchant.wallet, 'USDT', s2.usdt, { from: 7 });
    time.freeze(u + 60_000);
    expect(await requoteDueSessions(node.kassa.ctx)).toBe(1);
    expect(await usdtOf(s.id)).not.toBe(s2.usdt);
    expect(await claimOf(merchant.wallet, s2.usdt)).toHaveLength(1);

    await chain.mine(2);
    await scanAt(u + 65_000);
    // Mined after S2 gave Y up: no one's by amount, reserved for S2. S's bind of it is refused; S2's takes it.
    expect(await paymentsOf(s.id)).toEqual([]);
    const unattributed = (await node.kassa.ctx.store.chain.unattributedPayments(1000)).map((p) => p.txHash);
    expect(unattributed).toContain(sent.hash);
    const taken = await postBind(node.kassa, s.id, { tx_hash: sent.hash, chain_id: '31337', crypto_currency: 'USDT' });
    expect(taken.status, JSON.stringify(taken.body)).toBe(409);
    const own = await postBind(node.kassa, s2.id, { tx_hash: sent.hash, chain_id: '31337', crypto_currency: 'USDT' });
    expect(own.status, JSON.stringify(own.body)).toBe(200);
    expect((await paymentsOf(s2.id)).map((p) => [p.txHash, p.attribution])).toEqual([[sent.hash, 'bound_tx']]);
  });
});

describe('found by an attacker-minded review (2026-11-28): a session locked at a quote a re-pricing released', () => {
  // Three confirmations: the payer's part stays pending for two blocks after it is bound.
  let deep: ChainKassa;
  let deepSecond: TestKassa;
  beforeAll(async () => {
    const env = { KASSA_QUOTE_TTL_MINUTES: '30', KASSA_CONFIRMATIONS_LOCAL: '3' };
    deep = await startChainKassa(chain.url, { clock: time.clock, env, override: { rates } });
    // Another instance on its database, without a watcher, where the other session is created.
    deepSecond = await startTestKassa({
      clock: time.clock,
      database: deep.kassa.database,
      override: { rates },
      env: { KASSA_NETWORKS: 'local', KASSA_RPC_URLS_LOCAL: chain.url, ...env },
    });
  }, 60_000);
  afterAll(async () => {
    await deepSecond?.close();
    await deep?.close();
  });
  const scan = async (at: number) => {
    time.freeze(at);
    await deep.watchers.tick();
  };
  const view = async (id: string) => (await deep.kassa.http.get(`/checkout-sessions/${id}`)).body;

  it("asks a unique rest of its own, never an amount another session holds: the payer's transfer as asked pays it", async () => {
    const t0 = startOfTest();
    time.freeze(t0);
    await nextBlockAt(t0);
    await chain.mine(1);
    const merchant = await createMerchant(deep.kassa.ctx, { wallet: randomWallet() });
    const s = await create(deep.kassa, merchant, { ...lamp, expires_in_minutes: 180 });
    expect(s.btc).toBe('0.00100000');
    // A part of it, not an exact amount: scanning credits nobody, and the quote is not held by it.
    const t1 = t0 + 10 * MIN;
    await nextBlockAt(t1);
    time.freeze(t1);
    const part = await chain.pay(merchant.wallet, 'BTC', '0.0005', { from: 4 });
    await scan(t1 + 2_000);
    // Re-priced after its quote's end: 0.002 now; 0.001 released. S keeps it for a quote lifetime (rule 2's
    // reservation; until 2026-11-28, night, it was free once scanned past the release): another session at the old
    // price meanwhile gets the next step.
    prices.BTC = '50000';
    await scan(t0 + 31 * MIN);
    expect(await requoteDueSessions(deep.kassa.ctx)).toBeGreaterThanOrEqual(1);
    await scan(t0 + 31 * MIN + 31_000);
    await requoteDueSessions(deep.kassa.ctx);
    prices.BTC = '100000';
    time.freeze(t0 + 32 * MIN);
    expect((await create(deepSecond, merchant)).btc).toBe('0.00100001');
    // A quote lifetime after the release, scanned past, 0.001 is free again, and another session takes it.
    await scan(t0 + 62 * MIN);
    await deep.kassa.ctx.store.purgeReleasedAmountClaims(
      new Date(t0 + 62 * MIN),
      deep.kassa.ctx.inflightGraceMinutes,
      deep.kassa.ctx.quoteTtlMinutes,
    );
    expect(
      await deep.kassa.runtime.db.prisma.$queryRaw`
      SELECT session_id FROM payment_amount_claims WHERE wallet_address = ${merchant.wallet} AND asset = 'BTC'
         AND amount = 0.001`,
    ).toEqual([]);
    // An instance that has handed out no step of this basket yet tries the smallest first (create's hints).
    const third = await startTestKassa({
      clock: time.clock,
      database: deep.kassa.database,
      override: { rates },
      env: { KASSA_NETWORKS: 'local', KASSA_RPC_URLS_LOCAL: chain.url, KASSA_QUOTE_TTL_MINUTES: '30' },
    });
    const other = await create(third, merchant).finally(() => third.close());
    expect(other.btc).toBe('0.00100000');
    // S's payer binds their part: S is locked at the quote valid when it was mined, 0.001, an amount S gave up;
    // the part is pending (one confirmation of three).
    const bound = await postBind(deep.kassa, s.id, { tx_hash: part.hash, chain_id: '31337', crypto_currency: 'BTC' });
    expect(bound.status, JSON.stringify(bound.body)).toBe(200);
    expect(bound.body.total_amount_crypto).toBe('0.00100000');
    await scan(t0 + 62 * MIN + 2_000);
    expect(await view(s.id)).toMatchObject({ status: 'waiting_payment', crypto_currency: 'BTC' });
    const asked = await deep.kassa.http
      .post('/graphql')
      .send({ query: `{ checkoutSession(id: "${s.id}") { amountDue amountPending paymentOptions { amount } } }` });
    const { amountDue, amountPending, paymentOptions } = asked.body.data.checkoutSession;
    expect(amountPending).toBe('0.00050000');
    // A unique amount of its own, never the one the other session holds.
    expect(amountDue).not.toBe(other.btc);
    expect(new Decimal(amountDue).greaterThan('0.001')).toBe(true);
    expect(paymentOptions.map((o: { amount: string }) => o.amount)).toEqual([amountDue]);

    // The payer sends what the page asks: it pays S, never the other session.
    const t2 = t0 + 63 * MIN;
    await nextBlockAt(t2);
    time.freeze(t2);
    const topUp = await chain.pay(merchant.wallet, 'BTC', amountDue, { from: 5 });
    await chain.mine(3);
    await scan(t2 + 5_000);
    await scan(t2 + 6_000);
    expect(await deep.kassa.ctx.store.chain.paymentsOfSession(other.id)).toEqual([]);
    expect((await view(other.id)).status).toBe('waiting_payment');
    const credited = await deep.kassa.ctx.store.chain.paymentsOfSession(s.id);
    expect(credited.map((p) => p.txHash).sort()).toEqual([part.hash, topUp.hash].sort());
    expect(await view(s.id)).toMatchObject({ status: 'paid', total_amount_crypto: '0.00100000' });
  });
});
