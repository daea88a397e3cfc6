import { randomBytes } from 'node:crypto';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { devPay } from '../../src/chain/dev-pay.js';
import { settleChangedSessions } from '../../src/chain/settle-changed-sessions.js';
import { expireDueSessions } from '../../src/domain/sessions/expire-sessions.js';
import { createLogger } from '../../src/logging.js';
import { createOrganisation, setWallet } from '../../src/domain/organisations/organisations.js';
import { Decimal } from '../../src/domain/shared/money.js';
import { checkoutRequest } from '../factories/checkout-request.js';
import { createMerchant, type TestMerchant } from '../factories/merchant.js';
import { startChainKassa, startTestChain, type ChainKassa, type TestChain } from '../support/chain.js';
import { testDatabaseMode } from '../support/databases.js';
import { controllableClock, createSession, postBind } from '../support/rest-kassa.js';

/**
 * Issue 9, against a real anvil: no transfer pays a session it was not meant for,
 * and exact payments are judged exactly. Each test here failed before the change
 * that made it pass (see the commit that added this file).
 */

const CHAIN_ID = '31337';
const embedded = testDatabaseMode() === 'embedded';
const MIN = 60_000;

let chain: TestChain;
let node: ChainKassa;
const time = controllableClock();

beforeAll(async () => {
  chain = await startTestChain();
  // Three confirmations: a transfer is seen (on chain, not yet counted) for two blocks.
  node = await startChainKassa(chain.url, { clock: time.clock, env: { KASSA_CONFIRMATIONS_LOCAL: '3' } });
}, 60_000);

afterAll(async () => {
  await node?.close();
  await chain?.stop();
});

afterEach(() => time.release());

const randomWallet = () => `0x${randomBytes(20).toString('hex')}`;
const randomHash = () => `0x${randomBytes(32).toString('hex')}`;

/** Mines enough blocks for the payments so far to confirm, then ticks the watcher. */
async function confirmAll(): Promise<void> {
  await chain.mine(3);
  await node.watchers.tick();
}

interface Checkout {
  readonly merchant: TestMerchant;
  readonly wallet: string;
  readonly id: string;
  readonly quote: Record<string, string>;
}

async function checkout(options: { merchant?: TestMerchant; body?: Record<string, unknown> } = {}): Promise<Checkout> {
  const merchant = options.merchant ?? (await createMerchant(node.kassa.ctx, { wallet: randomWallet() }));
  const session = await createSession(node.kassa, merchant, checkoutRequest(options.body));
  const quote = Object.fromEntries(
    (session.crypto_options as Array<{ ticker: string; amount: string }>).map((o) => [o.ticker, o.amount]),
  );
  return { merchant, wallet: merchant.wallet, id: session.session_id as string, quote };
}

async function view(id: string): Promise<Record<string, any>> {
  const response = await node.kassa.http.get(`/checkout-sessions/${id}`);
  expect(response.status).toBe(200);
  return response.body;
}

async function graphqlSession(id: string, fields: string): Promise<Record<string, any>> {
  const response = await node.kassa.http
    .post('/graphql')
    .set('content-type', 'application/json')
    .send({ query: `{ checkoutSession(id: "${id}") { ${fields} } }` });
  expect(response.body.errors, JSON.stringify(response.body.errors)).toBeUndefined();
  return response.body.data.checkoutSession;
}

async function eventTypes(id: string): Promise<string[]> {
  const rows = await node.kassa.runtime.db.prisma.$queryRaw<Array<{ type: string }>>`
    SELECT type FROM outbox_events WHERE session_id = ${id}::uuid ORDER BY seq`;
  return rows.map((row) => row.type.replace('checkout_session.', ''));
}

const paymentsOf = (id: string) => node.kassa.ctx.store.chain.paymentsOfSession(id);
const unattributed = async () => (await node.kassa.ctx.store.chain.unattributedPayments(10_000)).map((p) => p.txHash);
const bind = (id: string, body: Record<string, unknown>) => postBind(node.kassa, id, { chain_id: CHAIN_ID, ...body });

describe('1. a transfer pays only a session created before it was mined, on its wallet, in its asset', () => {
  it('a transfer that matched no session cannot be claimed by a session created after it was mined', async () => {
    const merchant = await createMerchant(node.kassa.ctx, { wallet: randomWallet() });
    await checkout({ merchant }); // an open session, so the wallet is watched
    // An exchange withdrawal net of fees: it matches no session and waits for an operator.
    const sent = await chain.pay(merchant.wallet, 'USDT', '104.5', { from: 2 });
    await confirmAll();
    expect(await unattributed()).toContain(sent.hash);

    // Later, a session priced to that amount is created and the old transfer is bound to it.
    // 90 s later: beyond the 30 s clock skew allowed between a block's time and the session's creation.
    time.freeze(Date.now() + 90_000);
    const later = await checkout({
      merchant,
      body: { items: [{ name: 'Exactly that', quantity: 1, unit_price: 104.5 }], currency: 'USD' },
    });
    const refused = await bind(later.id, { tx_hash: sent.hash, crypto_currency: 'USDT' });
    expect(refused.status).toBe(409);
    expect(refused.body.message).toMatch(/mined before this checkout session was created/);
    await confirmAll();
    expect(await view(later.id)).toMatchObject({
      status: 'waiting_payment',
      crypto_currency: null,
      bound_tx_hash: null,
    });
    expect(await paymentsOf(later.id)).toEqual([]);
    expect(await unattributed()).toContain(sent.hash);
  });

  it('a transfer to another wallet or in another asset is refused at bind and never credited', async () => {
    const session = await checkout();
    const elsewhere = await chain.pay(randomWallet(), 'USDT', session.quote.USDT!, { from: 3 });
    const wrongAsset = await chain.pay(session.wallet, 'USDC', '5', { from: 3 });
    const toWrongWallet = await bind(session.id, { tx_hash: elsewhere.hash, crypto_currency: 'USDT' });
    expect(toWrongWallet.status).toBe(409);
    expect(toWrongWallet.body.message).toMatch(/^wrong recipient: /);
    const inWrongAsset = await bind(session.id, { tx_hash: wrongAsset.hash, crypto_currency: 'USDT' });
    expect(inWrongAsset.status).toBe(409);
    expect(inWrongAsset.body.message).toMatch(/^wrong asset: /);
    await confirmAll();
    expect(await view(session.id)).toMatchObject({ status: 'waiting_payment', crypto_currency: null });
    expect(await paymentsOf(session.id)).toEqual([]);
  });

  it('a transaction from another sender than the payer wallet named at bind is never credited, by either of two instances', async () => {
    // The embedded database is served by one process: a second instance cannot open it.
    const second = embedded
      ? node
      : await startChainKassa(chain.url, {
          clock: time.clock,
          database: node.kassa.database,
          env: { KASSA_CONFIRMATIONS_LOCAL: '3' },
        });
    try {
      const session = await checkout();
      const claimed = '0x90f79bf6eb2c4f870365e785982e1f101e93b906'; // sandbox account 3: it did not send this
      const sent = await chain.pay(session.wallet, 'USDT', new Decimal(session.quote.USDT!).minus(1).toFixed(6), {
        from: 2,
      });
      const refused = await postBind(second.kassa, session.id, {
        tx_hash: sent.hash,
        chain_id: CHAIN_ID,
        crypto_currency: 'USDT',
        payer_wallet_address: claimed,
      });
      expect(refused.status).toBe(409);
      expect(refused.body.message).toMatch(/^wrong sender: /);
      await chain.mine(3);
      await Promise.all([node.watchers.tick(), second.watchers.tick()]);
      await Promise.all([node.watchers.tick(), second.watchers.tick()]);
      expect((await view(session.id)).status).toBe('waiting_payment');
      expect(await paymentsOf(session.id)).toEqual([]);
    } finally {
      if (second !== node) await second.close();
    }
  });

  it('two organisations cannot share a receiving wallet on a network', async () => {
    const wallet = randomWallet();
    await createMerchant(node.kassa.ctx, { wallet, network: 'local' });
    await expect(createOrganisation(node.kassa.ctx, { name: 'Copycat', wallet, network: 'local' })).rejects.toThrow(
      /already receives payments for another organisation/,
    );
    const other = await createOrganisation(node.kassa.ctx, { name: 'Other', receiving: 'shared' });
    await expect(
      setWallet(node.kassa.ctx, other.id, wallet.toUpperCase().replace('0X', '0x'), 'local'),
    ).rejects.toThrow(/already receives payments for another organisation/);
  });
});

