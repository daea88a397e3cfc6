import { randomBytes } from 'node:crypto';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { expireDueSessions } from '../../src/domain/sessions/expire-sessions.js';
import { Decimal } from '../../src/domain/shared/money.js';
import { setPaymentPolicy } from '../../src/domain/organisations/organisations.js';
import { createMerchant, type TestMerchant } from '../factories/merchant.js';
import { checkoutRequest } from '../factories/checkout-request.js';
import { startChainKassa, startTestChain, type ChainKassa, type TestChain } from '../support/chain.js';
import { controllableClock, createSession, postBind, postCreate } from '../support/rest-kassa.js';

/**
 * Issue 4 against real chain software: a real anvil with the sandbox ERC-20
 * tokens (USDT with 6 decimals, BTC/USDC with 18), a real Kassa over HTTP on
 * a real PostgreSQL, and the chain watcher ticked by the test.
 */

const CHAIN_ID = '31337';
const MIN = 60_000;

let chain: TestChain;
let node: ChainKassa;
const time = controllableClock();

beforeAll(async () => {
  chain = await startTestChain();
  node = await startChainKassa(chain.url, { clock: time.clock });
}, 60_000);

afterAll(async () => {
  await node?.close();
  await chain?.stop();
});

afterEach(() => time.release());

const tick = () => node.watchers.tick();
const randomWallet = () => `0x${randomBytes(20).toString('hex')}`;

interface Checkout {
  readonly merchant: TestMerchant;
  readonly wallet: string;
  readonly id: string;
  /** The quoted amount per ticker. */
  readonly quote: Record<string, string>;
}

async function checkout(options: { wallet?: string; merchant?: TestMerchant } = {}): Promise<Checkout> {
  const merchant =
    options.merchant ?? (await createMerchant(node.kassa.ctx, { wallet: options.wallet ?? randomWallet() }));
  const session = await createSession(node.kassa, merchant, checkoutRequest());
  const quote = Object.fromEntries(
    (session.crypto_options as Array<{ ticker: string; amount: string }>).map((o) => [o.ticker, o.amount]),
  );
  return { merchant, wallet: merchant.wallet, id: session.session_id as string, quote };
}

async function bind(id: string, txHash: string, ticker: string, payer?: string) {
  const response = await postBind(node.kassa, id, {
    tx_hash: txHash,
    chain_id: CHAIN_ID,
    crypto_currency: ticker,
    ...(payer ? { payer_wallet_address: payer } : {}),
  });
  expect(response.status, JSON.stringify(response.body)).toBe(200);
  return response.body;
}

async function view(id: string): Promise<Record<string, any>> {
  const response = await node.kassa.http.get(`/checkout-sessions/${id}`);
  expect(response.status).toBe(200);
  return response.body;
}

async function eventTypes(id: string): Promise<string[]> {
  const rows = await node.kassa.runtime.db.prisma.$queryRaw<Array<{ type: string }>>`
    SELECT type FROM outbox_events WHERE session_id = ${id}::uuid ORDER BY seq`;
  return rows.map((row) => row.type.replace('checkout_session.', ''));
}

async function historyOf(id: string): Promise<Array<{ from: string | null; to: string; cause: string }>> {
  const rows = await node.kassa.runtime.db.prisma.$queryRaw<
    Array<{ from_status: string | null; to_status: string; cause: string }>
  >`
    SELECT from_status::text, to_status::text, cause FROM checkout_session_status_history WHERE session_id = ${id}::uuid ORDER BY id`;
  return rows.map((row) => ({ from: row.from_status, to: row.to_status, cause: row.cause }));
}

const paymentsOf = (id: string) => node.kassa.ctx.store.chain.paymentsOfSession(id);

