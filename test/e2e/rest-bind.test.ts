import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startTestKassa, type TestKassa } from '../support/kassa.js';
import { createMerchant, type TestMerchant } from '../factories/merchant.js';
import { checkoutRequest } from '../factories/checkout-request.js';
import { setWallet } from '../../src/domain/organisations/organisations.js';
import { startTestChain, type TestChain } from '../support/chain.js';
import {
  PUBLIC_FIELDS,
  controllableClock,
  createSession,
  expectErrorBody,
  expectErrorCode,
  expectedOption,
  postBind,
  uniqueOffset,
  assetStep,
} from '../support/rest-kassa.js';

/**
 * POST /checkout-sessions/:id/bind-tx: docs/api/rest.md#bind-rules and docs/payment-rules.md,
 * rule 3 (a bind is a hint, not a lock). A real anvil serves the `local` network, so a bind of a
 * mined transaction is verified at once from its receipt; hashes the chain does not know
 * lock nothing.
 */

const time = controllableClock();
let chain: TestChain;
let kassa: TestKassa;
let merchant: TestMerchant;

beforeAll(async () => {
  chain = await startTestChain();
  kassa = await startTestKassa({ clock: time.clock, env: { KASSA_RPC_URLS_LOCAL: chain.url } });
  merchant = await createMerchant(kassa.ctx);
}, 60_000);
afterAll(async () => {
  await kassa?.close();
  await chain?.stop();
});
afterEach(() => time.release());

let hashes = 0;
/** A fresh transaction hash no chain knows. */
const newHash = () => `0x${(0xb1d000 + ++hashes).toString(16).padStart(64, 'c')}`;

const session = (owner: TestMerchant = merchant, overrides: Record<string, unknown> = {}) =>
  createSession(kassa, owner, checkoutRequest(overrides));

const get = async (id: string) => (await kassa.http.get(`/checkout-sessions/${id}`)).body;
const option = (view: Record<string, any>, ticker: string) =>
  view.crypto_options.find((o: { ticker: string }) => o.ticker === ticker);
const eventsOf = (sessionId: string, type: string) =>
  kassa.runtime.db.prisma.outboxEvent.findMany({ where: { sessionId, type }, orderBy: { seq: 'asc' } });
const boundRows = (sessionId: string) =>
  kassa.runtime.db.prisma.checkoutSessionTransaction.findMany({ where: { sessionId }, orderBy: { createdAt: 'asc' } });

/** Pays the session's quote in `ticker` on the sandbox chain; the transaction is mined when this returns. */
async function pay(view: Record<string, any>, ticker: string, from = 3) {
  const wallet = view.wallet_address as string;
  return chain.pay(wallet, ticker as 'ETH', option(view, ticker).amount, { from });
}