describe('2. exact payments in a token of 6 decimals are exact', () => {
  it('quotes amounts the token can carry, and `kassa dev pay` pays exactly: paid, not overpaid', async () => {
    const session = await checkout();
    // 105 USD / 1.0002 = 104.979004199…: 104.97900420 to 8 digits, but USDT has 6 on this chain.
    expect(session.quote.USDT).toMatch(/^\d+\.\d{6}00$/);
    const options = await graphqlSession(session.id, 'paymentOptions { network ticker decimals amount baseUnits uri }');
    const usdt = options.paymentOptions.find(
      (o: { network: string; ticker: string }) => o.network === 'local' && o.ticker === 'USDT',
    );
    expect(usdt.decimals).toBe(6);
    expect(usdt.amount).toBe(new Decimal(session.quote.USDT!).toFixed(6));
    expect(usdt.baseUnits).toBe(new Decimal(session.quote.USDT!).times(1e6).toFixed(0));
    expect(usdt.uri).toContain(`uint256=${usdt.baseUnits}`);
    const qr = await node.kassa.http.get(`/pay/${session.id}/qr.svg?network=local&asset=USDT`);
    expect(qr.headers['x-payment-uri']).toBe(usdt.uri);

    const paid = await devPay(node.kassa.ctx, session.id, { asset: 'USDT' });
    expect(paid.amount).toBe(usdt.amount);
    await confirmAll();
    expect(await view(session.id)).toMatchObject({
      status: 'paid',
      overpaid: false,
      crypto_currency: 'USDT',
      total_amount_crypto: session.quote.USDT,
    });
  });
});

describe('3. on time means sent on time', () => {
  it('a transfer mined before expires_at and confirmed after it keeps the session open, then pays it: never expired, never late', async () => {
    const session = await checkout();
    await chain.pay(session.wallet, 'USDC', session.quote.USDC!, { from: 4 });
    await node.watchers.tick();
    expect(await graphqlSession(session.id, 'status paymentDetected')).toEqual({
      status: 'WAITING_PAYMENT',
      paymentDetected: true,
    });

    time.freeze(Date.now() + 61 * MIN);
    await node.watchers.tick();
    expect((await view(session.id)).status).toBe('waiting_payment');
    await expireDueSessions(node.kassa.ctx);
    expect((await view(session.id)).status).toBe('waiting_payment');

    await confirmAll();
    expect(await view(session.id)).toMatchObject({ status: 'paid', overpaid: false });
    expect(await eventTypes(session.id)).toEqual(['created', 'paid']);
    expect((await paymentsOf(session.id)).map((p) => p.late)).toEqual([false]);
  });

  it('a transfer confirmed but not yet counted still holds the session: a read or a sweep in between expires nothing', async () => {
    const session = await checkout();
    await chain.pay(session.wallet, 'USDC', session.quote.USDC!, { from: 4 });
    await node.watchers.tick();
    // Past expires_at the watcher has looked past it too: only the payment in flight holds the session now.
    time.freeze(Date.now() + 61 * MIN);
    await node.watchers.tick();
    expect((await view(session.id)).status).toBe('waiting_payment');
    await chain.mine(3);
    // The watcher's first half: the payment confirmed and its session flagged for counting; settleChangedSessions
    // counts it once every network's tick is done, and a read or another instance's sweep may come in between.
    const payments = await paymentsOf(session.id);
    expect(payments.map((p) => p.state)).toEqual(['seen']);
    await node.kassa.ctx.store.chain.confirmPayments(
      payments.map((p) => ({ id: p.id, blockHash: p.blockHash })),
      time.clock(),
    );
    expect((await paymentsOf(session.id)).map((p) => p.state)).toEqual(['confirmed']);

    expect((await view(session.id)).status).toBe('waiting_payment');
    await expireDueSessions(node.kassa.ctx);
    expect((await view(session.id)).status).toBe('waiting_payment');

    await node.watchers.tick();
    expect(await view(session.id)).toMatchObject({ status: 'paid', overpaid: false });
    expect(await eventTypes(session.id)).toEqual(['created', 'paid']);
    expect((await paymentsOf(session.id)).map((p) => p.late)).toEqual([false]);
  });

  it("a payment a reorganisation reversed holds its session past expires_at until the rescan reaches the head, not the rollback's tick", async () => {
    const session = await checkout();
    await chain.pay(session.wallet, 'USDC', session.quote.USDC!, { from: 4 });
    await node.watchers.tick();
    const [payment] = await paymentsOf(session.id);
    // Past expires_at the watcher has looked past it: only the payment in flight holds the session.
    time.freeze(Date.now() + 61 * MIN);
    await node.watchers.tick();
    expect((await view(session.id)).status).toBe('waiting_payment');
    // A reorganisation's rollback from the payment's block, and a rescan that does not finish in that tick (an RPC
    // error, the head moving again): the session's totals are settled, as every tick's end does, by this instance or
    // another, and a sweep runs.
    time.freeze(time.clock().getTime() + 5_000);
    expect(await node.kassa.ctx.store.chain.rollBack('local', payment!.blockNumber, time.clock())).toBe(1);
    await settleChangedSessions(node.kassa.ctx, createLogger('silent'));
    expect(await graphqlSession(session.id, 'amountPending paymentDetected')).toEqual({
      amountPending: '0.00000000',
      paymentDetected: false,
    });
    await expireDueSessions(node.kassa.ctx);
    expect((await view(session.id)).status).toBe('waiting_payment');
    // The rescan finds the transfer again (here it never left the chain): on time, it pays the session.
    time.freeze(time.clock().getTime() + 5_000);
    await node.watchers.tick();
    await confirmAll();
    expect(await view(session.id)).toMatchObject({ status: 'paid', overpaid: false });
    expect(await eventTypes(session.id)).toEqual(['created', 'paid']);
    expect((await paymentsOf(session.id)).map((p) => p.late)).toEqual([false]);
  });

  it('a transfer mined before expires_at but scanned after it is on time', async () => {
    await node.watchers.tick(); // the watcher runs while the session is open…
    const session = await checkout();
    await chain.pay(session.wallet, 'SOL', session.quote.SOL!, { from: 4 });
    await chain.mine(3);
    // …but has not looked since before the transfer when time runs out.
    time.freeze(Date.now() + 60 * MIN + 10_000);
    expect((await view(session.id)).status).toBe('waiting_payment');
    await expireDueSessions(node.kassa.ctx);
    await node.watchers.tick();
    expect(await view(session.id)).toMatchObject({ status: 'paid', crypto_currency: 'SOL' });
    expect(await eventTypes(session.id)).toEqual(['created', 'paid']);
  });

  it('with nothing on chain, the session expires once the watcher has looked past expires_at', async () => {
    const session = await checkout();
    time.freeze(Date.now() + 61 * MIN);
    await node.watchers.tick();
    expect((await view(session.id)).status).toBe('expired');
  });
});