describe('payments credited from the chain', () => {
  it('exact payment in an 18-decimal token → paid', async () => {
    const session = await checkout();
    const sent = await chain.pay(session.wallet, 'BTC', session.quote.BTC!);
    await bind(session.id, sent.hash, 'BTC', sent.from);
    await tick();

    expect(await view(session.id)).toMatchObject({
      status: 'paid',
      overpaid: false,
      crypto_currency: 'BTC',
      total_amount_crypto: session.quote.BTC,
    });
    expect(await eventTypes(session.id)).toEqual(['created', 'tx_bound', 'paid']);
    const [payment, ...others] = await paymentsOf(session.id);
    expect(others).toEqual([]);
    expect(payment).toMatchObject({
      txHash: sent.hash,
      asset: 'BTC',
      state: 'confirmed',
      attribution: 'bound_tx',
      from: sent.from,
      to: session.wallet,
      logIndex: 0,
    });
    expect(payment!.amount.toFixed(8)).toBe(session.quote.BTC);
    expect(payment!.blockNumber).toBe(sent.blockNumber);
  });

  it('two transfers in a 6-decimal token → partial → paid', async () => {
    const session = await checkout();
    const total = session.quote.USDT!;
    // USDT has 6 decimals here: the on-chain amount rounds up to 6 digits.
    // A first part pays at least half of the quote (docs/payment-rules.md, rule 3).
    const first = await chain.pay(session.wallet, 'USDT', '60');
    await bind(session.id, first.hash, 'USDT', first.from);
    await tick();
    expect(await view(session.id)).toMatchObject({ status: 'partial', crypto_currency: 'USDT' });
    // The payer's page learns what arrived and what is still owed (GraphQL).
    const partial = await node.kassa.http
      .post('/graphql')
      .set('content-type', 'application/json')
      .send({
        query: `{ checkoutSession(id: "${session.id}") { status amountReceived amountDue totalAmountCrypto } }`,
      });
    expect(partial.body.data.checkoutSession).toEqual({
      status: 'PARTIAL',
      amountReceived: '60.00000000',
      amountDue: new Decimal(total).minus(60).toFixed(8),
      totalAmountCrypto: total,
    });

    // The rest is an amount the session holds alone (docs/payment-rules.md, rule 4): sent exactly, it pays without a
    // bind (the sending address attributes nothing by itself).
    const rest = new Decimal(total).minus(60).toFixed(8);
    const second = await chain.pay(session.wallet, 'USDT', rest);
    await tick();
    const paid = await view(session.id);
    expect(paid).toMatchObject({ status: 'paid', overpaid: false });
    expect(await eventTypes(session.id)).toEqual(['created', 'tx_bound', 'partially_paid', 'paid']);
    expect((await paymentsOf(session.id)).map((p) => [p.txHash, p.attribution, p.state])).toEqual([
      [first.hash, 'bound_tx', 'confirmed'],
      [second.hash, 'exact_amount', 'confirmed'],
    ]);
  });

  it('a first part under half is refused; bound again once a larger part selected its asset, it counts', async () => {
    const session = await checkout();
    const total = new Decimal(session.quote.USDT!);
    // Mined at bind: refused at once, nothing written (docs/payment-rules.md, rule 3).
    const small = await chain.pay(session.wallet, 'USDT', '10');
    const refused = await postBind(node.kassa, session.id, {
      tx_hash: small.hash,
      chain_id: CHAIN_ID,
      crypto_currency: 'USDT',
    });
    expect(refused.status).toBe(409);
    expect(refused.body.message).toMatch(/^too small: transaction 0x[0-9a-f]{64} pays 10 USDT, under half of the/);
    expect(refused.body.code).toBe('bind_too_small');
    // Pending at bind: judged once mined, rejected the same way; the session still waits, no asset selected.
    const pending = await chain.payPending(session.wallet, 'USDT', '5');
    await bind(session.id, pending.hash, 'USDT');
    await pending.release();
    await chain.mine(2);
    await tick();
    expect(await view(session.id)).toMatchObject({ status: 'waiting_payment', crypto_currency: null });
    const stored = await postBind(node.kassa, session.id, { tx_hash: pending.hash, chain_id: CHAIN_ID });
    expect(stored.status).toBe(409);
    // Rejected and stored with its code: the same bind again answers that code.
    expect(stored.body.code).toBe('bind_too_small');

    const larger = await chain.pay(session.wallet, 'USDT', '60');
    await bind(session.id, larger.hash, 'USDT');
    await bind(session.id, small.hash, 'USDT');
    await bind(session.id, pending.hash, 'USDT');
    await chain.mine(2);
    await tick();
    expect(await view(session.id)).toMatchObject({ status: 'partial', crypto_currency: 'USDT' });
    expect((await paymentsOf(session.id)).map((p) => p.txHash).sort()).toEqual(
      [small.hash, pending.hash, larger.hash].sort(),
    );
    const rest = total.minus(75).toFixed(8);
    await chain.pay(session.wallet, 'USDT', rest);
    await chain.mine(2);
    await tick();
    expect(await view(session.id)).toMatchObject({ status: 'paid' });
  });

  it('overpayment → paid with overpaid', async () => {
    const session = await checkout();
    const sent = await chain.pay(session.wallet, 'USDC', new Decimal(session.quote.USDC!).plus(5).toFixed(8));
    await bind(session.id, sent.hash, 'USDC', sent.from);
    await tick();
    expect(await view(session.id)).toMatchObject({ status: 'paid', overpaid: true });
    expect((await historyOf(session.id)).at(-1)).toEqual({
      from: 'waiting_payment',
      to: 'paid',
      cause: 'paid in full (overpaid)',
    });
  });

  it('underpayment inside the organisation tolerance → paid', async () => {
    const merchant = await createMerchant(node.kassa.ctx, { wallet: randomWallet() });
    await setPaymentPolicy(node.kassa.ctx, merchant.organisationId, { underpaymentTolerancePercent: '1' });
    const session = await checkout({ merchant });
    const short = new Decimal(session.quote.USDC!).times('0.995').toFixed(8, Decimal.ROUND_DOWN);
    const sent = await chain.pay(session.wallet, 'USDC', short);
    await bind(session.id, sent.hash, 'USDC', sent.from);
    await tick();
    expect(await view(session.id)).toMatchObject({ status: 'paid', overpaid: false });
    expect((await historyOf(session.id)).at(-1)?.cause).toBe('paid within the underpayment tolerance');
  });

  it('native ETH payment → paid (log index -1)', async () => {
    const session = await checkout();
    const sent = await chain.pay(session.wallet, 'ETH', session.quote.ETH!);
    await bind(session.id, sent.hash, 'ETH', sent.from);
    await tick();
    expect(await view(session.id)).toMatchObject({ status: 'paid', crypto_currency: 'ETH' });
    expect(await paymentsOf(session.id)).toEqual([
      expect.objectContaining({ txHash: sent.hash, logIndex: -1, asset: 'ETH', tokenAddress: null }),
    ]);
  });

  it('an exact amount to an unbound session is attributed when exactly one session fits, and selects the asset', async () => {
    const session = await checkout();
    await chain.pay(session.wallet, 'SOL', session.quote.SOL!);
    await tick();
    expect(await view(session.id)).toMatchObject({
      status: 'paid',
      crypto_currency: 'SOL',
      total_amount_crypto: session.quote.SOL,
      bound_tx_hash: null,
    });
    expect((await paymentsOf(session.id)).map((p) => p.attribution)).toEqual(['exact_amount']);
  });
});

