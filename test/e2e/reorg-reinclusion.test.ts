import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createWalletClient, encodeFunctionData, http, parseAbi, type Hex } from 'viem';
import { anvil as anvilChain } from 'viem/chains';
import { sandboxAccount } from '../../src/chain/sandbox.js';
import { recordTransfer } from '../../src/db/payments/payment-credits.js';
import { Decimal } from '../../src/domain/shared/money.js';
import type { ChainTransfer, Credit } from '../../src/domain/payments/payment-ports.js';
import { checkoutRequest } from '../factories/checkout-request.js';
import { createMerchant, type TestMerchant } from '../factories/merchant.js';
import { startChainKassa, startTestChain, type ChainKassa, type TestChain } from '../support/chain.js';
import { controllableClock, createSession, postBind } from '../support/rest-kassa.js';

/**
 * docs/payment-detection.md (reorganisations): a transfer re-included after a reorg — in another
 * block, at the same or another log index — is credited again to the session it was credited to
 * before, and to no other. Found by review against a real anvil: a re-included transfer whose log
 * index changed was recorded as a new payment, so an exact payment of one session paid another
 * session holding the same unique amount, and a bound payment was never credited again.
 */

const CHAIN_ID = '31337';
let chain: TestChain;
let node: ChainKassa;
const time = controllableClock();

beforeAll(async () => {
  chain = await startTestChain();
  node = await startChainKassa(chain.url, { clock: time.clock, env: { KASSA_CONFIRMATIONS_LOCAL: '3' } });
}, 90_000);

afterAll(async () => {
  await node?.close();
  await chain?.stop();
});

const randomWallet = () => `0x${randomBytes(20).toString('hex')}`;
const randomHash = () => `0x${randomBytes(32).toString('hex')}`;

async function confirmAll(): Promise<void> {
  await chain.mine(3);
  await node.watchers.tick();
}