describe('200: the bind answer (docs/api/rest.md#bind-rules)', () => {
  it('a mined transaction that pays the session: binds, locks the asset and answers idempotent false', async () => {
    const created = await session();
    const sent = await pay(created, 'ETH');
    const response = await postBind(kassa, created.session_id, {
      tx_hash: sent.hash,
      chain_id: '31337',
      crypto_currency: 'ETH',
      payer_wallet_address: sent.from,
    });
    expect(response.status, JSON.stringify(response.body)).toBe(200);
    expect(response.headers['content-type']).toMatch(/^application\/json/);
    expect(response.body).toEqual({
      session_id: created.session_id,
      bound_tx_hash: sent.hash,
      crypto_currency: 'ETH',
      total_amount_crypto: option(created, 'ETH').amount,
      status: 'waiting_payment',
      idempotent: false,
    });
    expect(
      uniqueOffset(response.body.total_amount_crypto, expectedOption('105', 'USD', 'ETH').amount, assetStep('ETH')),
    ).not.toBeNull();

    // The public view now shows the lock; nothing else moved.
    const read = await get(created.session_id);
    expect(Object.keys(read).sort()).toEqual([...PUBLIC_FIELDS].sort());
    expect(read).toEqual({
      ...Object.fromEntries(PUBLIC_FIELDS.map((field) => [field, created[field]])),
      crypto_currency: 'ETH',
      total_amount_crypto: option(created, 'ETH').amount,
      bound_tx_hash: sent.hash,
      payer_wallet_address: sent.from,
      chain_id: '31337',
    });
  });

  it.each([
    ['BTC', '56'],
    ['ETH', '1'],
    ['USDT', '1'],
    ['USDC', '56'],
    ['BNB', '56'],
    ['SOL', '31337'],
  ])(
    'total_amount_crypto is the quoted amount of the asset bound (%s on chain %s); a hash no chain knows locks nothing',
    async (ticker, chainId) => {
      const created = await session();
      const response = await postBind(kassa, created.session_id, {
        tx_hash: newHash(),
        chain_id: chainId,
        crypto_currency: ticker,
      });
      expect(response.status).toBe(200);
      expect(response.body.crypto_currency).toBe(ticker);
      expect(response.body.total_amount_crypto).toBe(option(created, ticker).amount);
      const read = await get(created.session_id);
      expect([read.crypto_currency, read.total_amount_crypto, read.chain_id, read.bound_tx_hash]).toEqual([
        null,
        null,
        null,
        null,
      ]);
    },
  );

  it('the same hash again → 200 idempotent true, and nothing is written twice', async () => {
    const created = await session();
    const sent = await pay(created, 'BNB', 4);
    const body = { tx_hash: sent.hash, chain_id: '31337', crypto_currency: 'BNB', payer_wallet_address: sent.from };
    const first = await postBind(kassa, created.session_id, body);
    const second = await postBind(kassa, created.session_id, body);
    const upperCase = await postBind(kassa, created.session_id, {
      ...body,
      tx_hash: `0x${sent.hash.slice(2).toUpperCase()}`,
    });
    expect(first.body.idempotent).toBe(false);
    for (const replay of [second, upperCase]) {
      expect(replay.status).toBe(200);
      expect(replay.body).toEqual({ ...first.body, idempotent: true });
    }
    expect(await eventsOf(created.session_id, 'checkout_session.tx_bound')).toHaveLength(1);
    expect(await boundRows(created.session_id)).toHaveLength(1);
  });

  it('a replay of the hash answers the asset it was bound for, whatever else it says', async () => {
    const created = await session();
    const tx = newHash();
    await postBind(kassa, created.session_id, { tx_hash: tx, chain_id: '1', crypto_currency: 'USDC' });
    const replay = await postBind(kassa, created.session_id, { tx_hash: tx, chain_id: '1' });
    expect(replay.status).toBe(200);
    expect(replay.body).toMatchObject({
      crypto_currency: 'USDC',
      total_amount_crypto: option(created, 'USDC').amount,
      idempotent: true,
    });
  });

  it('accepts a hex chain_id ("0x7a69") and stores it as decimal "31337"', async () => {
    const created = await session();
    const sent = await pay(created, 'USDT', 5);
    const response = await postBind(kassa, created.session_id, {
      tx_hash: sent.hash,
      chain_id: '0x7a69',
      crypto_currency: 'USDT',
    });
    expect(response.status).toBe(200);
    expect((await get(created.session_id)).chain_id).toBe('31337');
    const row = await kassa.runtime.db.prisma.checkoutSession.findUniqueOrThrow({ where: { id: created.session_id } });
    expect(row.chainId).toBe('31337');
    // And "0x38" is BNB Smart Chain's 56.
    const other = await session();
    expect(
      (await postBind(kassa, other.session_id, { tx_hash: newHash(), chain_id: '0x38', crypto_currency: 'BNB' }))
        .status,
    ).toBe(200);
    expect((await boundRows(other.session_id)).map((row) => row.chainId)).toEqual(['56']);
  });

  it('stores the hash and the payer address in lower case', async () => {
    const created = await session();
    const tx = `0x${'AbCdEf0123456789'.repeat(4)}`;
    const payer = '0x3C44CdDdB6a900fa2b585dd299e03d12FA4293BC';
    const response = await postBind(kassa, created.session_id, {
      tx_hash: tx,
      chain_id: '31337',
      crypto_currency: 'ETH',
      payer_wallet_address: payer,
    });
    expect(response.status).toBe(200);
    expect(response.body.bound_tx_hash).toBe(tx.toLowerCase());
    const [row] = await boundRows(created.session_id);
    expect([row!.txHash, row!.payerWalletAddress]).toEqual([tx.toLowerCase(), payer.toLowerCase()]);
  });

  it('payer_wallet_address is optional', async () => {
    const created = await session();
    const sent = await pay(created, 'ETH', 6);
    expect(
      (await postBind(kassa, created.session_id, { tx_hash: sent.hash, chain_id: '31337', crypto_currency: 'ETH' }))
        .status,
    ).toBe(200);
    expect((await get(created.session_id)).payer_wallet_address).toBeNull();
  });

  it("shows the wallet of the paying chain when the organisation's wallets differ per network", async () => {
    const shop = await createMerchant(kassa.ctx, { network: 'local' });
    const bscWallet = `0x${'b5c'.repeat(13)}b`;
    await setWallet(kassa.ctx, shop.organisationId, bscWallet, 'bsc');
    const created = await session(shop);
    expect(created.supported_networks).toEqual(['local', 'bsc']);
    // Unbound, the first network's wallet; the payer's page gets each network's own (GraphQL paymentOptions).
    expect(created.wallet_address).toBe(shop.wallet);
    const options = await kassa.http
      .post('/graphql')
      .set('content-type', 'application/json')
      .send({ query: `{ checkoutSession(id: "${created.session_id}") { paymentOptions { network walletAddress } } }` });
    const wallets = new Set(
      options.body.data.checkoutSession.paymentOptions.map(
        (o: { network: string; walletAddress: string }) => `${o.network} ${o.walletAddress}`,
      ),
    );
    expect([...wallets].sort()).toEqual([`bsc ${bscWallet}`, `local ${shop.wallet}`]);
    const sent = await chain.pay(shop.wallet, 'ETH', option(created, 'ETH').amount, { from: 7 });
    expect(
      (await postBind(kassa, created.session_id, { tx_hash: sent.hash, chain_id: '31337', crypto_currency: 'ETH' }))
        .status,
    ).toBe(200);
    expect(await get(created.session_id)).toMatchObject({ wallet_address: shop.wallet, chain_id: '31337' });
  });

  it('writes one checkout_session.tx_bound event carrying the bound session, once the transaction is verified', async () => {
    const created = await session();
    const sent = await pay(created, 'SOL', 8);
    const at = Date.now();
    time.freeze(at);
    await postBind(kassa, created.session_id, {
      tx_hash: sent.hash,
      chain_id: '31337',
      crypto_currency: 'SOL',
      payer_wallet_address: sent.from,
    });
    const events = await eventsOf(created.session_id, 'checkout_session.tx_bound');
    expect(events).toHaveLength(1);
    expect(events[0]!.createdAt.getTime()).toBe(at);
    expect(events[0]!.organisationId).toBe(merchant.organisationId);
    expect(events[0]!.payload).toMatchObject({
      session_id: created.session_id,
      organisation_id: merchant.organisationId,
      bound_tx_hash: sent.hash,
      crypto_currency: 'SOL',
      total_amount_crypto: option(created, 'SOL').amount,
      chain_id: '31337',
      payer_wallet_address: sent.from,
      status: 'waiting_payment',
    });
    // A hash no chain knows is not verified: no event.
    const other = await session();
    await postBind(kassa, other.session_id, { tx_hash: newHash(), chain_id: '31337', crypto_currency: 'SOL' });
    expect(await eventsOf(other.session_id, 'checkout_session.tx_bound')).toHaveLength(0);
  });

  it('binding changes no status: no history row', async () => {
    const created = await session();
    await postBind(kassa, created.session_id, { tx_hash: newHash(), chain_id: '1', crypto_currency: 'ETH' });
    expect(
      await kassa.runtime.db.prisma.checkoutSessionStatusChange.count({ where: { sessionId: created.session_id } }),
    ).toBe(1);
  });

  it('a session may hold several bound transactions: a second one is a second candidate, not a conflict', async () => {
    const created = await session();
    expect(
      (await postBind(kassa, created.session_id, { tx_hash: newHash(), chain_id: '1', crypto_currency: 'ETH' })).status,
    ).toBe(200);
    expect(
      (await postBind(kassa, created.session_id, { tx_hash: newHash(), chain_id: '56', crypto_currency: 'BNB' }))
        .status,
    ).toBe(200);
    expect((await boundRows(created.session_id)).map((row) => [row.cryptoCurrency, row.state])).toEqual([
      ['ETH', 'unverified'],
      ['BNB', 'unverified'],
    ]);
  });
});