describe('expiry and late payments', () => {
  it('underpayment, then expiry → expired', async () => {
    const session = await checkout();
    const sent = await chain.pay(
      session.wallet,
      'BTC',
      new Decimal(session.quote.BTC!).dividedBy(2).toFixed(8, Decimal.ROUND_DOWN),
    );
    await bind(session.id, sent.hash, 'BTC', sent.from);
    await tick();
    expect((await view(session.id)).status).toBe('partial');

    // The payment has confirmed, so nothing is in flight: once the watcher has looked past expires_at, the session expires.
    time.freeze(Date.now() + 61 * MIN);
    await tick();
    await expireDueSessions(node.kassa.ctx);
    expect(await view(session.id)).toMatchObject({ status: 'expired' });
    expect(await eventTypes(session.id)).toEqual(['created', 'tx_bound', 'partially_paid', 'expired']);
  });

  it('a payment after expiry inside the monitoring window → late_payment event, status unchanged', async () => {
    const session = await checkout();
    const first = await chain.pay(
      session.wallet,
      'BTC',
      new Decimal(session.quote.BTC!).dividedBy(2).toFixed(8, Decimal.ROUND_DOWN),
    );
    await bind(session.id, first.hash, 'BTC', first.from);
    await tick();
    time.freeze(Date.now() + 125 * MIN);
    await tick();
    await expireDueSessions(node.kassa.ctx);

    // The rest arrives two hours late, well inside the 24 h window, and the payer binds it.
    const rest = await chain.pay(session.wallet, 'BTC', session.quote.BTC!);
    await tick();
    await bind(session.id, rest.hash, 'BTC', rest.from);
    await tick();
    expect(await view(session.id)).toMatchObject({ status: 'expired' });
    expect(await eventTypes(session.id)).toEqual([
      'created',
      'tx_bound',
      'partially_paid',
      'expired',
      'tx_bound',
      'late_payment',
    ]);
    const late = (await paymentsOf(session.id)).at(-1)!;
    expect(late).toMatchObject({ txHash: rest.hash, attribution: 'bound_tx', late: true, state: 'confirmed' });
  });

  it('after the monitoring window the wallet is no longer watched for the session', async () => {
    const session = await checkout();
    const first = await chain.pay(
      session.wallet,
      'BTC',
      new Decimal(session.quote.BTC!).dividedBy(2).toFixed(8, Decimal.ROUND_DOWN),
    );
    await bind(session.id, first.hash, 'BTC', first.from);
    await tick();
    time.freeze(Date.now() + 60 * MIN + 25 * 60 * MIN);
    await expireDueSessions(node.kassa.ctx);
    const after = await chain.pay(session.wallet, 'BTC', session.quote.BTC!);
    await tick();
    const refused = await postBind(node.kassa, session.id, {
      tx_hash: after.hash,
      chain_id: CHAIN_ID,
      crypto_currency: 'BTC',
    });
    expect(refused.status).toBe(409);
    expect(refused.body.message).toBe('Checkout session is expired; it no longer accepts a transaction');
    expect(await eventTypes(session.id)).toEqual(['created', 'tx_bound', 'partially_paid', 'expired']);
    expect((await paymentsOf(session.id)).map((p) => p.txHash)).not.toContain(after.hash);
  });
});

