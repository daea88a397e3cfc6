import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createPublicClient, createWalletClient, encodeFunctionData, http, parseAbi, type Abi, type Hex } from 'viem';
import { anvil as anvilChain } from 'viem/chains';
import { sandboxAccount } from '../../src/chain/sandbox.js';
import { PACKAGE_ROOT } from '../../src/config.js';
import { Decimal } from '../../src/domain/shared/money.js';
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
    env: {
      KASSA_CONFIRMATIONS_LOCAL: '1',
      TRUST_PROXY: 'loopback',
      // The default limits on binds (docs/api/rest.md#rate-limits), not the suites' far-away ones.
      KASSA_RATE_LIMIT_BIND_SESSION: '20/1m',
      KASSA_RATE_LIMIT_BIND_ADDRESS: '60/1m',
    },
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
/** The time of the chain's head block. */
async function chainNow(): Promise<number> {
  const head = await chain.rpc<{ timestamp: string }>('eth_getBlockByNumber', ['latest', false]);
  return Number(BigInt(head.timestamp)) * 1000;
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

const STRANGER = '198.51.100.66';
const PAYER = '203.0.113.77';
const graphqlFrom = (address: string, query: string) =>
  node.kassa.http
    .post('/graphql')
    .set('Content-Type', 'application/json')
    .set('X-Forwarded-For', address)
    .send(JSON.stringify({ query }));

describe("6. a stranger's binds do not use up the payer's", () => {
  it('malformed, aliased and junk binds from one address leave the payer’s binds from another (and mined ones) untouched', async () => {
    const merchant = await createMerchant(node.kassa.ctx, { wallet: hex(20) });
    // Kassa's clock at the chain's (ahead of the wall clock since the tests above): the session exists when the
    // payer's blocks are mined, and they are mined before it expires.
    time.freeze(await chainNow());
    const session = await createSession(node.kassa, merchant, checkoutRequest());
    const id = session.session_id as string;
    const quote = new Decimal(
      (session.crypto_options as Array<{ ticker: string; amount: string }>).find((o) => o.ticker === 'USDT')!.amount,
    );
    // The payer's first part, more than half (an exchange withdrawal, not the exact amount): mined.
    const first = await chain.pay(merchant.wallet, 'USDT', quote.times('0.6').toFixed(2), { from: 6 });

    // The stranger: malformed binds (bad hash, bad JSON, an unknown property)…
    for (let i = 0; i < 5; i += 1) {
      expect((await bindFrom(STRANGER, id, { tx_hash: '0x12', chain_id: CHAIN_ID })).status).toBe(400);
      expect((await bindFrom(STRANGER, id, '{"tx_hash":')).status).toBe(400);
      expect((await bindFrom(STRANGER, id, { tx_hash: hex(32), chain_id: CHAIN_ID, x: 1 })).status).toBe(400);
    }
    for (let i = 0; i < 3; i += 1) {
      const malformed = await graphqlFrom(
        STRANGER,
        `mutation { b: bindTransaction(sessionId: "${id}", input: { txHash: "0x12", chainId: "31337" }) { idempotent } }`,
      );
      expect(malformed.body.errors[0].extensions.code).toBe('BAD_USER_INPUT');
    }
    // …aliased binds of made-up hashes in one operation, each counted as it runs…
    const aliases = Array.from(
      { length: 4 },
      (_, i) =>
        `j${i}: bindTransaction(sessionId: "${id}", input: { txHash: "${hex(32)}", chainId: "31337", ` +
        `cryptoCurrency: USDT }) { idempotent }`,
    );
    const aliased = await graphqlFrom(STRANGER, `mutation { ${aliases.join('\n')} }`);
    expect(aliased.body.errors, JSON.stringify(aliased.body)).toBeUndefined();
    // …and made-up hashes until their own limit (20 a minute per session and address) refuses them.
    const statuses: number[] = [];
    for (let i = 0; i < 17; i += 1)
      statuses.push(
        (await bindFrom(STRANGER, id, { tx_hash: hex(32), chain_id: CHAIN_ID, crypto_currency: 'USDT' })).status,
      );
    expect(statuses).toEqual([200, ...Array<number>(15).fill(409), 429]);

    // A mined transaction that pays the session is never refused by the limit, even from that address (a shared NAT).
    const minedBind = await bindFrom(STRANGER, id, {
      tx_hash: first.hash,
      chain_id: CHAIN_ID,
      crypto_currency: 'USDT',
    });
    expect(minedBind.status, JSON.stringify(minedBind.body)).toBe(200);
    expect((await paymentsOf(id)).map((p) => p.txHash)).toEqual([first.hash]);

    // The payer's rest, bound from their own address while still pending: accepted, and it pays once mined.
    const rest = await chain.payPending(merchant.wallet, 'USDT', quote.times('0.4').plus(1).toFixed(2), { from: 7 });
    let own;
    try {
      own = await bindFrom(PAYER, id, { tx_hash: rest.hash, chain_id: CHAIN_ID, crypto_currency: 'USDT' });
    } finally {
      await rest.release();
    }
    expect(own.status, JSON.stringify(own.body)).toBe(200);
    await chain.mine(1);
    await node.watchers.tick();
    expect((await paymentsOf(id)).map((p) => p.txHash).sort()).toEqual([first.hash, rest.hash].sort());
    expect(await view(id)).toMatchObject({ status: 'paid' });
  });
});

/** Signs an ETH transfer from sandbox account `account` at `nonce` (ahead of its next one: the node never mines it). */
async function signGapped(account: number, nonce: number): Promise<Hex> {
  const chainConfig = { ...anvilChain, id: Number(CHAIN_ID), rpcUrls: { default: { http: [chain.url] } } };
  const wallet = createWalletClient({
    chain: chainConfig,
    account: sandboxAccount(account),
    transport: http(chain.url),
  });
  const request = await wallet.prepareTransactionRequest({ to: hex(20) as Hex, value: 1000n, gas: 21_000n, nonce });
  return wallet.signTransaction(request as Parameters<typeof wallet.signTransaction>[0]);
}

describe("7. a stranger's pending transactions do not shut out the payer's", () => {
  it("five never-mined transactions bound from one address; the payer's pending one from another is taken and pays", async () => {
    const merchant = await createMerchant(node.kassa.ctx, { wallet: hex(20) });
    // Kassa's clock at the chain's (ahead of the wall clock since the tests above): the session exists when the
    // payer's blocks are mined, and they are mined before it expires.
    time.freeze(await chainNow());
    const session = await createSession(node.kassa, merchant, checkoutRequest());
    const id = session.session_id as string;
    const reader = createPublicClient({ transport: http(chain.url) });
    const next = await reader.getTransactionCount({ address: sandboxAccount(9).address, blockTag: 'pending' });
    for (let i = 0; i < 6; i += 1) {
      // A nonce gap: the node knows each of them and never mines them.
      const gapped = await chain.rpc<Hex>('eth_sendRawTransaction', [await signGapped(9, next + 1 + i)]);
      const response = await bindFrom(STRANGER, id, { tx_hash: gapped, chain_id: CHAIN_ID, crypto_currency: 'ETH' });
      if (i < 5) expect(response.status, JSON.stringify(response.body)).toBe(200);
      else
        expectErrorBody(
          response,
          409,
          'Checkout session already holds 5 transactions that are not verified yet; wait until they are checked',
        );
    }
    const rows = await node.kassa.ctx.store.sessions.transactionsOf(id);
    expect(rows.map((row) => [row.state, row.seenOnChainAt !== null])).toEqual(Array(5).fill(['unverified', true]));

    const pending = await chain.payPending(merchant.wallet, 'USDT', '110', { from: 5 });
    let own;
    try {
      own = await bindFrom(PAYER, id, { tx_hash: pending.hash, chain_id: CHAIN_ID, crypto_currency: 'USDT' });
    } finally {
      await pending.release();
    }
    expect(own.status, JSON.stringify(own.body)).toBe(200);
    await chain.mine(1);
    await node.watchers.tick();
    expect((await paymentsOf(id)).map((p) => [p.txHash, p.attribution])).toEqual([[pending.hash, 'bound_tx']]);
    expect(await view(id)).toMatchObject({ status: 'paid', bound_tx_hash: pending.hash });
  });

  it('the session holds at most 25 unverified binds of a kind, however many addresses bind', async () => {
    const merchant = await createMerchant(node.kassa.ctx, { wallet: hex(20) });
    const id = (await createSession(node.kassa, merchant, checkoutRequest())).session_id as string;
    for (let address = 0; address < 5; address += 1)
      for (let i = 0; i < 5; i += 1) {
        const response = await bindFrom(`198.51.100.${100 + address}`, id, {
          tx_hash: hex(32),
          chain_id: CHAIN_ID,
          crypto_currency: 'USDT',
        });
        expect(response.status).toBe(200);
      }
    expectErrorBody(
      await bindFrom('198.51.100.199', id, { tx_hash: hex(32), chain_id: CHAIN_ID, crypto_currency: 'USDT' }),
      409,
      'Checkout session already holds 25 transactions that are not verified yet; wait until they are checked',
    );
  });
});
