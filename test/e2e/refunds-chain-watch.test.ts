import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createRefundWatcher, type RefundWatcher } from '../../src/chain/refund-watcher.js';
import { sandboxAccount } from '../../src/chain/sandbox.js';
import { createRefund, type CreateRefundInput } from '../../src/domain/refunds/create-refund.js';
import { expireDueSessions } from '../../src/domain/sessions/expire-sessions.js';
import { Decimal } from '../../src/domain/shared/money.js';
import { createLogger } from '../../src/logging.js';
import { checkoutRequest } from '../factories/checkout-request.js';
import { createMerchant, type TestMerchant } from '../factories/merchant.js';
import { startChainKassa, startTestChain, type ChainKassa, type TestChain } from '../support/chain.js';
import { parseJsonOutput, runKassaInProcess } from '../support/cli-process.js';
import { controllableClock, createSession, postBind } from '../support/rest-kassa.js';

/**
 * Refunds on a real anvil and PostgreSQL (issue 36, docs/refund-claims.md): a partial payment of an expired session
 * refunded to the merchant's address and sent by `kassa refunds send`; a refund transfer found by scanning, confirmed,
 * then removed by a reorganisation (back to sent); the claim link refusing a second address, an expired link, another
 * network's address format and a signature by a wallet that did not pay.
 */

const MIN = 60_000;
// Anvil's dev accounts: the shop receives at 3 (so the CLI's sandbox signer is found), the payer pays from 2.
const SHOP_WALLET = sandboxAccount(3).address.toLowerCase();
const PAYER = sandboxAccount(2).address.toLowerCase();
const DESTINATION = '0x1111111111111111111111111111111111111111';

let chain: TestChain;
let node: ChainKassa;
let shop: TestMerchant;
let refunds: RefundWatcher;
let env: Record<string, string>;
const time = controllableClock();

beforeAll(async () => {
  chain = await startTestChain();
  node = await startChainKassa(chain.url, { clock: time.clock });
  shop = await createMerchant(node.kassa.ctx, { wallet: SHOP_WALLET, name: 'Refund Shop' });
  const settings = { rpcTimeoutMs: 5_000, leaseSeconds: 30, maxBlocksPerRange: 1000, droppedAfterMinutes: 60 };
  refunds = createRefundWatcher(node.kassa.ctx, node.kassa.ctx.store.refundWatch, settings, createLogger('silent'));
  env = {
    KASSA_ENV: 'test',
    LOG_LEVEL: 'silent',
    KASSA_NETWORKS: 'local',
    KASSA_RPC_URLS_LOCAL: chain.url,
    DATABASE_URL: node.kassa.database.databaseUrl!,
    KASSA_DATA_DIR: node.kassa.database.dataDir,
  };
}, 60_000);

afterAll(async () => {
  await node?.close();
  await chain?.stop();
});

afterEach(() => time.release());

const ctx = () => node.kassa.ctx;
const refundOf = async (id: string) => (await ctx().store.refunds.findById(id))!;

/** A session of the shop paid `fraction` of its quote in `asset` from the payer, bound and scanned. */
async function paidSession(asset: 'ETH' | 'USDT', fraction: string): Promise<string> {
  const session = await createSession(node.kassa, shop, checkoutRequest());
  const quote = (session.crypto_options as Array<{ ticker: string; amount: string }>).find((o) => o.ticker === asset)!;
  const amount = new Decimal(quote.amount).times(fraction).toFixed(6, Decimal.ROUND_DOWN);
  const sent = await chain.pay(shop.wallet, asset, amount, { from: 2 });
  const bound = await postBind(node.kassa, session.session_id, {
    tx_hash: sent.hash,
    chain_id: '31337',
    crypto_currency: asset,
    payer_wallet_address: PAYER,
  });
  expect(bound.status, JSON.stringify(bound.body)).toBe(200);
  await node.watchers.tick();
  return session.session_id as string;
}

async function refund(sessionId: string, input: CreateRefundInput) {
  return (await createRefund(ctx(), shop.organisationId, sessionId, input)).refund;
}

async function causes(refundId: string) {
  return (await ctx().store.refunds.historyOf(refundId)).map((change) => `${change.from}→${change.to}:${change.cause}`);
}