describe('bound transactions judged by receipt and Transfer logs', () => {
  /** Each rejection's code (docs/api/rest.md#error-codes), by the words its text begins with. */
  const CODE_BY_PREFIX: Record<string, string> = {
    'reverted:': 'reverted',
    'wrong recipient:': 'wrong_recipient',
    'wrong asset:': 'wrong_asset',
    'wrong sender:': 'wrong_sender',
    'wrong chain:': 'wrong_chain',
    'no payment:': 'no_payment',
    'mined before': 'tx_mined_before_session',
  };
  /** Binds and insists on a 409 whose message is `reason`, with the code of its kind. */
  async function refused(id: string, body: Record<string, unknown>, reason: string) {
    const response = await postBind(node.kassa, id, { chain_id: CHAIN_ID, ...body });
    expect(response.status, JSON.stringify(response.body)).toBe(409);
    expect(response.body.message).toBe(reason);
    const prefix = Object.keys(CODE_BY_PREFIX).find((words) => reason.startsWith(words));
    if (prefix) expect(response.body.code).toBe(CODE_BY_PREFIX[prefix]);
    expect(await paymentsOf(id)).toEqual([]);
  }

  it('a mined transaction that reverted is refused at bind with the reason; nothing is written', async () => {
    const session = await checkout();
    // More than the payer holds: the token contract reverts; the gas limit skips estimation so it is mined.
    const sent = await chain.pay(session.wallet, 'BTC', '999999999', { gas: 100_000n });
    expect(sent.status).toBe('reverted');
    await refused(
      session.id,
      { tx_hash: sent.hash, crypto_currency: 'BTC', payer_wallet_address: sent.from },
      `reverted: transaction ${sent.hash} reverted in block ${sent.blockNumber} on local`,
    );
    expect((await view(session.id)).status).toBe('waiting_payment');
    expect(await eventTypes(session.id)).toEqual(['created']);
  });

  it('a mined transaction paying another wallet is refused: wrong recipient', async () => {
    const session = await checkout();
    const elsewhere = randomWallet();
    const sent = await chain.pay(elsewhere, 'USDT', session.quote.USDT!);
    await refused(
      session.id,
      { tx_hash: sent.hash, crypto_currency: 'USDT', payer_wallet_address: sent.from },
      `wrong recipient: transaction ${sent.hash} transfers USDT to ${elsewhere}, not to the session wallet ${session.wallet}`,
    );
  });

  it('a mined transaction paying the right wallet in another asset is refused: wrong asset', async () => {
    const session = await checkout();
    const sent = await chain.pay(session.wallet, 'USDC', '5');
    await refused(
      session.id,
      { tx_hash: sent.hash, crypto_currency: 'USDT', payer_wallet_address: sent.from },
      `wrong asset: transaction ${sent.hash} transfers USDC to the session wallet; the session expects USDT`,
    );
  });

  it('a pending transaction that reverts once mined is rejected with the reason; the session stays open and the payer pays again', async () => {
    const session = await checkout();
    const pending = await chain.payPending(session.wallet, 'BTC', '999999999', { gas: 100_000n, from: 6 });
    expect(
      (await postBind(node.kassa, session.id, { tx_hash: pending.hash, chain_id: CHAIN_ID, crypto_currency: 'BTC' }))
        .status,
    ).toBe(200);
    await pending.release();
    await tick();
    const bound = await node.kassa.ctx.store.sessions.transactionsOf(session.id);
    expect(bound.map((t) => [t.state, t.reason?.replace(/block \d+/, 'block N')])).toEqual([
      ['rejected', `reverted: transaction ${pending.hash} reverted in block N on local`],
    ]);
    expect((await view(session.id)).status).toBe('waiting_payment');
    // A bind is a hint: the payer pays again, exactly, and that pays the session.
    await chain.pay(session.wallet, 'BTC', session.quote.BTC!, { from: 6 });
    await tick();
    expect(await view(session.id)).toMatchObject({ status: 'paid', crypto_currency: 'BTC' });
  });

  it('a pending transaction bound before expiry that reverts after it: rejected with the reason, the session expires', async () => {
    const session = await checkout();
    const pending = await chain.payPending(session.wallet, 'BTC', '999999999', { gas: 100_000n, from: 7 });
    expect(
      (await postBind(node.kassa, session.id, { tx_hash: pending.hash, chain_id: CHAIN_ID, crypto_currency: 'BTC' }))
        .status,
    ).toBe(200);
    // Past expiry, inside the grace: the transaction the chain knew before expires_at keeps the session open…
    time.freeze(Date.now() + 61 * MIN);
    await tick();
    expect((await view(session.id)).status).toBe('waiting_payment');
    // …until it is mined and reverts. Anyone may bind a transaction of their own that reverts: it fails nothing.
    await pending.release();
    await tick();
    const bound = await node.kassa.ctx.store.sessions.transactionsOf(session.id);
    expect(bound.map((t) => [t.state, t.reason?.replace(/block \d+/, 'block N')])).toEqual([
      ['rejected', `reverted: transaction ${pending.hash} reverted in block N on local`],
    ]);
    expect((await view(session.id)).status).toBe('expired');
    expect(await eventTypes(session.id)).toEqual(['created', 'expired']);
    expect((await historyOf(session.id)).at(-1)!).toMatchObject({ from: 'waiting_payment', to: 'expired' });
    const stored = await node.kassa.runtime.db.prisma.checkoutSession.findUnique({
      where: { id: session.id },
      select: { failureReason: true },
    });
    expect(stored?.failureReason).toBeNull();
  });

  it('a hash the chain never saw holds nothing open and is rejected as dropped after the grace', async () => {
    const session = await checkout();
    const unknown = `0x${randomBytes(32).toString('hex')}`;
    expect(
      (await postBind(node.kassa, session.id, { tx_hash: unknown, chain_id: CHAIN_ID, crypto_currency: 'BTC' })).status,
    ).toBe(200);
    await tick();
    expect((await view(session.id)).status).toBe('waiting_payment');
    time.freeze(Date.now() + 61 * MIN);
    await tick();
    expect((await view(session.id)).status).toBe('expired');
    expect((await node.kassa.ctx.store.sessions.transactionsOf(session.id)).map((t) => [t.state, t.reason])).toEqual([
      ['rejected', `dropped: transaction ${unknown} was not found on local within 60 minutes of binding`],
    ]);
    expect(await eventTypes(session.id)).toEqual(['created', 'expired']);
  });
});