describe('4. a bind is a hint, not a lock', () => {
  it('a hash unknown to the chain locks nothing and blocks nobody: the payer binds the real one and it pays', async () => {
    const session = await checkout();
    const junk = randomHash();
    const first = await bind(session.id, { tx_hash: junk, crypto_currency: 'BTC' });
    expect(first.status).toBe(200);
    expect(await view(session.id)).toMatchObject({ crypto_currency: null, bound_tx_hash: null });

    const half = new Decimal(session.quote.USDT!).dividedBy(2).toFixed(6);
    const sent = await chain.pay(session.wallet, 'USDT', half, { from: 5 });
    const real = await bind(session.id, {
      tx_hash: sent.hash,
      crypto_currency: 'USDT',
      payer_wallet_address: sent.from,
    });
    expect(real.status, JSON.stringify(real.body)).toBe(200);
    expect(real.body).toMatchObject({
      bound_tx_hash: sent.hash,
      crypto_currency: 'USDT',
      total_amount_crypto: session.quote.USDT,
    });
    // The junk hash is also free for another session.
    const other = await checkout({ merchant: session.merchant });
    expect((await bind(other.id, { tx_hash: junk, crypto_currency: 'ETH' })).status).toBe(200);

    await confirmAll();
    expect(await view(session.id)).toMatchObject({
      status: 'partial',
      crypto_currency: 'USDT',
      bound_tx_hash: sent.hash,
    });
    // A second transfer is attached by a second bind, verified by the same rules.
    const rest = new Decimal(session.quote.USDT!).minus(half).toFixed(6);
    const second = await chain.pay(session.wallet, 'USDT', rest, { from: 6 });
    expect((await bind(session.id, { tx_hash: second.hash })).status).toBe(200);
    await confirmAll();
    expect(await view(session.id)).toMatchObject({ status: 'paid', overpaid: false });
    expect((await paymentsOf(session.id)).map((p) => [p.txHash, p.attribution])).toEqual([
      [sent.hash, 'bound_tx'],
      [second.hash, 'bound_tx'],
    ]);
  });

  it("another session's bind of a transfer cannot take it from the session whose exact amount it is", async () => {
    const merchant = await createMerchant(node.kassa.ctx, { wallet: randomWallet() });
    const victim = await checkout({ merchant });
    const attacker = await checkout({
      merchant,
      body: { items: [{ name: 'Sticker', quantity: 1, unit_price: 1 }], currency: 'USD' },
    });
    const raw = await chain.signPayment(merchant.wallet, 'USDC', victim.quote.USDC!, { from: 7 });
    const hash = await chain.sendRaw(raw);
    // The attacker binds first, naming the victim's wallet as payer.
    await bind(attacker.id, {
      tx_hash: hash,
      crypto_currency: 'USDC',
      payer_wallet_address: '0x14dc79964da2c08b23698b3d3cc7ca32193d9955',
    });
    await confirmAll();
    expect(await view(victim.id)).toMatchObject({ status: 'paid', overpaid: false });
    expect(await view(attacker.id)).toMatchObject({ status: 'waiting_payment' });
    expect(await paymentsOf(attacker.id)).toEqual([]);
  });
});