describe('sending and watching refunds', () => {
  it('refunds a partial payment of an expired session to the merchant’s address, sent by `kassa refunds send`', async () => {
    const sessionId = await paidSession('ETH', '0.6');
    time.freeze(Date.now() + 61 * MIN);
    await node.watchers.tick();
    await expireDueSessions(ctx());
    expect((await node.kassa.http.get(`/checkout-sessions/${sessionId}`)).body.status).toBe('expired');
    const created = await refund(sessionId, {
      kind: 'full',
      destination: DESTINATION.toUpperCase().replace('0X', '0x'),
    });
    expect(created).toMatchObject({ status: 'ready', destination: DESTINATION, destinationSource: 'merchant' });

    const unsigned = parseJsonOutput<Record<string, any>>(
      await runKassaInProcess(['refunds', 'send', created.id, '--unsigned', '--json'], env),
    );
    expect(unsigned).toMatchObject({
      mode: 'unsigned',
      destination: DESTINATION,
      base_units: created.baseUnits.toString(),
      uri: `ethereum:${DESTINATION}@31337?value=${created.baseUnits}`,
      transaction: { chain_id: 31337, to: DESTINATION, data: '0x', value: created.baseUnits.toString() },
    });
    expect((await refundOf(created.id)).status).toBe('ready');

    const before = BigInt(await chain.rpc<string>('eth_getBalance', [DESTINATION, 'latest']));
    const run = await runKassaInProcess(['refunds', 'send', created.id, '--json'], env);
    expect(run.code, run.stderr).toBe(0);
    const sent = parseJsonOutput<Record<string, any>>(run);
    expect(sent).toMatchObject({ mode: 'sent', signer: SHOP_WALLET, receipt: 'success' });
    expect(BigInt(await chain.rpc<string>('eth_getBalance', [DESTINATION, 'latest'])) - before).toBe(created.baseUnits);
    expect(await refundOf(created.id)).toMatchObject({ status: 'sent', transfer: { txHash: sent.tx_hash } });

    await refunds.tick();
    const confirmed = await refundOf(created.id);
    expect(confirmed).toMatchObject({ status: 'confirmed', transfer: { txHash: sent.tx_hash, logIndex: -1 } });
    expect(await causes(created.id)).toEqual(['null→ready:created', 'ready→sent:reported', 'sent→confirmed:confirmed']);
    // Sending again is refused: the refund is no longer ready.
    const again = await runKassaInProcess(['refunds', 'send', created.id], env);
    expect(again.code).toBe(2);
    expect(again.stderr).toContain(`is confirmed (transaction ${sent.tx_hash})`);
  });

  it('finds a token refund sent without a hash, confirms it, and puts it back to sent when a reorganisation removes it', async () => {
    const sessionId = await paidSession('USDT', '1.5');
    const created = await refund(sessionId, { kind: 'excess', destination: DESTINATION });
    expect(created.status).toBe('ready');
    const snapshot = await chain.snapshot();
    // The shop sends from its wallet with any wallet app, and tells Kassa nothing.
    const sent = await chain.pay(DESTINATION, 'USDT', created.amount.toFixed(), { from: 3 });
    await refunds.tick();
    expect(await refundOf(created.id)).toMatchObject({
      status: 'confirmed',
      transfer: { txHash: sent.hash.toLowerCase(), sentFrom: SHOP_WALLET, blockNumber: sent.blockNumber },
    });

    await chain.revert(snapshot);
    await chain.mine(3);
    await refunds.tick();
    const reverted = await refundOf(created.id);
    expect(reverted).toMatchObject({ status: 'sent', transfer: { blockNumber: null, blockHash: null } });
    expect((await causes(created.id)).slice(-2)).toEqual(['sent→confirmed:confirmed', 'confirmed→sent:reorganisation']);

    // Sent again after the reorganisation: found and confirmed once more.
    const resent = await chain.pay(DESTINATION, 'USDT', created.amount.toFixed(), { from: 3 });
    await refunds.tick();
    expect(await refundOf(created.id)).toMatchObject({
      status: 'confirmed',
      transfer: { txHash: resent.hash.toLowerCase() },
    });
  });

  it('leaves a transfer of another amount, or from a wallet not the shop’s, unmatched', async () => {
    const sessionId = await paidSession('USDT', '1.5');
    const created = await refund(sessionId, { kind: 'excess', destination: DESTINATION });
    await chain.pay(DESTINATION, 'USDT', created.amount.plus('0.000001').toFixed(), { from: 3 });
    await chain.pay(DESTINATION, 'USDT', created.amount.toFixed(), { from: 4 });
    await refunds.tick();
    expect((await refundOf(created.id)).status).toBe('ready');
  });
});