describe('attribution when sessions share one wallet', () => {
  it('three sessions with the same basket get unique amounts: each exact transfer pays its own session, binds in any order agree', async () => {
    const wallet = randomWallet();
    const merchant = await createMerchant(node.kassa.ctx, { wallet });
    const sessions = [await checkout({ merchant }), await checkout({ merchant }), await checkout({ merchant })];
    expect(new Set(sessions.map((s) => s.quote.USDC)).size).toBe(3);

    const sent = [];
    for (const [index, session] of sessions.entries())
      sent.push(await chain.pay(wallet, 'USDC', session.quote.USDC!, { from: 3 + index }));
    // Two payers bind, in another order than they paid; the third does not: the scan finds its transfer by its amount.
    await bind(sessions[2]!.id, sent[2]!.hash, 'USDC', sent[2]!.from);
    await bind(sessions[0]!.id, sent[0]!.hash, 'USDC', sent[0]!.from);
    await tick();
    for (const [index, session] of sessions.entries()) {
      expect(await view(session.id)).toMatchObject({
        status: 'paid',
        overpaid: false,
        bound_tx_hash: index === 1 ? null : sent[index]!.hash,
      });
      expect((await paymentsOf(session.id)).map((p) => [p.txHash, p.attribution])).toEqual([
        [sent[index]!.hash, index === 1 ? 'exact_amount' : 'bound_tx'],
      ]);
    }
    const left = (await node.kassa.ctx.store.chain.unattributedPayments(1000)).map((p) => p.txHash);
    for (const s of sent) expect(left).not.toContain(s.hash);
  });

  // Found by review: the create after every unique amount of its price was held got the base amount, which the first
  // session holds; a transfer of it paid the first session whoever sent it, and the new session's bind was refused.
  it('a create that finds every unique amount of its price held on the wallet is refused (409), writing nothing', async () => {
    const first = await checkout();
    for (let i = 1; i < 100; i += 1) await checkout({ merchant: first.merchant });
    const prisma = node.kassa.runtime.db.prisma;
    const count = async () =>
      (
        await prisma.$queryRaw<Array<{ sessions: number; claims: number; keys: number }>>`
          SELECT (SELECT count(*)::int FROM checkout_sessions WHERE organisation_id = ${first.merchant.organisationId}::uuid) AS sessions,
                 (SELECT count(*)::int FROM payment_amount_claims WHERE wallet_address = ${first.wallet.toLowerCase()}) AS claims,
                 (SELECT count(*)::int FROM idempotency_keys WHERE organisation_id = ${first.merchant.organisationId}::uuid) AS keys`
      )[0]!;
    const before = await count();
    const refused = await postCreate(node.kassa, first.merchant, checkoutRequest(), { idempotencyKey: 'the-101st' });
    expect(refused.status).toBe(409);
    expect(refused.body.message).toMatch(
      /^Every unique amount of this total in \w+ is held by another open checkout session/,
    );
    expect(await count()).toEqual(before);

    // The first session's amount is still its own alone.
    const sent = await chain.pay(first.wallet, 'USDC', first.quote.USDC!, { from: 3 });
    await tick();
    expect(await view(first.id)).toMatchObject({ status: 'paid', overpaid: false });
    expect((await paymentsOf(first.id)).map((p) => [p.txHash, p.attribution])).toEqual([[sent.hash, 'exact_amount']]);
  });
});