describe('5. amounts unique per wallet: exact transfers need no bind', () => {
  it('50 concurrent sessions on one wallet, each paid exactly without a bind → 50 paid, none overpaid, nothing unattributed', async () => {
    const merchant = await createMerchant(node.kassa.ctx, { wallet: randomWallet() });
    const sessions = await Promise.all(Array.from({ length: 50 }, () => checkout({ merchant })));
    const amounts = sessions.map((s) => s.quote.USDT!);
    expect(new Set(amounts).size).toBe(50);
    for (const amount of amounts)
      expect(new Decimal(amount).minus(sessions[0]!.quote.USDT!).abs().lessThanOrEqualTo('0.0001')).toBe(true);
    const hashes: string[] = [];
    for (const [index, session] of sessions.entries())
      hashes.push((await chain.pay(merchant.wallet, 'USDT', session.quote.USDT!, { from: 2 + (index % 8) })).hash);
    await node.watchers.tick();
    await confirmAll();
    const views = await Promise.all(sessions.map((s) => view(s.id)));
    expect(views.filter((v) => v.status === 'paid')).toHaveLength(50);
    expect(views.filter((v) => v.overpaid)).toHaveLength(0);
    const left = await unattributed();
    expect(hashes.filter((hash) => left.includes(hash))).toEqual([]);
  });

  // Skipped on the embedded database: it is served by one process; a second instance cannot open it.
  it.skipIf(embedded)(
    'scan and bind racing on two instances credit the transfer exactly once, to its session',
    async () => {
      const second = await startChainKassa(chain.url, {
        clock: time.clock,
        database: node.kassa.database,
        env: { KASSA_CONFIRMATIONS_LOCAL: '3' },
      });
      try {
        const merchant = await createMerchant(node.kassa.ctx, { wallet: randomWallet() });
        const sessions = await Promise.all(Array.from({ length: 6 }, () => checkout({ merchant })));
        const sent: Array<{ hash: string }> = [];
        for (const [index, session] of sessions.entries())
          sent.push(await chain.pay(merchant.wallet, 'BTC', session.quote.BTC!, { from: 2 + index }));
        const [, , ...binds] = await Promise.all([
          node.watchers.tick(),
          second.watchers.tick(),
          ...sessions.map((session, index) =>
            postBind(index % 2 ? second.kassa : node.kassa, session.id, {
              tx_hash: sent[index]!.hash,
              chain_id: CHAIN_ID,
              crypto_currency: 'BTC',
            }),
          ),
        ]);
        expect(binds.map((response) => response.status)).toEqual(sessions.map(() => 200));
        await chain.mine(3);
        await Promise.all([node.watchers.tick(), second.watchers.tick()]);
        await Promise.all([node.watchers.tick(), second.watchers.tick()]);
        for (const [index, session] of sessions.entries()) {
          expect(await view(session.id)).toMatchObject({ status: 'paid', overpaid: false });
          expect((await paymentsOf(session.id)).map((p) => p.txHash)).toEqual([sent[index]!.hash]);
          // One tx_bound at most: on a loaded host the bind's own chain lookup may time out (KASSA_BIND_LOOKUP_TIMEOUT_MS),
          // and the bind stays a hint the exact amount made moot.
          const events = await eventTypes(session.id);
          expect(events.filter((type) => type !== 'tx_bound')).toEqual(['created', 'paid']);
          expect(events.filter((type) => type === 'tx_bound').length).toBeLessThanOrEqual(1);
        }
      } finally {
        await second.close();
      }
    },
  );

  it("a partial session's rest is an amount of its own: a top-up equal to another session's unique amount pays the partial session, not the other", async () => {
    const merchant = await createMerchant(node.kassa.ctx, { wallet: randomWallet() });
    const partial = await checkout({ merchant });
    const other = await checkout({
      merchant,
      body: { items: [{ name: 'Tea', quantity: 1, unit_price: 40 }], currency: 'USD' },
    });
    // The first part leaves exactly the other session's unique amount owed.
    const first = new Decimal(partial.quote.USDT!).minus(other.quote.USDT!).toFixed(6);
    const sent = await chain.pay(merchant.wallet, 'USDT', first, { from: 5 });
    expect((await bind(partial.id, { tx_hash: sent.hash, crypto_currency: 'USDT' })).status).toBe(200);
    await confirmAll();
    await node.watchers.tick();
    const asked = await graphqlSession(partial.id, 'status amountDue paymentOptions { amount baseUnits }');
    expect(asked.status).toBe('PARTIAL');
    expect(asked.amountDue).not.toBe(other.quote.USDT);
    expect(new Decimal(asked.paymentOptions[0].amount).toFixed(8)).toBe(asked.amountDue);
    // The payer sends what the page asks for, and does not bind it: it pays by amount.
    const topUp = await chain.pay(merchant.wallet, 'USDT', asked.amountDue, { from: 5 });
    await node.watchers.tick();
    await confirmAll();
    await node.watchers.tick();
    expect(await view(partial.id)).toMatchObject({ status: 'paid', overpaid: false });
    expect(await view(other.id)).toMatchObject({ status: 'waiting_payment' });
    expect((await paymentsOf(partial.id)).map((p) => [p.txHash, p.attribution])).toEqual([
      [sent.hash, 'bound_tx'],
      [topUp.hash, 'exact_amount'],
    ]);
    expect(await paymentsOf(other.id)).toEqual([]);
    // The other session's payer still pays it exactly.
    await chain.pay(merchant.wallet, 'USDT', other.quote.USDT!, { from: 6 });
    await confirmAll();
    await node.watchers.tick();
    expect(await view(other.id)).toMatchObject({ status: 'paid', overpaid: false });
  });

  // Found by reviews: when no rest amount was free, the page asked for the plain difference, which another session
  // held, and the top-up paid that session; sharing it instead let a stranger who arranged it bind the holder's payment.
  it("when the first 100 rest amounts are held, the rest is the next free one: never another session's amount, nor shared", async () => {
    const merchant = await createMerchant(node.kassa.ctx, { wallet: randomWallet() });
    const partial = await checkout({ merchant });
    // 100 sessions of one basket hold its 100 amounts (KASSA_UNIQUE_AMOUNT_STEPS) from its base up.
    const tea = { items: [{ name: 'Tea', quantity: 1, unit_price: 40 }], currency: 'USD' };
    const others = await Promise.all(Array.from({ length: 100 }, () => checkout({ merchant, body: tea })));
    const base = others.map((o) => new Decimal(o.quote.USDT!)).reduce((a, b) => Decimal.min(a, b));
    const holder = others.find((o) => new Decimal(o.quote.USDT!).equals(base))!;
    const first = new Decimal(partial.quote.USDT!).minus(base).toFixed(6);
    const sent = await chain.pay(merchant.wallet, 'USDT', first, { from: 5 });
    expect((await bind(partial.id, { tx_hash: sent.hash, crypto_currency: 'USDT' })).status).toBe(200);
    await confirmAll();
    await node.watchers.tick();
    const asked = await graphqlSession(partial.id, 'status amountDue');
    expect(asked).toEqual({ status: 'PARTIAL', amountDue: base.plus('0.0001').toFixed(8) });
    const topUp = await chain.pay(merchant.wallet, 'USDT', asked.amountDue, { from: 5 });
    await confirmAll();
    await node.watchers.tick();
    expect(await view(partial.id)).toMatchObject({ status: 'paid', overpaid: false });
    expect((await paymentsOf(partial.id)).map((p) => [p.txHash, p.attribution])).toEqual([
      [sent.hash, 'bound_tx'],
      [topUp.hash, 'exact_amount'],
    ]);
    // The holder's payer still pays it by amount, with no bind.
    expect(await view(holder.id)).toMatchObject({ status: 'waiting_payment' });
    const holderPaid = await chain.pay(merchant.wallet, 'USDT', holder.quote.USDT!, { from: 6 });
    await confirmAll();
    await node.watchers.tick();
    expect(await view(holder.id)).toMatchObject({ status: 'paid', overpaid: false });
    // Nor can the partial session's side take it.
    expect((await bind(partial.id, { tx_hash: holderPaid.hash })).status).toBe(409);
    expect((await paymentsOf(holder.id)).map((p) => p.txHash)).toEqual([holderPaid.hash]);
  });

  // Found by a review: past expires_at the rest asked before was kept while what was owed dropped, so the page asked
  // for the larger old amount and an overpayment up to the difference passed as the rest's raise (overpaid: false).
  // (Giving that rest up instead, the first fix, let the page ask another session's amount: the next test.)
  it('held open past expires_at, a part payment that confirms asks the rest anew: amountDue follows what is owed, and an overpayment is flagged', async () => {
    const session = await checkout();
    const quote = new Decimal(session.quote.USDT!);
    const first = await chain.pay(session.wallet, 'USDT', quote.minus(30).toFixed(6), { from: 5 });
    expect((await bind(session.id, { tx_hash: first.hash, crypto_currency: 'USDT' })).status).toBe(200);
    await confirmAll();
    expect(await graphqlSession(session.id, 'status amountDue')).toEqual({
      status: 'PARTIAL',
      amountDue: '30.00000000',
    });
    // Two more parts, both mined before expires_at, one block apart; the second is 20 + 5: 5 too much.
    const second = await chain.pay(session.wallet, 'USDT', '10', { from: 5 });
    const third = await chain.pay(session.wallet, 'USDT', '25', { from: 5 });
    expect((await bind(session.id, { tx_hash: second.hash })).status).toBe(200);
    expect((await bind(session.id, { tx_hash: third.hash })).status).toBe(200);
    await node.watchers.tick();
    expect(await graphqlSession(session.id, 'status amountDue')).toEqual({
      status: 'PARTIAL',
      amountDue: '30.00000000',
    });
    time.freeze(Date.now() + 61 * MIN);
    // The first of them confirms after expires_at; the second, still confirming, holds the session open.
    await chain.mine(1);
    await node.watchers.tick();
    expect(await graphqlSession(session.id, 'status amountDue')).toEqual({
      status: 'PARTIAL',
      amountDue: '20.00000000',
    });
    await confirmAll();
    expect(await view(session.id)).toMatchObject({ status: 'paid', overpaid: true });
  });

  // Found by a review of the first fix of the test above, which gave the rest up: the page then asked for the plain
  // difference, which a stranger had made another session's unique amount (a part bound by them), and the payer's
  // top-up paid that session.
  it("held open past expires_at, the rest asked after a part confirms is still an amount of its own, never another session's", async () => {
    const merchant = await createMerchant(node.kassa.ctx, { wallet: randomWallet() });
    const session = await checkout({ merchant });
    // The stranger's own session on the merchant's wallet (a public payment link will do): its unique amount.
    const tea = { items: [{ name: 'Tea', quantity: 1, unit_price: 20 }], currency: 'USD' };
    const theirs = await checkout({ merchant, body: tea });
    const target = new Decimal(theirs.quote.USDT!);
    const first = await chain.pay(merchant.wallet, 'USDT', new Decimal(session.quote.USDT!).minus(30).toFixed(6), {
      from: 5,
    });
    expect((await bind(session.id, { tx_hash: first.hash, crypto_currency: 'USDT' })).status).toBe(200);
    await confirmAll();
    // The stranger pays a part leaving exactly their session's amount owed, and a dust transfer one block later that
    // holds the session open past expires_at while it confirms; anyone may bind their own transfer to a session.
    const part = await chain.pay(merchant.wallet, 'USDT', new Decimal(30).minus(target).toFixed(6), { from: 7 });
    const hold = await chain.pay(merchant.wallet, 'USDT', '0.000001', { from: 7 });
    expect((await bind(session.id, { tx_hash: part.hash })).status).toBe(200);
    expect((await bind(session.id, { tx_hash: hold.hash })).status).toBe(200);
    await node.watchers.tick();
    time.freeze(Date.now() + 61 * MIN);
    await chain.mine(1);
    await node.watchers.tick();
    const asked = await graphqlSession(session.id, 'status amountDue paymentOptions { amount }');
    expect(asked.status).toBe('PARTIAL');
    expect(new Decimal(asked.amountDue).greaterThan(target)).toBe(true);
    // The payer pays what the page asks, and binds it: it pays their session, not the stranger's. (Bound: this test's
    // clock runs 61 minutes ahead of the chain's, and a claim made now covers transfers mined from now on.)
    const topUp = await chain.pay(merchant.wallet, 'USDT', asked.paymentOptions[0].amount, { from: 5 });
    expect((await bind(session.id, { tx_hash: topUp.hash })).status).toBe(200);
    await node.watchers.tick();
    await confirmAll();
    expect((await paymentsOf(session.id)).map((p) => p.txHash)).toContain(topUp.hash);
    expect(await view(session.id)).toMatchObject({ status: 'paid' });
    expect(await paymentsOf(theirs.id)).toEqual([]);
    // Unpaid: it expired with the clock.
    expect(await view(theirs.id)).toMatchObject({ status: 'expired', overpaid: false });
  });

  // A create that finds every amount of one asset held leaves that asset out (found by a review of the REST API: it was
  // refused outright). On the chain: the new session is paid by its own amounts, takes no transfer in the asset left
  // out, and the sessions holding that asset's amounts are still paid by them.
  it('a session created without an asset whose amounts were all held is paid in another; the left-out asset pays only its holders', async () => {
    const merchant = await createMerchant(node.kassa.ctx, { wallet: randomWallet() });
    const basket = (price: number) => ({
      items: [{ name: 'Widget', quantity: 1, unit_price: price }],
      currency: 'USD',
    });
    // 100 sessions of 7.77 USD hold the BTC amounts of 7.78 too (a cent is about ten BTC steps), not the others'.
    const holders: Checkout[] = [];
    for (let i = 0; i < 100; i += 1) holders.push(await checkout({ merchant, body: basket(7.77) }));
    let withoutBtc: Checkout | undefined;
    for (let i = 0; i < 15 && !withoutBtc; i += 1) {
      const created = await checkout({ merchant, body: basket(7.78) });
      if (created.quote.BTC === undefined) withoutBtc = created;
    }
    expect(withoutBtc).toBeDefined();
    const session = withoutBtc!;
    expect(session.quote.USDT).toBeDefined();
    // A BTC transfer cannot be bound to it: BTC is not among its options.
    const btc = await chain.pay(merchant.wallet, 'BTC', holders[0]!.quote.BTC!, { from: 6 });
    const refused = await bind(session.id, { tx_hash: btc.hash, crypto_currency: 'BTC' });
    expect(refused.status).toBe(400);
    expect(refused.body.message).toEqual([
      expect.stringMatching(/^crypto_currency BTC is not offered by this session/),
    ]);
    // It is paid by its own exact USDT amount, with no bind; the BTC transfer paid the session holding its amount.
    const usdt = await chain.pay(merchant.wallet, 'USDT', session.quote.USDT!, { from: 6 });
    await confirmAll();
    await node.watchers.tick();
    expect(await view(session.id)).toMatchObject({ status: 'paid', overpaid: false, crypto_currency: 'USDT' });
    expect((await paymentsOf(session.id)).map((p) => [p.txHash, p.attribution])).toEqual([[usdt.hash, 'exact_amount']]);
    expect(await view(holders[0]!.id)).toMatchObject({ status: 'paid', crypto_currency: 'BTC' });
    expect((await paymentsOf(holders[0]!.id)).map((p) => p.txHash)).toEqual([btc.hash]);
  });

  it('a reorg removes an exactly matched credit; the re-included transfer pays again', async () => {
    const session = await checkout();
    const raw = await chain.signPayment(session.wallet, 'USDT', session.quote.USDT!, { from: 8 });
    const snapshot = await chain.snapshot();
    await chain.sendRaw(raw);
    await confirmAll();
    expect((await view(session.id)).status).toBe('paid');
    await chain.revert(snapshot);
    await chain.mine(5);
    await node.watchers.tick();
    expect(await view(session.id)).toMatchObject({ status: 'waiting_payment', overpaid: false });
    await chain.sendRaw(raw);
    await confirmAll();
    expect(await view(session.id)).toMatchObject({ status: 'paid', overpaid: false });
    expect(await eventTypes(session.id)).toEqual(['created', 'paid', 'payment_reversed', 'paid']);
  });
});