async function checkout(merchant: TestMerchant): Promise<{ id: string; quote: Record<string, string> }> {
  const session = await createSession(node.kassa, merchant, checkoutRequest());
  const quote = Object.fromEntries(
    (session.crypto_options as Array<{ ticker: string; amount: string }>).map((o) => [o.ticker, o.amount]),
  );
  return { id: session.session_id as string, quote };
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

const paymentsOf = (id: string) => node.kassa.ctx.store.chain.paymentsOfSession(id);
/** The unique amounts `id` holds and has not released, as `TICKER amount` with the quote's 8 digits. */
const claimsOf = async (id: string) =>
  (
    await node.kassa.runtime.db.prisma.$queryRaw<Array<{ claim: string }>>`
      SELECT asset || ' ' || amount::numeric(38, 8)::text AS claim FROM payment_amount_claims
       WHERE session_id = ${id}::uuid AND released_at IS NULL`
  ).map((row) => row.claim);
const unattributed = async () => (await node.kassa.ctx.store.chain.unattributedPayments(10_000)).map((p) => p.txHash);

/**
 * The quote-lifetime round's purge of released amounts, as it runs once the network is scanned past a release
 * (here: past the in-flight grace, instead of waiting for the scan).
 */
const purgeAsIfScannedPast = () =>
  node.kassa.ctx.store.purgeReleasedAmountClaims(
    new Date(Date.now() + (node.kassa.ctx.inflightGraceMinutes + 1) * 60_000),
    node.kassa.ctx.inflightGraceMinutes,
  );

/** Replaces the chain from `snapshot` on by a longer branch without what was mined since, and ticks. */
async function reorgBack(snapshot: string): Promise<void> {
  await chain.revert(snapshot);
  await chain.mine(5);
  await node.watchers.tick();
}

/**
 * Re-includes the signed transaction `raw` in one block right after another USDT transfer (a higher
 * tip, so the node orders it first): its Transfer log gets another log index. Returns that index.
 */
async function reincludeAfterAnotherTransfer(raw: Hex): Promise<number> {
  const token = chain.network.tokens.find((t) => t.ticker === 'USDT')!;
  const wallet = createWalletClient({
    chain: { ...anvilChain, id: 31337, rpcUrls: { default: { http: [chain.url] } } },
    account: sandboxAccount(7),
    transport: http(chain.url),
  });
  const request = await wallet.prepareTransactionRequest({
    to: token.address as Hex,
    data: encodeFunctionData({
      abi: parseAbi(['function transfer(address to, uint256 amount) returns (bool)']),
      functionName: 'transfer',
      args: [randomWallet() as Hex, 1_000_000n],
    }),
    gas: 100_000n,
    maxFeePerGas: 100_000_000_000n,
    maxPriorityFeePerGas: 50_000_000_000n,
  });
  const filler = await wallet.signTransaction(request as Parameters<typeof wallet.signTransaction>[0]);
  await chain.rpc('evm_setAutomine', [false]);
  try {
    await chain.rpc('eth_sendRawTransaction', [filler]);
    const hash = await chain.rpc<Hex>('eth_sendRawTransaction', [raw]);
    await chain.rpc('anvil_mine', ['0x1']);
    const receipt = await chain.rpc<{ logs: Array<{ logIndex: string }> }>('eth_getTransactionReceipt', [hash]);
    return Number(BigInt(receipt.logs[0]!.logIndex));
  } finally {
    await chain.rpc('evm_setAutomine', [true]);
  }
}

describe('a transfer re-included at another log index after a reorg', () => {
  it('an exact payment pays its own session again, not another session that was given the same amount', async () => {
    const merchant = await createMerchant(node.kassa.ctx, { wallet: randomWallet() });
    const a = await checkout(merchant);
    const raw = await chain.signPayment(merchant.wallet, 'USDT', a.quote.USDT!, { from: 8 });
    const snapshot = await chain.snapshot();
    const hash = await chain.sendRaw(raw);
    await confirmAll();
    expect((await view(a.id)).status).toBe('paid');

    // A is paid and its amount is free again once scanned past: a later session of the same basket is given it.
    await purgeAsIfScannedPast();
    const b = await sessionGiven(merchant, a.quote.USDT!);

    await reorgBack(snapshot);
    expect(await view(a.id)).toMatchObject({ status: 'waiting_payment' });
    expect((await paymentsOf(a.id)).map((p) => p.state)).toEqual(['reversed']);

    expect(await reincludeAfterAnotherTransfer(raw)).toBe(1);
    await confirmAll();

    expect(await view(a.id)).toMatchObject({ status: 'paid', overpaid: false });
    const [again, ...none] = await paymentsOf(a.id);
    expect(none).toEqual([]);
    expect(again).toMatchObject({ txHash: hash, logIndex: 1, state: 'confirmed', attribution: 'exact_amount' });
    expect(await view(b.id)).toMatchObject({ status: 'waiting_payment' });
    expect(await paymentsOf(b.id)).toEqual([]);
    expect(await eventTypes(a.id)).toEqual(['created', 'paid', 'payment_reversed', 'paid']);
    expect(await eventTypes(b.id)).toEqual(['created']);
    // Nobody else can take it: B's bind of it is refused.
    const stolen = await postBind(node.kassa, b.id, { tx_hash: hash, chain_id: CHAIN_ID, crypto_currency: 'USDT' });
    expect(stolen.status).toBe(409);
  });

  it('a bound payment is credited again to its session', async () => {
    const merchant = await createMerchant(node.kassa.ctx, { wallet: randomWallet() });
    const c = await checkout(merchant);
    const raw = await chain.signPayment(merchant.wallet, 'USDT', '60', { from: 6 });
    const snapshot = await chain.snapshot();
    const hash = await chain.sendRaw(raw);
    const bound = await postBind(node.kassa, c.id, { tx_hash: hash, chain_id: CHAIN_ID, crypto_currency: 'USDT' });
    expect(bound.status).toBe(200);
    await confirmAll();
    expect(await view(c.id)).toMatchObject({ status: 'partial' });

    await reorgBack(snapshot);
    expect(await view(c.id)).toMatchObject({ status: 'waiting_payment' });

    expect(await reincludeAfterAnotherTransfer(raw)).toBe(1);
    await confirmAll();

    expect(await view(c.id)).toMatchObject({ status: 'partial' });
    const [again, ...none] = await paymentsOf(c.id);
    expect(none).toEqual([]);
    expect(again).toMatchObject({ txHash: hash, logIndex: 1, state: 'confirmed', attribution: 'bound_tx' });
    expect(await unattributed()).not.toContain(hash);
    expect(await eventTypes(c.id)).toEqual([
      'created',
      'tx_bound',
      'partially_paid',
      'payment_reversed',
      'partially_paid',
    ]);
    // Binding it again is still an idempotent replay, and changes nothing.
    const rebound = await postBind(node.kassa, c.id, { tx_hash: hash, chain_id: CHAIN_ID, crypto_currency: 'USDT' });
    expect(rebound.status).toBe(200);
    await confirmAll();
    expect(await view(c.id)).toMatchObject({ status: 'partial' });
  });
});

describe('a payment bound from a block the scan had not reached, whose block is then replaced', () => {
  // Found by a review: the bind records the payment at its block before the scan gets there, so no reorg check sees
  // that block go. The scan then finds the transaction lower down, on the new branch: the payment must move there,
  // not stay at the replaced block until its confirmation check reverses it for good.
  it.each([
    ['at the same log index', false],
    ['at another log index', true],
  ])('%s: the payment follows its transaction and stays its session', async (_where, afterAnother) => {
    const merchant = await createMerchant(node.kassa.ctx, { wallet: randomWallet() });
    const c = await checkout(merchant);
    await node.watchers.tick();
    const raw = await chain.signPayment(merchant.wallet, 'USDT', '60', { from: 6 });
    const snapshot = await chain.snapshot();
    await chain.mine(1);
    const hash = await chain.sendRaw(raw);
    const bound = await postBind(node.kassa, c.id, { tx_hash: hash, chain_id: CHAIN_ID, crypto_currency: 'USDT' });
    expect(bound.status).toBe(200);
    const [before] = await paymentsOf(c.id);

    // Before any scan: the branch is replaced by one where the same transaction is mined a block earlier.
    await chain.revert(snapshot);
    if (afterAnother) await reincludeAfterAnotherTransfer(raw);
    else expect(await chain.sendRaw(raw)).toBe(hash);
    await chain.mine(2);
    await node.watchers.tick();
    await confirmAll();

    expect(await view(c.id)).toMatchObject({ status: 'partial' });
    const [now, ...none] = await paymentsOf(c.id);
    expect(none).toEqual([]);
    expect(now).toMatchObject({ txHash: hash, state: 'confirmed', attribution: 'bound_tx' });
    expect(now!.blockNumber).toBe(before!.blockNumber - 1n);
    expect(now!.blockHash).not.toBe(before!.blockHash);
    expect(await unattributed()).not.toContain(hash);
  });
});

/** A session of `merchant` paid by exact amount (from sandbox account 5), and a snapshot from before the payment. */
async function paidExactly(
  merchant: TestMerchant,
): Promise<{ a: { id: string; quote: Record<string, string> }; snapshot: string }> {
  const a = await checkout(merchant);
  const snapshot = await chain.snapshot();
  await chain.pay(merchant.wallet, 'USDT', a.quote.USDT!, { from: 5 });
  await confirmAll();
  expect((await view(a.id)).status).toBe('paid');
  return { a, snapshot };
}

/** Later sessions of the same basket until one is given `usdt` (the amounts go round their 100 steps). */
async function sessionGiven(merchant: TestMerchant, usdt: string) {
  let b = await checkout(merchant);
  for (let i = 0; i < 120 && b.quote.USDT !== usdt; i += 1) b = await checkout(merchant);
  expect(b.quote.USDT).toBe(usdt);
  return b;
}

describe('a session reopened by a reorg', () => {
  it('gets its unique amount back: a new transfer of that amount pays it by exact amount', async () => {
    const merchant = await createMerchant(node.kassa.ctx, { wallet: randomWallet() });
    const { a, snapshot } = await paidExactly(merchant);

    // The transaction never comes back (its payer replaced it): the payer pays the same amount again.
    await reorgBack(snapshot);
    expect((await view(a.id)).status).toBe('waiting_payment');
    const second = await chain.pay(merchant.wallet, 'USDT', a.quote.USDT!, { from: 4 });
    await confirmAll();
    expect(await view(a.id)).toMatchObject({ status: 'paid', overpaid: false });
    expect((await paymentsOf(a.id)).filter((p) => p.state !== 'reversed').map((p) => p.txHash)).toEqual([second.hash]);
    expect(await unattributed()).not.toContain(second.hash);
  });

  /**
   * A paid by exact amount; its released amount freed (the quote-lifetime round does so once the network is
   * scanned past the release: here past the in-flight grace) and given to a later session B of the same basket;
   * then a reorganisation takes A's transaction away for good: A is reopened, asking for the amount B holds.
   */
  async function reopenedBesideItsAmountsHolder() {
    const { merchant, a, b, snapshot } = await paidAndGivenAway();
    await reorgBack(snapshot);
    expect(await view(a.id)).toMatchObject({ status: 'waiting_payment' });
    expect(await claimsOf(a.id)).not.toContain(`USDT ${a.quote.USDT}`);
    return { merchant, a, b, amount: a.quote.USDT! };
  }
  /** The part of reopenedBesideItsAmountsHolder before the reorganisation. */
  async function paidAndGivenAway() {
    const merchant = await createMerchant(node.kassa.ctx, { wallet: randomWallet() });
    const { a, snapshot } = await paidExactly(merchant);
    await purgeAsIfScannedPast();
    const b = await sessionGiven(merchant, a.quote.USDT!);
    expect(await claimsOf(b.id)).toContain(`USDT ${a.quote.USDT}`);
    return { merchant, a, b, snapshot };
  }
  const bind = (id: string, hash: string) =>
    postBind(node.kassa, id, { tx_hash: hash, chain_id: CHAIN_ID, crypto_currency: 'USDT' });

  // Found by review: the reopened session could not take its amount back from a session given it in
  // between, yet its page still asked for that amount, so its payer's new transfer paid the other session.
  it('whose amount another session was given meanwhile: a transfer of that amount pays neither by amount; a bind settles it', async () => {
    const { merchant, a, b, amount } = await reopenedBesideItsAmountsHolder();
    // A third session of the same merchant, open before the new transfer is mined (rule 1 would refuse it otherwise).
    const stranger = await createSession(
      node.kassa,
      merchant,
      checkoutRequest({ items: [{ name: 'Something else', quantity: 1, unit_price: 7 }] }),
    );
    // The first transaction never comes back; A's payer sends A's amount again, in a new transaction.
    const again = await chain.pay(merchant.wallet, 'USDT', amount, { from: 4 });
    await confirmAll();
    expect(await view(b.id)).toMatchObject({ status: 'waiting_payment' });
    expect(await paymentsOf(b.id)).toEqual([]);
    expect(await view(a.id)).toMatchObject({ status: 'waiting_payment' });
    expect(await unattributed()).toContain(again.hash);

    // Nobody else may bind it: the third session is refused, and it stays unattributed.
    const refused = await bind(stranger.session_id as string, again.hash);
    expect(refused.status).toBe(409);
    expect(refused.body.message).toContain('other checkout sessions ask for');
    expect(await unattributed()).toContain(again.hash);

    // Whoever sent it binds it: it pays that session.
    expect((await bind(a.id, again.hash)).status).toBe(200);
    await confirmAll();
    expect(await view(a.id)).toMatchObject({ status: 'paid', overpaid: false });

    // Once A is paid, the amount is B's alone for a transfer mined after that (one mined before, while A could
    // still be paid with it, would be no one's by amount): the chain's clock is a few seconds behind ours here.
    await chain.rpc('evm_increaseTime', [10]);
    const own = await chain.pay(merchant.wallet, 'USDT', amount, { from: 3 });
    await confirmAll();
    expect(await view(b.id)).toMatchObject({ status: 'paid', overpaid: false });
    expect((await paymentsOf(b.id)).map((p) => [p.txHash, p.attribution])).toEqual([[own.hash, 'exact_amount']]);
  });

  it("whose amount another session was given meanwhile: once that session gives it up, it is the reopened one's", async () => {
    const { merchant, a, b, amount } = await reopenedBesideItsAmountsHolder();
    // B's payer pays first: no one's by amount either, until bound.
    const first = await chain.pay(merchant.wallet, 'USDT', amount, { from: 4 });
    await confirmAll();
    expect(await view(b.id)).toMatchObject({ status: 'waiting_payment' });
    expect((await bind(b.id, first.hash)).status).toBe(200);
    await confirmAll();
    expect(await view(b.id)).toMatchObject({ status: 'paid' });

    // B's claim is released, not freed: the round that would free it hands it to A, which still asks for it.
    await purgeAsIfScannedPast();
    expect(await claimsOf(a.id)).toContain(`USDT ${amount}`);

    await chain.rpc('evm_increaseTime', [10]);
    const second = await chain.pay(merchant.wallet, 'USDT', amount, { from: 3 });
    await confirmAll();
    expect(await view(a.id)).toMatchObject({ status: 'paid', overpaid: false });
    expect(
      (await paymentsOf(a.id)).filter((p) => p.state !== 'reversed').map((p) => [p.txHash, p.attribution]),
    ).toEqual([[second.hash, 'exact_amount']]);
    expect(await paymentsOf(b.id)).toHaveLength(1);
  });

  // The share counts from the reopening on (less the skew): what the holder's payer sent before it is the holder's.
  // Here the block comes a minute before the reopening by the chain's clock and is scanned after it, as a lagging
  // watcher would. Before, a share counted from its session's creation and left the transfer unattributed.
  it('whose amount another session was given meanwhile: a transfer of it mined before the reopening, scanned after, still pays that session', async () => {
    const { merchant, a, b, snapshot } = await paidAndGivenAway();
    time.freeze(Date.now() + 60_000);
    try {
      await reorgBack(snapshot);
      expect(await view(a.id)).toMatchObject({ status: 'waiting_payment' });
      const own = await chain.pay(merchant.wallet, 'USDT', b.quote.USDT!, { from: 3 });
      await confirmAll();
      expect(await view(b.id)).toMatchObject({ status: 'paid', overpaid: false });
      expect((await paymentsOf(b.id)).map((p) => [p.txHash, p.attribution])).toEqual([[own.hash, 'exact_amount']]);
    } finally {
      time.release();
    }
  });

  // The claim handed over counts from the previous holder's release on (held_since): a transfer mined while both
  // sessions asked for the amount is still no one's by amount when it is scanned only after the hand-over. Without
  // held_since the heir's claim covered every block and took a transfer its payer may not have sent.
  it("whose amount another session was given meanwhile: the claim handed to it does not reach back before the hand-over's release", async () => {
    const { merchant, a, b, amount } = await reopenedBesideItsAmountsHolder();
    const first = await chain.pay(merchant.wallet, 'USDT', amount, { from: 4 });
    await confirmAll();
    // B's release (and so the hand-over's held_since) two minutes ahead of the chain's clock and of ours.
    const head = await chain.rpc<{ timestamp: string }>('eth_getBlockByNumber', ['latest', false]);
    const releasedAt = Math.max(Date.now(), Number(BigInt(head.timestamp)) * 1000) + 120_000;
    time.freeze(releasedAt);
    try {
      expect((await bind(b.id, first.hash)).status).toBe(200);
      await confirmAll();
      expect(await view(b.id)).toMatchObject({ status: 'paid' });
      const grace = node.kassa.ctx.inflightGraceMinutes;
      await node.kassa.ctx.store.purgeReleasedAmountClaims(new Date(releasedAt + (grace + 1) * 60_000), grace);
    } finally {
      time.release();
    }
    expect(await claimsOf(a.id)).toContain(`USDT ${amount}`);

    // Mined before the release by the chain's clock (while the share stood), scanned after the hand-over.
    const shared = await chain.pay(merchant.wallet, 'USDT', amount, { from: 3 });
    await confirmAll();
    expect(await view(a.id)).toMatchObject({ status: 'waiting_payment' });
    expect((await paymentsOf(a.id)).filter((p) => p.state !== 'reversed')).toEqual([]);
    expect(await unattributed()).toContain(shared.hash);
  });

  it("whose amount another session held: a share left without a claim becomes its session's claim", async () => {
    const { merchant, a, b, amount } = await reopenedBesideItsAmountsHolder();
    // Another instance's round freed B's claim before A's share was written (the two race): the share stands alone.
    await node.kassa.runtime.db.prisma.$executeRaw`DELETE FROM payment_amount_claims WHERE session_id = ${b.id}::uuid`;
    await node.kassa.ctx.store.purgeReleasedAmountClaims(new Date(), node.kassa.ctx.inflightGraceMinutes);
    expect(await claimsOf(a.id)).toContain(`USDT ${amount}`);

    await chain.rpc('evm_increaseTime', [10]);
    const sent = await chain.pay(merchant.wallet, 'USDT', amount, { from: 3 });
    await confirmAll();
    expect(await view(a.id)).toMatchObject({ status: 'paid', overpaid: false });
    expect((await paymentsOf(a.id)).filter((p) => p.state !== 'reversed').map((p) => p.txHash)).toEqual([sent.hash]);
  });
});

describe('reversed payments of one transaction, recorded again at other log indexes', () => {
  // Storage only (src/db/payments/payment-credits.ts, src/db/payments/chain-ledger.ts), on a network of its own: the
  // logs of one transaction come back shifted, and each reversed row is revived once, in order.
  const network = 'reorg-test';
  const chainId = '990001';
  const wallet = randomWallet();
  const token = randomWallet();
  const at = new Date('2026-11-27T10:00:00.000Z');
  const prisma = () => node.kassa.runtime.db.prisma;

  // One hash per block, as on a chain: the logs of one block share it (a transfer seen at another hash has moved).
  const blockHashes = new Map<bigint, string>();
  const hashOf = (block: bigint) => blockHashes.get(block) ?? blockHashes.set(block, randomHash()).get(block)!;
  const transfer = (txHash: string, logIndex: number, units: bigint, block: bigint): ChainTransfer => ({
    network,
    chainId,
    txHash,
    logIndex,
    from: randomWallet(),
    to: wallet,
    asset: 'USDT',
    tokenAddress: token,
    baseUnits: units,
    amount: new Decimal(units.toString()).dividedBy(1_000_000),
    blockNumber: block,
    blockHash: hashOf(block),
    blockTime: at,
  });
  const record = (transfers: ChainTransfer[], credit: Credit | null = null) =>
    prisma().$transaction(async (tx) => {
      const holders: Array<string | null> = [];
      for (const t of transfers) holders.push(await recordTransfer(tx, t, credit, at));
      return holders;
    });
  const rowsOf = (txHash: string) =>
    prisma().$queryRaw<Array<{ id: string; log_index: number; base_units: string; state: string }>>`
      SELECT id, log_index, base_units::text AS base_units, state FROM payments
       WHERE chain_id = ${chainId} AND tx_hash = ${txHash} ORDER BY log_index, state DESC, id`;

  it('two different transfers shifted by one log revive their own rows', async () => {
    const hash = randomHash();
    await record([transfer(hash, 0, 5_000_000n, 100n), transfer(hash, 1, 7_000_000n, 100n)]);
    const before = await rowsOf(hash);
    await node.kassa.ctx.store.chain.rollBack(network, 100n, at);
    expect((await rowsOf(hash)).map((r) => r.state)).toEqual(['reversed', 'reversed']);

    await record([transfer(hash, 1, 5_000_000n, 101n), transfer(hash, 2, 7_000_000n, 101n)]);
    const after = await rowsOf(hash);
    expect(after.map((r) => [r.log_index, r.base_units, r.state])).toEqual([
      [1, '5000000', 'seen'],
      [2, '7000000', 'seen'],
    ]);
    expect(after.map((r) => r.id)).toEqual(before.map((r) => r.id));
  });

  // Found by review: a moved row kept the `late` flag it was first recorded with (operators read it: kassa payments list).
  it('a credited transfer that comes back in a block after its session expired is late; one that moves so is too', async () => {
    const merchant = await createMerchant(node.kassa.ctx, { wallet: randomWallet() });
    const session = await checkout(merchant);
    const expiresAt = new Date((await view(session.id)).expires_at as string).getTime();
    const credit: Credit = { sessionId: session.id, attribution: 'bound_tx' };
    const recordAt = (t: ChainTransfer, blockTime: number) =>
      prisma().$transaction((tx) => recordTransfer(tx, { ...t, blockTime: new Date(blockTime) }, credit, at));
    const lateOf = async (txHash: string) =>
      (await paymentsOf(session.id)).filter((p) => p.txHash === txHash).map((p) => [p.state, p.late]);

    const revived = randomHash();
    await recordAt(transfer(revived, 0, 4_000_000n, 300n), expiresAt - 60_000);
    expect(await lateOf(revived)).toEqual([['seen', false]]);
    await node.kassa.ctx.store.chain.rollBack(network, 300n, at);
    await recordAt(transfer(revived, 0, 4_000_000n, 301n), expiresAt + 60_000);
    expect(await lateOf(revived)).toEqual([['seen', true]]);

    // Recorded from a block since replaced (a bind read it before the scan), then found in a later block.
    const moved = randomHash();
    await recordAt(transfer(moved, 0, 3_000_000n, 310n), expiresAt - 60_000);
    expect(await lateOf(moved)).toEqual([['seen', false]]);
    blockHashes.set(310n, randomHash());
    await recordAt(transfer(moved, 0, 3_000_000n, 310n), expiresAt + 60_000);
    expect(await lateOf(moved)).toEqual([['seen', true]]);
  });

  it('equal transfers keep their order, and one that does not come back stays reversed', async () => {
    const hash = randomHash();
    await record([transfer(hash, 0, 5_000_000n, 200n), transfer(hash, 1, 5_000_000n, 200n)]);
    const before = await rowsOf(hash);
    await node.kassa.ctx.store.chain.rollBack(network, 200n, at);

    await record([transfer(hash, 1, 5_000_000n, 201n)]);
    const after = await rowsOf(hash);
    expect(after.map((r) => [r.id, r.log_index, r.state])).toEqual([
      [before[0]!.id, 1, 'seen'],
      [before[1]!.id, 1, 'reversed'],
    ]);
    // Seen again (a second scan, a bind): the same row, nothing new.
    expect(await record([transfer(hash, 1, 5_000_000n, 201n)])).toHaveLength(1);
    expect((await rowsOf(hash)).map((r) => r.id)).toEqual(after.map((r) => r.id));
  });
});
