import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createPublicClient, createWalletClient, encodeFunctionData, http, parseAbi, type Abi, type Hex } from 'viem';
import { anvil as anvilChain } from 'viem/chains';
import { sandboxAccount } from '../../src/chain/sandbox.js';
import { PACKAGE_ROOT } from '../../src/config.js';
import { checkoutRequest } from '../factories/checkout-request.js';
import { createMerchant } from '../factories/merchant.js';
import { createLink, visitLink } from '../factories/payment-link.js';
import { fixedRates } from '../support/fixed-rates.js';
import { startChainKassa, startTestChain, type ChainKassa, type TestChain } from '../support/chain.js';
import { controllableClock, createSession, expectErrorBody, postBind } from '../support/rest-kassa.js';

/**
 * Strangers steering shared-wallet sessions through bind (issue 38, items 5, 6, 7 and 10), against a real anvil and
 * PostgreSQL: whoever holds a session id or a public payment link binds what they like, and none of it may take a
 * payer's transfer, lock the payer's bind out or end the session `failed` (docs/payment-rules.md, rules 1 and 3).
 */

const CHAIN_ID = '31337';
const MIN = 60_000;
let chain: TestChain;
let node: ChainKassa;
const time = controllableClock();

beforeAll(async () => {
  chain = await startTestChain();
  // X-Forwarded-For from the test (loopback) tells the client's address, so strangers and payers bind from their own.
  // Rates at any clock: the tests move the chain's time (and so the sessions') ahead of the wall clock.
  node = await startChainKassa(chain.url, {
    clock: time.clock,
    override: { rates: fixedRates().rates },
    env: { KASSA_CONFIRMATIONS_LOCAL: '1', TRUST_PROXY: 'loopback' },
  });
}, 90_000);

afterAll(async () => {
  await node?.close();
  await chain?.stop();
});

afterEach(() => time.release());

const hex = (bytes: number) => `0x${randomBytes(bytes).toString('hex')}`;
const view = async (id: string) => (await node.kassa.http.get(`/checkout-sessions/${id}`)).body;
const paymentsOf = (id: string) => node.kassa.ctx.store.chain.paymentsOfSession(id);
const bindFrom = (address: string, id: string, body: unknown) =>
  postBind(node.kassa, id, body).set('X-Forwarded-For', address);
async function eventTypes(id: string): Promise<string[]> {
  const rows = await node.kassa.runtime.db.prisma.$queryRaw<Array<{ type: string }>>`
    SELECT type FROM outbox_events WHERE session_id = ${id}::uuid ORDER BY seq`;
  return rows.map((row) => row.type.replace('checkout_session.', ''));
}
/** A whole second a few seconds ahead of both the wall clock and the chain's head. */
async function nextSecond(): Promise<number> {
  const head = await chain.rpc<{ timestamp: string }>('eth_getBlockByNumber', ['latest', false]);
  return Math.max(Math.ceil(Date.now() / 1000) * 1000, Number(BigInt(head.timestamp)) * 1000) + 5_000;
}

describe('5. a bind credits a transfer only to a session that existed when its block was mined', () => {
  it("a session opened from the public link 3 s after the payer's non-exact transfer cannot bind it; the payer's can", async () => {
    const merchant = await createMerchant(node.kassa.ctx, { wallet: hex(20) });
    const link = await createLink(node.kassa, merchant, {
      items: [{ name: 'Print', quantity: 1, unit_price: 100 }],
      identity_options: [],
    });
    const opened = await nextSecond();
    time.freeze(opened);
    const payer = await visitLink(node.kassa, link.payment_link_id, {});
    expect(payer.status, JSON.stringify(payer.body)).toBe(201);

    // An exchange withdrawal, net of its fee: not the payer's exact amount, so it needs a bind.
    const minedAt = opened + 10_000;
    await chain.nextBlockAt(minedAt);
    const sent = await chain.pay(merchant.wallet, 'USDT', '99.5', { from: 2 });
    const block = await chain.rpc<{ timestamp: string }>('eth_getBlockByNumber', [
      `0x${sent.blockNumber.toString(16)}`,
      false,
    ]);
    expect(Number(BigInt(block.timestamp)) * 1000).toBe(minedAt);

    // A stranger who saw the hash opens a session from the same public link 3 s later and binds it.
    time.freeze(minedAt + 3_000);
    const stranger = await visitLink(node.kassa, link.payment_link_id, {});
    expect(stranger.status).toBe(201);
    const taken = await bindFrom('198.51.100.7', stranger.body.session_id, {
      tx_hash: sent.hash,
      chain_id: CHAIN_ID,
      crypto_currency: 'USDT',
    });
    expectErrorBody(
      taken,
      409,
      `mined before this checkout session was created: transaction ${sent.hash} is in block ${sent.blockNumber} of ` +
        `${new Date(minedAt).toISOString()}, the session was created at ${new Date(minedAt + 3_000).toISOString()}`,
    );
    expect(await paymentsOf(stranger.body.session_id)).toEqual([]);

    const own = await bindFrom('203.0.113.9', payer.body.session_id, {
      tx_hash: sent.hash,
      chain_id: CHAIN_ID,
      crypto_currency: 'USDT',
    });
    expect(own.status, JSON.stringify(own.body)).toBe(200);
    expect((await paymentsOf(payer.body.session_id)).map((p) => [p.txHash, p.attribution])).toEqual([
      [sent.hash, 'bound_tx'],
    ]);
    expect(await view(stranger.body.session_id)).toMatchObject({ status: 'waiting_payment', bound_tx_hash: null });
  });

  it('a session created within the second the block was mined may bind it (block times are whole seconds)', async () => {
    const merchant = await createMerchant(node.kassa.ctx, { wallet: hex(20) });
    const minedAt = await nextSecond();
    time.freeze(minedAt + 400);
    const session = await createSession(node.kassa, merchant, checkoutRequest());
    await chain.nextBlockAt(minedAt);
    const sent = await chain.pay(merchant.wallet, 'USDT', '120', { from: 3 });
    const bound = await bindFrom('203.0.113.10', session.session_id, {
      tx_hash: sent.hash,
      chain_id: CHAIN_ID,
      crypto_currency: 'USDT',
    });
    expect(bound.status, JSON.stringify(bound.body)).toBe(200);
    expect((await paymentsOf(session.session_id)).map((p) => p.txHash)).toEqual([sent.hash]);
  });
});