describe('chain reorganisations', () => {
  it.each([1, 2, 3])(
    'a reorg of depth %i rolls the payment back and credits it again when it is re-included',
    async (depth) => {
      const session = await checkout();
      const raw = await chain.signPayment(session.wallet, 'USDT', session.quote.USDT!, { from: 6 });
      const snapshot = await chain.snapshot();
      const hash = await chain.sendRaw(raw);
      if (depth > 1) await chain.mine(depth - 1);
      await bind(session.id, hash, 'USDT');
      await tick();
      expect((await view(session.id)).status).toBe('paid');
      const minedIn = (await paymentsOf(session.id))[0]!.blockHash;

      // The payment's block and the `depth - 1` after it are replaced by a longer branch without it.
      await chain.revert(snapshot);
      await chain.mine(depth + 1);
      await tick();
      expect(await view(session.id)).toMatchObject({ status: 'waiting_payment', overpaid: false });
      expect((await paymentsOf(session.id)).map((p) => p.state)).toEqual(['reversed']);
      expect((await historyOf(session.id)).at(-1)).toEqual({
        from: 'paid',
        to: 'waiting_payment',
        cause: 'payment reversed by a chain reorganisation',
      });

      // The same signed transaction is included again on the new branch.
      expect(await chain.sendRaw(raw)).toBe(hash);
      await tick();
      expect((await view(session.id)).status).toBe('paid');
      const [again, ...none] = await paymentsOf(session.id);
      expect(none).toEqual([]);
      expect(again).toMatchObject({ txHash: hash, state: 'confirmed' });
      expect(again!.blockHash).not.toBe(minedIn);
      expect(await eventTypes(session.id)).toEqual(['created', 'tx_bound', 'paid', 'payment_reversed', 'paid']);
    },
  );
});