describe('400: the body', () => {
  let id: string;
  beforeAll(async () => {
    id = (await session()).session_id;
  });
  const valid = () => ({ tx_hash: newHash(), chain_id: '31337', crypto_currency: 'ETH' });
  const TX_PATTERN = 'tx_hash must match ^0x[a-fA-F0-9]{64}$ (0x and 64 hex characters)';
  const CHAIN = 'chain_id must be an EIP-155 chain id, decimal ("56") or hex ("0x38")';
  const TICKER = 'crypto_currency must be one of the following values: BTC, ETH, USDT, USDC, BNB, SOL';
  const PAYER_PATTERN = 'payer_wallet_address must match ^0x[a-fA-F0-9]{40}$ (0x and 40 hex characters)';

  it.each([
    ['63 hex characters', `0x${'a'.repeat(63)}`],
    ['65 hex characters', `0x${'a'.repeat(65)}`],
    ['no 0x prefix', 'a'.repeat(64)],
    ['a 0X prefix', `0X${'a'.repeat(64)}`],
    ['a non-hex character', `0x${'a'.repeat(63)}g`],
    ['an empty string', ''],
    ['a trailing newline', `0x${'a'.repeat(64)}\n`],
  ])('tx_hash with %s', async (_what, tx) => {
    expectErrorCode(await postBind(kassa, id, { ...valid(), tx_hash: tx }), 400, 'validation_failed', [TX_PATTERN]);
  });

  it('tx_hash and chain_id are required and must be strings', async () => {
    const { tx_hash: _tx, ...noHash } = valid();
    expectErrorCode(await postBind(kassa, id, noHash), 400, 'validation_failed', ['tx_hash is required']);
    const { chain_id: _chain, ...noChain } = valid();
    expectErrorCode(await postBind(kassa, id, noChain), 400, 'validation_failed', ['chain_id is required']);
    expectErrorCode(await postBind(kassa, id, { ...valid(), tx_hash: null }), 400, 'validation_failed', [
      'tx_hash is required',
    ]);
    expectErrorCode(await postBind(kassa, id, { ...valid(), tx_hash: 12 }), 400, 'validation_failed', [
      'tx_hash must be a string',
    ]);
    expectErrorCode(await postBind(kassa, id, { ...valid(), chain_id: 56 }), 400, 'validation_failed', [
      'chain_id must be a string',
    ]);
    expectErrorCode(await postBind(kassa, id, {}), 400, 'validation_failed', [
      'tx_hash is required',
      'chain_id is required',
    ]);
  });

  it.each([['abc'], ['0'], ['0x0'], ['-1'], ['56.0'], ['1e3'], ['0x'], ['0xzz'], ['']])(
    'chain_id %j',
    async (chainId) => {
      expectErrorCode(await postBind(kassa, id, { ...valid(), chain_id: chainId }), 400, 'validation_failed', [CHAIN]);
    },
  );

  it.each([['DOGE'], ['eth'], ['Btc'], [''], ['WBTC']])('unknown ticker %j', async (ticker) => {
    expectErrorCode(await postBind(kassa, id, { ...valid(), crypto_currency: ticker }), 400, 'validation_failed', [
      TICKER,
    ]);
  });

  it.each([
    ['39 hex characters', `0x${'1'.repeat(39)}`],
    ['41 hex characters', `0x${'1'.repeat(41)}`],
    ['no prefix', '1'.repeat(40)],
    ['an ENS name', 'payer.eth'],
    ['a number', 7],
  ])('payer_wallet_address with %s', async (_what, payer) => {
    const message = typeof payer === 'string' ? PAYER_PATTERN : 'payer_wallet_address must be a string';
    expectErrorCode(await postBind(kassa, id, { ...valid(), payer_wallet_address: payer }), 400, 'validation_failed', [
      message,
    ]);
  });

  it('an unknown property', async () => {
    expectErrorCode(await postBind(kassa, id, { ...valid(), amount: '1' }), 400, 'validation_failed', [
      'property amount should not exist',
    ]);
  });

  it('lists every problem at once', async () => {
    expectErrorCode(
      await postBind(kassa, id, {
        tx_hash: 'x',
        chain_id: 'y',
        crypto_currency: 'Z',
        payer_wallet_address: 'w',
        foo: 1,
      }),
      400,
      'validation_failed',
      ['property foo should not exist', TX_PATTERN, CHAIN, TICKER, PAYER_PATTERN],
    );
  });

  it.each([['[]'], ['"bind"'], ['null'], ['7']])('a body that is %s', async (text) => {
    expectErrorCode(await postBind(kassa, id, text), 400, 'validation_failed', ['body must be a JSON object']);
  });

  it('a malformed session id', async () => {
    expectErrorCode(await postBind(kassa, 'not-a-uuid', valid()), 400, 'validation_failed', ['id must be a UUID']);
  });

  it("a malformed session id and a body that breaks rules: every problem at once, the path id's first", async () => {
    const refused = await postBind(kassa, 'not-a-uuid', { chain_id: '31337' });
    expectErrorCode(refused, 400, 'validation_failed');
    expect(refused.body.message[0]).toBe('id must be a UUID');
    expect(refused.body.message).toContain('tx_hash is required');
  });

  it('and a refused bind writes nothing', async () => {
    await postBind(kassa, id, { ...valid(), chain_id: 'nope' });
    const read = await get(id);
    expect([read.bound_tx_hash, read.crypto_currency, read.chain_id]).toEqual([null, null, null]);
  });
});

