import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createWalletClient, encodeFunctionData, http, parseAbi, type Hex } from 'viem';
import { anvil as anvilChain } from 'viem/chains';
import { sandboxAccount } from '../../src/chain/sandbox.js';
import { recordTransfer } from '../../src/db/payment-credits.js';
import { Decimal } from '../../src/domain/money.js';
import type { ChainTransfer, Credit } from '../../src/domain/payment-ports.js';
import { checkoutRequest } from '../factories/checkout-request.js';
import { createMerchant, type TestMerchant } from '../factories/merchant.js';
import { startChainKassa, startTestChain, type ChainKassa, type TestChain } from '../support/chain.js';
import { createSession, postBind } from '../support/rest-kassa.js';

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

beforeAll(async () => {
  chain = await startTestChain();
  node = await startChainKassa(chain.url, { env: { KASSA_CONFIRMATIONS_LOCAL: '3' } });
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
const unattributed = async () => (await node.kassa.ctx.store.chain.unattributedPayments(10_000)).map((p) => p.txHash);

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

    // A is paid and its amount is free again: a later session of the same basket is given it.
    let b = await checkout(merchant);
    for (let i = 0; i < 120 && b.quote.USDT !== a.quote.USDT; i += 1) b = await checkout(merchant);
    expect(b.quote.USDT).toBe(a.quote.USDT);

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
    const raw = await chain.signPayment(merchant.wallet, 'USDT', '50', { from: 6 });
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

describe('a session reopened by a reorg', () => {
  it('gets its unique amount back: a new transfer of that amount pays it by exact amount', async () => {
    const merchant = await createMerchant(node.kassa.ctx, { wallet: randomWallet() });
    const a = await checkout(merchant);
    const snapshot = await chain.snapshot();
    await chain.pay(merchant.wallet, 'USDT', a.quote.USDT!, { from: 5 });
    await confirmAll();
    expect((await view(a.id)).status).toBe('paid');

    // The transaction never comes back (its payer replaced it): the payer pays the same amount again.
    await reorgBack(snapshot);
    expect((await view(a.id)).status).toBe('waiting_payment');
    const second = await chain.pay(merchant.wallet, 'USDT', a.quote.USDT!, { from: 4 });
    await confirmAll();
    expect(await view(a.id)).toMatchObject({ status: 'paid', overpaid: false });
    expect((await paymentsOf(a.id)).filter((p) => p.state !== 'reversed').map((p) => p.txHash)).toEqual([second.hash]);
    expect(await unattributed()).not.toContain(second.hash);
  });
});

describe('reversed payments of one transaction, recorded again at other log indexes', () => {
  // Storage only (src/db/payment-credits.ts, src/db/chain-ledger.ts), on a network of its own: the
  // logs of one transaction come back shifted, and each reversed row is revived once, in order.
  const network = 'reorg-test';
  const chainId = '990001';
  const wallet = randomWallet();
  const token = randomWallet();
  const at = new Date('2026-11-27T10:00:00.000Z');
  const prisma = () => node.kassa.runtime.db.prisma;

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
    blockHash: randomHash(),
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