describe('binds that try to claim what another payer sent', () => {
  it('a payer wallet named at bind must be the sender: otherwise the bind is refused as wrong sender', async () => {
    const session = await checkout();
    const sent = await chain.pay(session.wallet, 'USDT', new Decimal(session.quote.USDT!).minus(1).toFixed(6), {
      from: 2,
    });
    const claimed = '0x90f79bf6eb2c4f870365e785982e1f101e93b906'; // sandbox account 3, which did not send it
    const response = await postBind(node.kassa, session.id, {
      tx_hash: sent.hash,
      chain_id: CHAIN_ID,
      crypto_currency: 'USDT',
      payer_wallet_address: claimed,
    });
    expect(response.status).toBe(409);
    expect(response.body.message).toBe(
      `wrong sender: transaction ${sent.hash} was sent by ${sent.from}, not by the payer wallet ${claimed} named when it was bound`,
    );
    expect(response.body.code).toBe('wrong_sender');
    await tick();
    expect(await view(session.id)).toMatchObject({ status: 'waiting_payment', crypto_currency: null });
  });

  it("a bind naming someone else's wallet does not capture that wallet's payment for its own session", async () => {
    const wallet = randomWallet();
    const merchant = await createMerchant(node.kassa.ctx, { wallet });
    const attacker = await checkout({ merchant });
    const victim = await checkout({ merchant });
    // Open before the transfer is mined, so only the credit to the victim's session can refuse its bind (rule 1).
    const other = await checkout({ merchant });
    const victimWallet = '0x15d34aaf54267db7d7c367839aaf71a00a2c6a65'; // sandbox account 4
    // The attacker binds a made-up hash, naming the victim's wallet as payer.
    await bind(attacker.id, `0x${randomBytes(32).toString('hex')}`, 'USDC', victimWallet);
    // Only the victim's session (unbound) fits the exact amount: the bind of the attacker proves nothing.
    const sent = await chain.pay(wallet, 'USDC', victim.quote.USDC!, { from: 4 });
    await tick();
    expect((await view(victim.id)).status).toBe('paid');
    expect((await paymentsOf(victim.id)).map((p) => [p.txHash, p.attribution])).toEqual([[sent.hash, 'exact_amount']]);
    expect(await paymentsOf(attacker.id)).toEqual([]);
    // And that transaction cannot be bound to the attacker's (or any other) session afterwards.
    const refused = await postBind(node.kassa, other.id, {
      tx_hash: sent.hash,
      chain_id: CHAIN_ID,
      crypto_currency: 'USDC',
    });
    expect(refused.status).toBe(409);
    expect(refused.body.message).toBe(`Transaction ${sent.hash} already paid another checkout session`);
  });

  it('a top-up from the proven payer wallet is credited only once its own bind is verified', async () => {
    const session = await checkout();
    const half = new Decimal(session.quote.USDT!).dividedBy(2).toFixed(8, Decimal.ROUND_DOWN);
    const first = await chain.pay(session.wallet, 'USDT', half, { from: 5 });
    await bind(session.id, first.hash, 'USDT', first.from);
    const rest = new Decimal(session.quote.USDT!).minus(half).toFixed(8);
    const second = await chain.pay(session.wallet, 'USDT', rest, { from: 5 });
    // Both are scanned in one range: the top-up is nobody's until it is bound.
    await tick();
    await tick();
    expect((await view(session.id)).status).toBe('partial');
    expect(
      await node.kassa.ctx.store.chain.unattributedPayments(10_000).then((rows) => rows.map((p) => p.txHash)),
    ).toContain(second.hash);
    await bind(session.id, second.hash, 'USDT');
    await tick();
    expect((await view(session.id)).status).toBe('paid');
    expect((await paymentsOf(session.id)).map((p) => [p.txHash, p.attribution])).toEqual([
      [first.hash, 'bound_tx'],
      [second.hash, 'bound_tx'],
    ]);
  });
});