describe('400: the body does not fit the session', () => {
  it('crypto_currency is required while the session has none selected', async () => {
    const created = await session();
    expectErrorCode(
      await postBind(kassa, created.session_id, { tx_hash: newHash(), chain_id: '1' }),
      400,
      'validation_failed',
      ['crypto_currency is required: this session has no crypto currency selected yet'],
    );
  });

  it('a ticker the session does not offer', async () => {
    const ethereumOnly = await createMerchant(kassa.ctx, { network: 'ethereum' });
    const created = await session(ethereumOnly);
    expectErrorCode(
      await postBind(kassa, created.session_id, { tx_hash: newHash(), chain_id: '1', crypto_currency: 'BTC' }),
      400,
      'validation_failed',
      ['crypto_currency BTC is not offered by this session (offered: ETH, USDT, USDC)'],
    );
  });

  it("a chain that is not among the session's networks", async () => {
    const localOnly = await createMerchant(kassa.ctx, { network: 'local' });
    const created = await session(localOnly);
    expect(created.supported_networks).toEqual(['local']);
    for (const chainId of ['1', '56', '137']) {
      expectErrorCode(
        await postBind(kassa, created.session_id, { tx_hash: newHash(), chain_id: chainId, crypto_currency: 'ETH' }),
        400,
        'validation_failed',
        [`chain_id ${chainId} is not among this session's networks (local: 31337)`],
      );
    }
  });

  it.each([
    ['BNB', '1', 'ethereum'],
    ['BTC', '1', 'ethereum'],
    ['SOL', '1', 'ethereum'],
  ])('a ticker not available on that chain (%s on chain %s)', async (ticker, chainId, network) => {
    const created = await session();
    expectErrorCode(
      await postBind(kassa, created.session_id, { tx_hash: newHash(), chain_id: chainId, crypto_currency: ticker }),
      400,
      'validation_failed',
      [`${ticker} is not available on chain ${chainId} (${network})`],
    );
  });
});