describe('6. quotes are honoured for KASSA_QUOTE_TTL_MINUTES, then re-priced', () => {
  const prices: Record<string, string> = { BTC: '100000', ETH: '4000', USDT: '1', USDC: '1', BNB: '600', SOL: '150' };
  let priced: ChainKassa;

  beforeAll(async () => {
    priced = await startChainKassa(chain.url, {
      clock: time.clock,
      env: { KASSA_QUOTE_TTL_MINUTES: '30', KASSA_CONFIRMATIONS_LOCAL: '3' },
      override: {
        rates: {
          supportsCurrency: (fiat: string) => fiat === 'USD',
          quoteRates: async (_fiat: string, tickers: readonly string[], now: Date) =>
            tickers.map((ticker) => ({
              ticker,
              unitPriceFiat: new Decimal(prices[ticker]!),
              source: 'test',
              ratedAt: now,
            })),
        } as never,
      },
    });
  }, 60_000);
  afterAll(() => priced?.close());

  const create = async (merchant: TestMerchant) => {
    const body = await createSession(
      priced.kassa,
      merchant,
      checkoutRequest({ items: [{ name: 'Lamp', quantity: 1, unit_price: 100 }] }),
    );
    return {
      id: body.session_id as string,
      btc: body.crypto_options.find((o: { ticker: string }) => o.ticker === 'BTC').amount as string,
    };
  };
  const requote = async () => {
    const { requoteDueSessions } = await import('../../src/domain/sessions/requote-sessions.js');
    return requoteDueSessions(priced.kassa.ctx);
  };
  const read = async (id: string) => (await priced.kassa.http.get(`/checkout-sessions/${id}`)).body;

  it('an unpaid session is re-priced after the TTL: new amounts, a history row with both rates, an event', async () => {
    prices.BTC = '100000';
    const merchant = await createMerchant(priced.kassa.ctx, { wallet: randomWallet() });
    const session = await create(merchant);
    expect(session.btc).toBe('0.00100000');
    prices.BTC = '80000';
    time.freeze(Date.now() + 29 * MIN);
    await requote();
    expect((await read(session.id)).crypto_options.find((o: { ticker: string }) => o.ticker === 'BTC').amount).toBe(
      '0.00100000',
    );

    time.freeze(Date.now() + 31 * MIN);
    // Re-pricing waits until the watcher has scanned past the quote's end (test/e2e/requote-unscanned.test.ts).
    await priced.watchers.tick();
    await requote();
    const after = await read(session.id);
    expect(after.crypto_options.find((o: { ticker: string }) => o.ticker === 'BTC')).toMatchObject({
      unit_price_fiat: '80000.00000000',
      amount: '0.00125000',
    });
    const changes = await priced.kassa.runtime.db.prisma.$queryRaw<
      Array<{ ticker: string; old_unit_price_fiat: string; new_unit_price_fiat: string }>
    >`
      SELECT ticker, old_unit_price_fiat::text, new_unit_price_fiat::text FROM checkout_session_quote_changes
       WHERE session_id = ${session.id}::uuid AND ticker = 'BTC'`;
    expect(changes).toEqual([
      { ticker: 'BTC', old_unit_price_fiat: '100000.00000000', new_unit_price_fiat: '80000.00000000' },
    ]);
    const events = await priced.kassa.runtime.db.prisma.outboxEvent.findMany({
      where: { sessionId: session.id },
      orderBy: { seq: 'asc' },
    });
    expect(events.map((e) => e.type)).toEqual(['checkout_session.created', 'checkout_session.quote_updated']);
  });

  it('a session whose payment was already seen keeps its quote: the payment is judged against the quote valid when it was first seen', async () => {
    prices.BTC = '100000';
    const merchant = await createMerchant(priced.kassa.ctx, { wallet: randomWallet() });
    const session = await create(merchant);
    await chain.pay(merchant.wallet, 'BTC', session.btc, { from: 9 });
    await priced.watchers.tick();
    prices.BTC = '50000';
    time.freeze(Date.now() + 31 * MIN);
    await requote();
    await chain.mine(3);
    await priced.watchers.tick();
    expect(await read(session.id)).toMatchObject({
      status: 'paid',
      overpaid: false,
      total_amount_crypto: '0.00100000',
    });
  });

  it('a transfer mined before a re-pricing and bound after it is judged against the quote valid when it was mined', async () => {
    prices.BTC = '100000';
    const merchant = await createMerchant(priced.kassa.ctx, { wallet: randomWallet() });
    const session = await create(merchant);
    // Half the amount: no exact match, so scanning credits nobody and the quote is not held.
    const sent = await chain.pay(merchant.wallet, 'BTC', '0.0005', { from: 9 });
    await priced.watchers.tick();
    prices.BTC = '50000';
    time.freeze(Date.now() + 31 * MIN);
    await priced.watchers.tick();
    await requote();
    expect((await read(session.id)).crypto_options.find((o: { ticker: string }) => o.ticker === 'BTC').amount).toBe(
      '0.00200000',
    );
    const bound = await postBind(priced.kassa, session.id, {
      tx_hash: sent.hash,
      chain_id: CHAIN_ID,
      crypto_currency: 'BTC',
    });
    expect(bound.status, JSON.stringify(bound.body)).toBe(200);
    expect(bound.body.total_amount_crypto).toBe('0.00100000');
    await chain.mine(3);
    await priced.watchers.tick();
    expect(await read(session.id)).toMatchObject({ status: 'partial', total_amount_crypto: '0.00100000' });
  });
});