describe('the claim link refuses', () => {
  const claim = (id: string, body: Record<string, unknown>) => node.kassa.http.post(`/r/${id}`).send(body);

  it('a second address, with 409 claim_used, and shows the page as used', async () => {
    const sessionId = await paidSession('USDT', '1.5');
    const created = await refund(sessionId, { kind: 'excess' });
    expect(created.status).toBe('awaiting_destination');
    const first = await claim(created.id, { address: DESTINATION });
    expect(first.status, JSON.stringify(first.body)).toBe(200);
    expect(first.body).toMatchObject({ status: 'ready', destination: DESTINATION, destination_source: 'claim' });
    const second = await claim(created.id, { address: PAYER });
    expect(second.status).toBe(409);
    expect(second.body).toMatchObject({ code: 'claim_used', message: 'This refund link already took an address' });
    const page = await node.kassa.http.get(`/r/${created.id}`);
    expect(page.status).toBe(409);
    expect(page.text).toContain('This refund link has been used');
    expect((await refundOf(created.id)).destination).toBe(DESTINATION);
  });

  it('an expired link, with 410 claim_expired', async () => {
    const sessionId = await paidSession('USDT', '1.5');
    const created = await refund(sessionId, { kind: 'excess', claimExpiresInMinutes: 10 });
    time.freeze(Date.now() + 11 * MIN);
    const answer = await claim(created.id, { address: DESTINATION });
    expect(answer.status).toBe(410);
    expect(answer.body).toMatchObject({ code: 'claim_expired', message: 'This refund link has expired' });
    const page = await node.kassa.http.get(`/r/${created.id}`).set('accept-language', 'de');
    expect(page.status).toBe(410);
    expect(page.text).toContain('Dieser Erstattungslink ist abgelaufen');
    expect((await refundOf(created.id)).destination).toBeNull();
  });

  it('another network’s address format, a bad checksum and a signature by a wallet that did not pay: 400, nothing written', async () => {
    const sessionId = await paidSession('USDT', '1.5');
    const created = await refund(sessionId, { kind: 'excess' });
    const bitcoin = await claim(created.id, { address: 'bc1qar0srrr7xfkvy5l643lydnw9re59gtzzwf5mdq' });
    expect(bitcoin.status).toBe(400);
    expect(bitcoin.body.code).toBe('address_other_network');
    expect(bitcoin.body.message).toEqual([
      'address looks like a Bitcoin address; this refund is sent on Local sandbox (anvil), which needs an address of 0x ' +
        'and 40 hexadecimal digits',
    ]);
    const checksum = await claim(created.id, { address: '0x70997970C51812dc3A010C7d01b50e0d17dc79c8' });
    expect(checksum.status).toBe(400);
    expect(checksum.body.message[0]).toMatch(/wrong checksum/);
    const stranger = sandboxAccount(5);
    const { claimProofMessage } = await import('../../src/domain/refunds/claim-proof.js');
    const message = claimProofMessage({
      refundId: created.id,
      amount: created.amount,
      asset: created.asset,
      networkName: chain.network.name,
      chainId: chain.network.chainId,
      destination: stranger.address,
    });
    const signature = await stranger.signMessage({ message });
    const forged = await claim(created.id, { address: stranger.address, signature });
    expect(forged.status).toBe(400);
    expect(forged.body.code).toBe('claim_proof_invalid');
    const junk = await claim(created.id, { address: DESTINATION, extra: 1 });
    expect(junk.status).toBe(400);
    expect(await refundOf(created.id)).toMatchObject({ status: 'awaiting_destination', destination: null });
    expect(await causes(created.id)).toEqual(['null→awaiting_destination:created']);
  });
});

describe('two instances', () => {
  it('follow each refund once: one instance’s leases leave the other nothing to do', async () => {
    const destination = '0x2222222222222222222222222222222222222222';
    const sessionId = await paidSession('USDT', '1.5');
    const created = await refund(sessionId, { kind: 'excess', destination });
    await chain.pay(destination, 'USDT', created.amount.toFixed(), { from: 3 });
    const settings = { rpcTimeoutMs: 5_000, leaseSeconds: 30, maxBlocksPerRange: 1000, droppedAfterMinutes: 60 };
    const watcher = (id: string) =>
      createRefundWatcher(ctx(), ctx().store.refundWatch, settings, createLogger('silent'), id);
    const [a, b] = [watcher('instance-a'), watcher('instance-b')];
    await Promise.all([a.tick(), b.tick()]);
    expect((await refundOf(created.id)).status).toBe('confirmed');
    expect(await causes(created.id)).toEqual(['null→ready:created', 'ready→sent:mined', 'sent→confirmed:confirmed']);
    const leases = await ctx().store.refundWatch.lease('local', 'instance-c', new Date(), 30, 100);
    expect(leases.map((lease) => lease.refundId)).not.toContain(created.id);
  });
});