describe('404 and 409', () => {
  it('an unknown session → 404 naming it', async () => {
    const id = '7d444840-9dc0-11d1-b245-5ffdce74fad2';
    expectErrorBody(
      await postBind(kassa, id, { tx_hash: newHash(), chain_id: '1', crypto_currency: 'ETH' }),
      404,
      `Checkout session ${id} not found`,
    );
  });

  it('a transaction the chain knows, already bound to another session (in any letter case)', async () => {
    const first = await session();
    const second = await session();
    const sent = await pay(first, 'ETH', 9);
    expect(
      (await postBind(kassa, first.session_id, { tx_hash: sent.hash, chain_id: '31337', crypto_currency: 'ETH' }))
        .status,
    ).toBe(200);
    const again = await postBind(kassa, second.session_id, {
      tx_hash: `0x${sent.hash.slice(2).toUpperCase()}`,
      chain_id: '31337',
      crypto_currency: 'ETH',
    });
    expectErrorCode(
      again,
      409,
      'tx_already_bound',
      `Transaction ${sent.hash} is already bound to another checkout session`,
    );
    expect((await get(second.session_id)).bound_tx_hash).toBeNull();
  });

  it('a transaction the chain already shows cannot pay the session → 409 with the reason, and nothing is written', async () => {
    const created = await session();
    const elsewhere = await chain.pay(`0x${'e15e'.repeat(10)}`, 'ETH', '0.01', { from: 2 });
    const refused = await postBind(kassa, created.session_id, {
      tx_hash: elsewhere.hash,
      chain_id: '31337',
      crypto_currency: 'ETH',
    });
    expectErrorCode(
      refused,
      409,
      'wrong_recipient',
      `wrong recipient: transaction ${elsewhere.hash} sends ETH to 0x${'e15e'.repeat(10)}, not to the session wallet ${merchant.wallet}`,
    );
    expect(await boundRows(created.session_id)).toEqual([]);
  });

  it('a ticker that differs from the one already locked; without a ticker the locked one is used', async () => {
    // A selection without a bound transaction (as an exact payment makes it), written straight to the database.
    const created = await session();
    const eth = option(created, 'ETH');
    await kassa.runtime.db.prisma.checkoutSession.update({
      where: { id: created.session_id },
      data: { cryptoCurrency: 'ETH', totalAmountCrypto: eth.amount },
    });
    const differing = await postBind(kassa, created.session_id, {
      tx_hash: newHash(),
      chain_id: '1',
      crypto_currency: 'USDT',
    });
    expectErrorCode(
      differing,
      409,
      'currency_mismatch',
      'crypto_currency USDT differs from ETH, already locked for this session',
    );

    const tx = newHash();
    const locked = await postBind(kassa, created.session_id, { tx_hash: tx, chain_id: '1' });
    expect(locked.status).toBe(200);
    expect(locked.body).toEqual({
      session_id: created.session_id,
      bound_tx_hash: tx,
      crypto_currency: 'ETH',
      total_amount_crypto: eth.amount,
      status: 'waiting_payment',
      idempotent: false,
    });
  });

  it('an expired session → 409 naming the status; the expiry is recorded though the bind is refused', async () => {
    const start = Date.now();
    time.freeze(start);
    const created = await session(merchant, { expires_in_minutes: 5 });
    time.freeze(start + 5 * 60_000);
    const tx = newHash();
    const response = await postBind(kassa, created.session_id, { tx_hash: tx, chain_id: '1', crypto_currency: 'ETH' });
    expectErrorCode(response, 409, 'session_closed', 'Checkout session is expired; it no longer accepts a transaction');

    const read = await get(created.session_id);
    expect([read.status, read.bound_tx_hash, read.crypto_currency]).toEqual(['expired', null, null]);
    const history = await kassa.runtime.db.prisma.checkoutSessionStatusChange.findMany({
      where: { sessionId: created.session_id },
      orderBy: { id: 'asc' },
    });
    expect(history.map((h) => h.toStatus)).toEqual(['waiting_payment', 'expired']);
    expect(await eventsOf(created.session_id, 'checkout_session.expired')).toHaveLength(1);
    expect(await boundRows(created.session_id)).toEqual([]);
    // The hash stays free for a session that is still open.
    time.release();
    const open = await session();
    expect(
      (await postBind(kassa, open.session_id, { tx_hash: tx, chain_id: '1', crypto_currency: 'ETH' })).status,
    ).toBe(200);
  });
});