describe('7. found by an outside review: no address, pending hash, re-pricing or wallet change moves money to the wrong session', () => {
  const laptop = { items: [{ name: 'Laptop', quantity: 1, unit_price: 2000 }], currency: 'USD' };
  const sticker = { items: [{ name: 'Sticker', quantity: 1, unit_price: 1 }], currency: 'USD' };

  it('a payer wallet proven by one bind takes no other transfer from that address (an exchange hot wallet pays many customers)', async () => {
    const merchant = await createMerchant(node.kassa.ctx, { wallet: randomWallet() });
    const attacker = await checkout({ merchant, body: laptop });
    const victim = await checkout({ merchant });
    const hotWallet = 2; // sandbox account 2 stands in for an exchange's hot wallet
    // A customer's withdrawal net of fees, before and after the attacker proves the hot wallet as "their" payer wallet.
    const before = await chain.pay(merchant.wallet, 'USDT', new Decimal(victim.quote.USDT!).minus('0.5').toFixed(6), {
      from: hotWallet,
    });
    await confirmAll();
    // The attacker's own first part pays at least half of their quote (docs/payment-rules.md, rule 3).
    const own = await chain.pay(merchant.wallet, 'USDT', '1000', { from: hotWallet });
    const proven = await bind(attacker.id, {
      tx_hash: own.hash,
      crypto_currency: 'USDT',
      payer_wallet_address: own.from,
    });
    expect(proven.status, JSON.stringify(proven.body)).toBe(200);
    const after = await chain.pay(merchant.wallet, 'USDT', '7.25', { from: hotWallet });
    await confirmAll();
    expect((await view(attacker.id)).status).toBe('partial');
    expect((await paymentsOf(attacker.id)).map((p) => p.txHash)).toEqual([own.hash]);
    expect(await unattributed()).toEqual(expect.arrayContaining([before.hash, after.hash]));
    // The customer binds their own withdrawal and it pays their session.
    expect((await bind(victim.id, { tx_hash: before.hash, crypto_currency: 'USDT' })).status).toBe(200);
    await confirmAll();
    expect(await view(victim.id)).toMatchObject({ status: 'partial', bound_tx_hash: before.hash });
  });

  it("a pending transaction someone else bound first does not block its payer's bind; once mined it pays the payer's session", async () => {
    const merchant = await createMerchant(node.kassa.ctx, { wallet: randomWallet() });
    const victim = await checkout({ merchant });
    const attacker = await checkout({ merchant, body: sticker });
    const pending = await chain.payPending(
      merchant.wallet,
      'USDC',
      new Decimal(victim.quote.USDC!).minus(1).toFixed(6),
      { from: 3 },
    );
    try {
      expect(
        (
          await bind(attacker.id, {
            tx_hash: pending.hash,
            crypto_currency: 'USDC',
            payer_wallet_address: randomWallet(),
          })
        ).status,
      ).toBe(200);
      const own = await bind(victim.id, {
        tx_hash: pending.hash,
        crypto_currency: 'USDC',
        payer_wallet_address: '0x90f79bf6eb2c4f870365e785982e1f101e93b906',
      });
      expect(own.status, JSON.stringify(own.body)).toBe(200);
    } finally {
      await pending.release();
    }
    await confirmAll();
    expect(await view(victim.id)).toMatchObject({
      status: 'partial',
      crypto_currency: 'USDC',
      bound_tx_hash: pending.hash,
    });
    expect(await paymentsOf(attacker.id)).toEqual([]);
  });

  it('a transaction that stays pending past the in-flight grace is rejected: it holds neither the session nor its quote for days', async () => {
    const session = await checkout({ body: { expires_in_minutes: 600 } });
    const pending = await chain.payPending(randomWallet(), 'ETH', '0.001', { from: 4 });
    try {
      expect((await bind(session.id, { tx_hash: pending.hash, crypto_currency: 'ETH' })).status).toBe(200);
      const activity = () => node.kassa.runtime.db.prisma.$queryRaw<Array<{ active: boolean }>>`
        SELECT EXISTS (SELECT 1 FROM checkout_session_transactions WHERE session_id = ${session.id}::uuid AND state <> 'rejected'
                        AND seen_on_chain_at IS NOT NULL) AS active`;
      expect(await activity()).toEqual([{ active: true }]);
      time.freeze(Date.now() + 61 * MIN);
      await node.watchers.tick();
      const rows = await node.kassa.runtime.db.prisma.$queryRaw<Array<{ state: string; reason: string }>>`
        SELECT state, reason FROM checkout_session_transactions WHERE session_id = ${session.id}::uuid`;
      expect(rows).toEqual([
        {
          state: 'rejected',
          reason: expect.stringMatching(
            /^not mined: transaction 0x[0-9a-f]{64} was still pending on local 6[01] minutes after it was bound$/,
          ),
        },
      ]);
      // No longer payment activity: the re-pricing round may price the session again.
      expect(await activity()).toEqual([{ active: false }]);
      expect((await view(session.id)).status).toBe('waiting_payment');
    } finally {
      await pending.release();
    }
  });

  // Found by an attacker-minded review: the stranger's candidate was replayed as final, and its rejection refused
  // every later bind of the hash to the session (409 "was rejected for this checkout session").
  it("a stranger's bind of the payer's pending transaction naming a wrong payer or asset cannot keep the payer's own bind out", async () => {
    for (const wrong of [{ payer_wallet_address: randomWallet() }, { crypto_currency: 'USDC' }]) {
      const session = await checkout();
      // Not an exact amount (a withdrawal net of fees): it must be bound.
      const amount = new Decimal(session.quote.USDT!).minus('0.5').toFixed(6);
      const pending = await chain.payPending(session.wallet, 'USDT', amount, { from: 7 });
      try {
        expect((await bind(session.id, { tx_hash: pending.hash, crypto_currency: 'USDT', ...wrong })).status).toBe(200);
      } finally {
        await pending.release();
      }
      await confirmAll();
      const own = await bind(session.id, { tx_hash: pending.hash, crypto_currency: 'USDT' });
      expect(own.status, JSON.stringify(own.body)).toBe(200);
      await confirmAll();
      expect(await view(session.id)).toMatchObject({ status: 'partial', crypto_currency: 'USDT' });
      expect((await paymentsOf(session.id)).map((p) => [p.txHash, p.attribution])).toEqual([
        [pending.hash, 'bound_tx'],
      ]);
    }
  });

  it("a stranger's transaction that is never mined, bound just before expires_at, ends the session expired, not failed", async () => {
    const session = await checkout({ body: { expires_in_minutes: 10 } });
    // Anyone can broadcast a transaction the node keeps pending for nothing (a nonce gap) and bind it.
    const pending = await chain.payPending(randomWallet(), 'ETH', '0.001', { from: 4 });
    try {
      expect((await bind(session.id, { tx_hash: pending.hash, crypto_currency: 'ETH' })).status).toBe(200);
      time.freeze(Date.now() + 71 * MIN);
      await node.watchers.tick();
      await expireDueSessions(node.kassa.ctx);
      const rows = await node.kassa.runtime.db.prisma.$queryRaw<Array<{ state: string; reason: string }>>`
        SELECT state, reason FROM checkout_session_transactions WHERE session_id = ${session.id}::uuid`;
      expect(rows).toEqual([{ state: 'rejected', reason: expect.stringMatching(/^not mined: /) }]);
      expect(await view(session.id)).toMatchObject({ status: 'expired' });
      expect(await eventTypes(session.id)).toEqual(['created', 'expired']);
    } finally {
      await pending.release();
    }
  });

  // Found by an attacker-minded review: any pending transaction, to any address, bound before expires_at and mined
  // after it, was rejected `wrong recipient` and ended the session failed.
  it("a stranger's pending transaction to another address, bound before expires_at and mined after it, ends the session expired", async () => {
    const session = await checkout();
    const pending = await chain.payPending(randomWallet(), 'ETH', '0.001', { from: 4 });
    try {
      expect((await bind(session.id, { tx_hash: pending.hash, crypto_currency: 'ETH' })).status).toBe(200);
      time.freeze(Date.now() + 61 * MIN);
      await node.watchers.tick();
      expect((await view(session.id)).status).toBe('waiting_payment');
    } finally {
      await pending.release();
    }
    await node.watchers.tick();
    await expireDueSessions(node.kassa.ctx);
    const rows = await node.kassa.runtime.db.prisma.$queryRaw<Array<{ state: string; reason: string }>>`
      SELECT state, reason FROM checkout_session_transactions WHERE session_id = ${session.id}::uuid`;
    expect(rows).toEqual([{ state: 'rejected', reason: expect.stringMatching(/^wrong recipient: /) }]);
    expect(await view(session.id)).toMatchObject({ status: 'expired' });
    expect(await eventTypes(session.id)).toEqual(['created', 'expired']);
  });

  it('a wallet an organisation received payments on can never become another organisation’s, even after it moved to a new one', async () => {
    const old = randomWallet();
    const merchant = await createMerchant(node.kassa.ctx, { wallet: old, network: 'local' });
    await checkout({ merchant });
    await setWallet(node.kassa.ctx, merchant.organisationId, randomWallet(), 'local');
    const other = await createOrganisation(node.kassa.ctx, { name: 'Newcomer', receiving: 'shared' });
    await expect(setWallet(node.kassa.ctx, other.id, old, 'local')).rejects.toThrow(
      /already receives payments for another organisation/,
    );
    await expect(
      createOrganisation(node.kassa.ctx, { name: 'Copycat', wallet: old, network: 'local' }),
    ).rejects.toThrow(/already receives payments for another organisation/);
    // The database holds the rule too (two operators racing past the check): its trigger refuses the write.
    await expect(node.kassa.ctx.store.organisations.setWallet(other.id, 'local', old)).rejects.toThrow(
      /already receives payments for another organisation/,
    );
    // The organisation itself may go back to it.
    await setWallet(node.kassa.ctx, merchant.organisationId, old, 'local');
  });

  it('a transfer a session cannot be paid with any more is not credited to it by scanning (asset locked meanwhile by a bind that pays it)', async () => {
    const session = await checkout();
    const usdc = await chain.pay(session.wallet, 'USDC', session.quote.USDC!, { from: 5 });
    expect((await bind(session.id, { tx_hash: usdc.hash, crypto_currency: 'USDC' })).status).toBe(200);
    // The exact USDT amount the session was quoted: it may not pay a session now locked to USDC and paid in it.
    const usdt = await chain.pay(session.wallet, 'USDT', session.quote.USDT!, { from: 5 });
    await confirmAll();
    expect((await paymentsOf(session.id)).map((p) => p.txHash)).toEqual([usdc.hash]);
    expect(await view(session.id)).toMatchObject({ status: 'paid', crypto_currency: 'USDC' });
    expect(await unattributed()).toContain(usdt.hash);
  });

  it('an exact transfer outranks a bound part of another asset that does not pay the session (decision 24)', async () => {
    const session = await checkout();
    const half = new Decimal(session.quote.USDC!).div(2).plus(1).toFixed(6); // a first part: half at least (rule 3)
    const usdc = await chain.pay(session.wallet, 'USDC', half, { from: 5 });
    expect((await bind(session.id, { tx_hash: usdc.hash, crypto_currency: 'USDC' })).status).toBe(200);
    await confirmAll();
    expect(await view(session.id)).toMatchObject({ status: 'partial', crypto_currency: 'USDC' });
    // The exact USDT amount the session was quoted pays it, in USDT; the USDC part is left to the operator. While the
    // USDT waits for its confirmations the session waits for its payment again: the USDC no longer counts.
    const usdt = await chain.pay(session.wallet, 'USDT', session.quote.USDT!, { from: 5 });
    await node.watchers.tick();
    expect(await view(session.id)).toMatchObject({
      status: 'waiting_payment',
      crypto_currency: 'USDT',
      total_amount_crypto: session.quote.USDT,
      bound_tx_hash: null,
    });
    await confirmAll();
    expect((await paymentsOf(session.id)).map((p) => p.txHash)).toEqual([usdt.hash]);
    expect(await view(session.id)).toMatchObject({ status: 'paid', crypto_currency: 'USDT' });
    expect(await unattributed()).toContain(usdc.hash);
    expect(await eventTypes(session.id)).toEqual(['created', 'tx_bound', 'partially_paid', 'payment_reversed', 'paid']);
  });

  it('an expired session inside its late-payment window takes a bind of a mined transfer as a late payment', async () => {
    const session = await checkout();
    time.freeze(Date.now() + 61 * MIN);
    await node.watchers.tick();
    expect((await view(session.id)).status).toBe('expired');
    const late = await chain.pay(session.wallet, 'USDT', new Decimal(session.quote.USDT!).minus(2).toFixed(6), {
      from: 6,
    });
    const bound = await bind(session.id, { tx_hash: late.hash, crypto_currency: 'USDT' });
    expect(bound.status, JSON.stringify(bound.body)).toBe(200);
    expect(bound.body).toMatchObject({ status: 'expired', bound_tx_hash: late.hash });
    await confirmAll();
    expect(await view(session.id)).toMatchObject({ status: 'expired' });
    expect(await eventTypes(session.id)).toEqual(['created', 'expired', 'tx_bound', 'late_payment']);
    expect(await paymentsOf(session.id)).toEqual([
      expect.objectContaining({ txHash: late.hash, late: true, attribution: 'bound_tx' }),
    ]);
    // A hash the chain does not have is still refused on a closed session.
    const unknown = await bind(session.id, { tx_hash: randomHash(), crypto_currency: 'USDT' });
    expect(unknown.status).toBe(409);
  });
});