const TOKEN = JSON.parse(readFileSync(path.join(PACKAGE_ROOT, 'contracts/build/SandboxToken.json'), 'utf8')) as {
  abi: Abi;
  bytecode: Hex;
};
const MINTABLE = parseAbi([
  'function mint(address to, uint256 amount)',
  'function transfer(address to, uint256 amount) returns (bool)',
]);

/** A token of the stranger's own (sandbox account `account` deploys and mints it): worthless, and nobody's asset. */
async function deployOwnToken(account: number): Promise<Hex> {
  const chainConfig = { ...anvilChain, id: Number(CHAIN_ID), rpcUrls: { default: { http: [chain.url] } } };
  const wallet = createWalletClient({
    chain: chainConfig,
    account: sandboxAccount(account),
    transport: http(chain.url),
  });
  const reader = createPublicClient({ chain: chainConfig, transport: http(chain.url) });
  const deployed = await wallet.deployContract({ abi: TOKEN.abi, bytecode: TOKEN.bytecode, args: ['Junk', 'JNK', 18] });
  const address = (await reader.waitForTransactionReceipt({ hash: deployed, pollingInterval: 50 })).contractAddress!;
  const minted = await wallet.writeContract({
    address,
    abi: MINTABLE,
    functionName: 'mint',
    args: [sandboxAccount(account).address, 10n ** 24n],
  });
  await reader.waitForTransactionReceipt({ hash: minted, pollingInterval: 50 });
  return address;
}

describe('10. nothing a stranger binds ends a session failed', () => {
  it.each([
    ['1 wei of ETH bound as USDT', 'eth'],
    ['a token of their own', 'token'],
    ['a transaction that reverts', 'reverts'],
  ] as const)(
    '%s, pending at expires_at and mined after it: the unpaid session expires, no failed webhook',
    async (_, kind) => {
      const merchant = await createMerchant(node.kassa.ctx, { wallet: hex(20) });
      const created = await nextSecond();
      time.freeze(created);
      const session = await createSession(node.kassa, merchant, checkoutRequest());
      const id = session.session_id as string;
      const expiresAt = new Date(session.expires_at as string).getTime();
      const token = kind === 'token' ? await deployOwnToken(8) : null;

      let raw: Hex;
      if (kind === 'eth') raw = await chain.signPayment(merchant.wallet, 'ETH', '0.000000000000000001', { from: 8 });
      else if (kind === 'reverts') raw = await chain.signPayment(merchant.wallet, 'BTC', '999999999', { from: 8 });
      else raw = await signTokenTransfer(8, token!, merchant.wallet);
      await chain.rpc('evm_setAutomine', [false]);
      const hash = await chain.rpc<Hex>('eth_sendRawTransaction', [raw]);
      try {
        time.freeze(created + 1_000);
        const bound = await bindFrom('198.51.100.20', id, {
          tx_hash: hash,
          chain_id: CHAIN_ID,
          crypto_currency: 'USDT',
        });
        expect(bound.status, JSON.stringify(bound.body)).toBe(200);
        await node.watchers.tick();

        // Past expires_at the transaction the chain knew holds the session open; then it is mined, late.
        time.freeze(expiresAt + MIN);
        await node.watchers.tick();
        expect((await view(id)).status).toBe('waiting_payment');
        await chain.nextBlockAt(expiresAt + 30_000);
      } finally {
        await chain.rpc('evm_setAutomine', [true]);
      }
      await chain.mine(1);
      await chain.mine(1);
      await node.watchers.tick();
      const rows = await node.kassa.ctx.store.sessions.transactionsOf(id);
      expect(rows.map((row) => row.state)).toEqual(['rejected']);
      expect(await view(id)).toMatchObject({ status: 'expired' });
      expect(await eventTypes(id)).toEqual(['created', 'expired']);
      const stored = await node.kassa.runtime.db.prisma.checkoutSession.findUnique({
        where: { id },
        select: { failureReason: true },
      });
      expect(stored?.failureReason).toBeNull();
    },
  );
});

async function signTokenTransfer(account: number, token: Hex, to: string): Promise<Hex> {
  const chainConfig = { ...anvilChain, id: Number(CHAIN_ID), rpcUrls: { default: { http: [chain.url] } } };
  const wallet = createWalletClient({
    chain: chainConfig,
    account: sandboxAccount(account),
    transport: http(chain.url),
  });
  const request = await wallet.prepareTransactionRequest({
    to: token,
    data: encodeTransfer(to, 10n ** 20n),
    gas: 100_000n,
  });
  return wallet.signTransaction(request as Parameters<typeof wallet.signTransaction>[0]);
}

function encodeTransfer(to: string, units: bigint): Hex {
  return encodeFunctionData({ abi: MINTABLE, functionName: 'transfer', args: [to as Hex, units] });
}