describe('a payment sent before expiry keeps the session open for the in-flight grace', () => {
  it('a bound payment mined before expires_at: waiting_payment after it, expired when the grace (60 min) ends unconfirmed', async () => {
    const start = Date.now();
    time.freeze(start);
    const created = await session(merchant, { expires_in_minutes: 5 });
    const expiresAt = Date.parse(created.expires_at);
    const sent = await pay(created, 'ETH', 2);
    // No watcher runs here: the payment is seen (credited, not confirmed) and stays so.
    expect(
      (await postBind(kassa, created.session_id, { tx_hash: sent.hash, chain_id: '31337', crypto_currency: 'ETH' }))
        .status,
    ).toBe(200);

    time.freeze(expiresAt + 30 * 60_000);
    expect((await get(created.session_id)).status).toBe('waiting_payment');
    const replay = await postBind(kassa, created.session_id, {
      tx_hash: sent.hash,
      chain_id: '31337',
      crypto_currency: 'ETH',
    });
    expect(replay.body).toMatchObject({ status: 'waiting_payment', idempotent: true });

    time.freeze(expiresAt + 60 * 60_000);
    expect((await get(created.session_id)).status).toBe('expired');
    const history = await kassa.runtime.db.prisma.checkoutSessionStatusChange.findMany({
      where: { sessionId: created.session_id },
      orderBy: { id: 'asc' },
    });
    expect(history.map((h) => [h.toStatus, h.cause])).toEqual([
      ['waiting_payment', 'created by merchant API'],
      ['expired', 'the payment in flight did not confirm within the in-flight grace'],
    ]);
  });

  it('a hash no chain knows, bound before expires_at, holds nothing open', async () => {
    const start = Date.now();
    time.freeze(start);
    const created = await session(merchant, { expires_in_minutes: 5 });
    const expiresAt = Date.parse(created.expires_at);
    time.freeze(expiresAt - 1000);
    expect(
      (await postBind(kassa, created.session_id, { tx_hash: newHash(), chain_id: '31337', crypto_currency: 'ETH' }))
        .status,
    ).toBe(200);
    time.freeze(expiresAt);
    expect((await get(created.session_id)).status).toBe('expired');
  });

  it('a replay of the bound hash after the grace answers the settled status (expired), not a stale open one', async () => {
    const start = Date.now();
    time.freeze(start);
    const created = await session(merchant, { expires_in_minutes: 5 });
    const expiresAt = Date.parse(created.expires_at);
    const sent = await pay(created, 'ETH', 3);
    expect(
      (await postBind(kassa, created.session_id, { tx_hash: sent.hash, chain_id: '31337', crypto_currency: 'ETH' }))
        .status,
    ).toBe(200);

    // No read in between: the row still says waiting_payment, but the session is over.
    time.freeze(expiresAt + 61 * 60_000);
    const replay = await postBind(kassa, created.session_id, {
      tx_hash: sent.hash,
      chain_id: '31337',
      crypto_currency: 'ETH',
    });
    expect(replay.status).toBe(200);
    expect(replay.body).toMatchObject({ idempotent: true, status: 'expired' });
  });
});