describe('8. found by an attacker-minded review: a session on several networks', () => {
  let twoChains: ChainKassa;

  beforeAll(async () => {
    // Sessions on the sandbox and on BNB Smart Chain, none selected; BSC has no RPC here (a chain that never saw it).
    twoChains = await startChainKassa(chain.url, {
      clock: time.clock,
      env: { KASSA_NETWORKS: 'local,bsc', KASSA_CONFIRMATIONS_LOCAL: '3' },
    });
  }, 60_000);
  afterAll(() => twoChains?.close());

  // Found by an attacker-minded review: the stranger's candidate was matched by hash alone, and the payer's bind was
  // refused 409 "chain_id 31337 differs from 56, the chain this transaction was bound on".
  it("a stranger's bind of the payer's pending transaction naming another of the session's chains cannot keep the payer's own bind out", async () => {
    const merchant = await createMerchant(twoChains.kassa.ctx, { wallet: randomWallet() });
    const created = await createSession(twoChains.kassa, merchant, checkoutRequest());
    const id = created.session_id as string;
    const usdt = (created.crypto_options as Array<{ ticker: string; amount: string }>).find(
      (o) => o.ticker === 'USDT',
    )!;
    // Not an exact amount (a withdrawal net of fees): it must be bound.
    const amount = new Decimal(usdt.amount).minus('0.5').toFixed(6);
    const pending = await chain.payPending(merchant.wallet, 'USDT', amount, { from: 8 });
    try {
      const stranger = await postBind(twoChains.kassa, id, {
        tx_hash: pending.hash,
        chain_id: '56',
        crypto_currency: 'USDT',
      });
      expect(stranger.status, JSON.stringify(stranger.body)).toBe(200);
      const own = await postBind(twoChains.kassa, id, {
        tx_hash: pending.hash,
        chain_id: CHAIN_ID,
        crypto_currency: 'USDT',
      });
      expect(own.status, JSON.stringify(own.body)).toBe(200);
      // The stranger cannot take it back: the sandbox has the transaction, their chain does not.
      const again = await postBind(twoChains.kassa, id, {
        tx_hash: pending.hash,
        chain_id: '56',
        crypto_currency: 'USDT',
      });
      expect(again.status).toBe(409);
      expect(again.body.message).toMatch(/chain_id 56 differs from 31337/);
    } finally {
      await pending.release();
    }
    await chain.mine(3);
    await twoChains.watchers.tick();
    const read = await twoChains.kassa.http.get(`/checkout-sessions/${id}`);
    expect(read.body).toMatchObject({ status: 'partial', crypto_currency: 'USDT' });
    expect((await twoChains.kassa.ctx.store.chain.paymentsOfSession(id)).map((p) => [p.txHash, p.attribution])).toEqual(
      [[pending.hash, 'bound_tx']],
    );
  });

  // Found by an attacker-minded review of decision 24: expiry waited for the selected chain only, and the payer's exact
  // transfer on another chain, mined before expires_at and scanned after, found the session closed.
  it('a session a bound part locked to one chain waits, to expire, for another chain where it still holds an amount', async () => {
    const merchant = await createMerchant(twoChains.kassa.ctx, { wallet: randomWallet() });
    // Its quote (30 min) lapses when it expires: the amounts on BSC stay the session's until then.
    const created = await createSession(twoChains.kassa, merchant, checkoutRequest({ expires_in_minutes: 30 }));
    const id = created.session_id as string;
    const usdc = (created.crypto_options as Array<{ ticker: string; amount: string }>).find(
      (o) => o.ticker === 'USDC',
    )!;
    const part = await chain.pay(merchant.wallet, 'USDC', new Decimal(usdc.amount).div(2).plus(1).toFixed(6), {
      from: 8,
    });
    const bound = await postBind(twoChains.kassa, id, {
      tx_hash: part.hash,
      chain_id: CHAIN_ID,
      crypto_currency: 'USDC',
    });
    expect(bound.status, JSON.stringify(bound.body)).toBe(200);
    await chain.mine(3);
    await twoChains.watchers.tick();
    const status = async () => (await twoChains.kassa.http.get(`/checkout-sessions/${id}`)).body.status as string;
    expect(await status()).toBe('partial');
    // BSC was scanned during the session's life, not yet past expires_at: a payer's exact transfer there, mined
    // before, may still be found.
    const db = twoChains.kassa.runtime.db.prisma;
    const start = Date.now();
    await db.$executeRaw`INSERT INTO chain_cursors (network, chain_id, next_block, caught_up_at)
      VALUES ('bsc', '56', 1, ${new Date(start)}) ON CONFLICT (network) DO UPDATE SET caught_up_at = ${new Date(start)}`;
    try {
      time.freeze(start + 31 * MIN);
      await chain.mine(1);
      await twoChains.watchers.tick();
      await expireDueSessions(twoChains.kassa.ctx);
      expect(await status()).toBe('partial');
      // Scanned past it: nothing is left to wait for.
      await db.$executeRaw`UPDATE chain_cursors SET caught_up_at = ${new Date(start + 31 * MIN)} WHERE network = 'bsc'`;
      await expireDueSessions(twoChains.kassa.ctx);
      expect(await status()).toBe('expired');
    } finally {
      await db.$executeRaw`DELETE FROM chain_cursors WHERE network = 'bsc'`;
    }
  });
});

describe('9. found by an attacker-minded review (2026-11-28): the watcher judges every bound transaction in turn', () => {
  it("junk hashes bound in bulk, more than a pass judges, do not keep a payer's pending transaction unjudged", async () => {
    // 11 sessions with 5 hashes no chain knows each: 55 unverified binds, older than the payer's, more than the 50 a
    // pass takes. Oldest first, the same 50 were taken every pass until they were dropped an hour later.
    for (let i = 0; i < 11; i++) {
      const junk = await checkout();
      for (let j = 0; j < 5; j++)
        expect((await bind(junk.id, { tx_hash: randomHash(), crypto_currency: 'USDT' })).status).toBe(200);
    }
    const victim = await checkout();
    const part = new Decimal(victim.quote.USDT!).minus(1).toFixed(6);
    const pending = await chain.payPending(victim.wallet, 'USDT', part, { from: 7 });
    expect((await bind(victim.id, { tx_hash: pending.hash, crypto_currency: 'USDT' })).status).toBe(200);
    await pending.release();
    await node.watchers.tick();
    await node.watchers.tick();
    await confirmAll();
    expect(await view(victim.id)).toMatchObject({ status: 'partial', bound_tx_hash: pending.hash });
  });
});

describe('confirmations (a suspicion of the attacker-minded review of 2026-11-28, night)', () => {
  it('a payment moved to another block after its block was checked is not confirmed at the new one', async () => {
    const session = await checkout();
    await chain.pay(session.wallet, 'USDT', session.quote.USDT!, { from: 4 });
    await node.watchers.tick();
    const [payment] = await paymentsOf(session.id);
    expect(payment).toMatchObject({ state: 'seen' });
    // Checked at its block; then a bind or another instance's rescan records it on a new branch's block.
    const checked = { id: payment!.id, blockHash: payment!.blockHash };
    await node.kassa.runtime.db.prisma.$executeRaw`
      UPDATE payments SET block_hash = ${randomHash()}, confirmations = 0 WHERE id = ${payment!.id}::uuid`;
    await node.kassa.ctx.store.chain.confirmPayments([checked], time.clock());
    expect((await paymentsOf(session.id)).map((p) => p.state)).toEqual(['seen']);
    // At the block it was checked at, it is confirmed.
    await node.kassa.runtime.db.prisma.$executeRaw`
      UPDATE payments SET block_hash = ${checked.blockHash} WHERE id = ${payment!.id}::uuid`;
    await node.kassa.ctx.store.chain.confirmPayments([checked], time.clock());
    expect((await paymentsOf(session.id)).map((p) => p.state)).toEqual(['confirmed']);
  });
});
