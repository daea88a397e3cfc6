import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { depositAddress } from '../../src/chain/deposit-contracts.js';
import { setPaymentPolicy, setWallet } from '../../src/domain/organisations/organisations.js';
import { eip681Uri } from '../../src/domain/payments/payment-uri.js';
import { Decimal } from '../../src/domain/shared/money.js';
import { checkoutRequest } from '../factories/checkout-request.js';
import { createMerchant, type TestMerchant } from '../factories/merchant.js';
import { createLink, visitLink } from '../factories/payment-link.js';
import { graphqlData } from '../support/graphql-kassa.js';
import { startTestKassa, type TestKassa } from '../support/kassa.js';
import { createSession } from '../support/rest-kassa.js';

/**
 * Sessions of an organisation in deposit mode (docs/operations.md#receiving-modes, issue 34): each gets its own deposit
 * address (docs/decisions/0028-deposit-addresses.md), derived from the organisation's wallet at creation and the
 * session id, as its wallet_address everywhere: REST views, GraphQL, the hosted page, the QR code's EIP-681 URI. It
 * claims no unique amount. Over real HTTP on a real PostgreSQL; the addresses are checked against the chain module's
 * derivation (the contract's own, test/integration/deposit-contracts.test.ts).
 */

const USDT_ETHEREUM = '0xdAC17F958D2ee523a2206206994597C13D831ec7';
const NEW_WALLET = '0x90f79bf6eb2c4f870365e785982e1f101e93b906';

let kassa: TestKassa;
let depositShop: TestMerchant;
let sharedShop: TestMerchant;

beforeAll(async () => {
  kassa = await startTestKassa();
  depositShop = await createMerchant(kassa.ctx, { wallet: '0x15d34aaf54267db7d7c367839aaf71a00a2c6a65' });
  await setPaymentPolicy(kassa.ctx, depositShop.organisationId, { receiving: 'deposit' });
  sharedShop = await createMerchant(kassa.ctx, { wallet: '0x9965507d1a55bcc2695c58ba16fb37d819b0a4dc' });
});

afterAll(async () => {
  await kassa?.close();
});

const addressFor = (wallet: string, sessionId: string) => depositAddress(wallet, sessionId).toLowerCase();

async function storedReceiving(sessionId: string) {
  const [session] = await kassa.runtime.db.prisma.$queryRaw<Array<{ receiving_mode: string }>>`
    SELECT receiving_mode FROM checkout_sessions WHERE id = ${sessionId}::uuid`;
  const networks = await kassa.runtime.db.prisma.$queryRaw<
    Array<{ network: string; wallet_address: string; deposit_destination: string | null }>
  >`SELECT network, wallet_address, deposit_destination FROM checkout_session_networks
     WHERE session_id = ${sessionId}::uuid ORDER BY position`;
  const [{ claims }] = await kassa.runtime.db.prisma.$queryRaw<Array<{ claims: number }>>`
    SELECT count(*)::int AS claims FROM payment_amount_claims WHERE session_id = ${sessionId}::uuid`;
  return { mode: session!.receiving_mode, networks, claims };
}

describe('a session created in deposit mode', () => {
  it('has its own deposit address as wallet_address in the create answer, the public view, GraphQL, the page and the QR code', async () => {
    const created = await createSession(kassa, depositShop, checkoutRequest());
    const address = addressFor(depositShop.wallet, created.session_id);
    expect(address).not.toBe(depositShop.wallet);
    expect(created.wallet_address).toBe(address);
    expect(created.supported_networks).toEqual(['local', 'bsc', 'ethereum']);

    const read = await kassa.http.get(`/checkout-sessions/${created.session_id}`);
    expect(read.status).toBe(200);
    expect(read.body.wallet_address).toBe(address);

    const graphql = await graphqlData(
      kassa,
      `query($id: ID!) { checkoutSession(id: $id) { walletAddress paymentOptions { network walletAddress uri } } }`,
      { id: created.session_id },
    );
    const payer = graphql.checkoutSession as {
      walletAddress: string;
      paymentOptions: Array<{ network: string; walletAddress: string; uri: string }>;
    };
    expect(payer.walletAddress).toBe(address);
    expect(payer.paymentOptions.length).toBeGreaterThan(3);
    for (const option of payer.paymentOptions) {
      // The same address on every network (the organisation has one wallet on all of them).
      expect(option.walletAddress).toBe(address);
      expect(option.uri).toContain(address);
      expect(option.uri).not.toContain(depositShop.wallet);
    }

    const page = await kassa.http.get(`/pay/${created.session_id}`);
    expect(page.status).toBe(200);
    expect(page.text).toContain(address);
    expect(page.text).not.toContain(depositShop.wallet);

    const usdt = created.crypto_options.find((option: { ticker: string }) => option.ticker === 'USDT');
    const qr = await kassa.http.get(`/pay/${created.session_id}/qr.svg?network=ethereum&asset=USDT`);
    expect(qr.status).toBe(200);
    expect(qr.headers['x-payment-uri']).toBe(
      eip681Uri({
        chainId: '1',
        walletAddress: address,
        contractAddress: USDT_ETHEREUM,
        decimals: 6,
        amount: new Decimal(usdt.amount),
      }),
    );
    const native = await kassa.http.get(`/pay/${created.session_id}/qr.svg?network=bsc&asset=BNB`);
    expect(native.headers['x-payment-uri']).toMatch(new RegExp(`^ethereum:${address}@56\\?value=\\d+$`));

    // Stored: the mode it keeps, the address per network and the wallet it leads to; no unique amount claimed.
    expect(await storedReceiving(created.session_id)).toEqual({
      mode: 'deposit_addresses',
      networks: ['local', 'bsc', 'ethereum'].map((network) => ({
        network,
        wallet_address: address,
        deposit_destination: depositShop.wallet,
      })),
      claims: 0,
    });
  });

  it('asks the quote rounded up to the units, unchanged by other sessions of the same price; two sessions, two addresses', async () => {
    const [first, second] = [
      await createSession(kassa, depositShop, checkoutRequest()),
      await createSession(kassa, depositShop, checkoutRequest()),
    ];
    expect(first.wallet_address).not.toBe(second.wallet_address);
    expect(second.wallet_address).toBe(addressFor(depositShop.wallet, second.session_id));
    // No unique amount: both sessions are asked the same amounts, each at its own address.
    expect(second.crypto_options).toEqual(first.crypto_options);
    // The shared wallet tells two sessions of one price apart by their amounts.
    const [a, b] = [
      await createSession(kassa, sharedShop, checkoutRequest()),
      await createSession(kassa, sharedShop, checkoutRequest()),
    ];
    expect(a.wallet_address).toBe(sharedShop.wallet);
    expect(b.crypto_options).not.toEqual(a.crypto_options);
    const usdt = (session: Record<string, any>) =>
      session.crypto_options.find((o: { ticker: string }) => o.ticker === 'USDT').amount;
    // 130 USD at the fixture rate, rounded up to USDT's 6 decimals, with no step added.
    expect(usdt(first)).toBe(usdt(second));
    expect(new Decimal(usdt(a)).lessThanOrEqualTo(usdt(first))).toBe(true);
    expect(await storedReceiving(a.session_id)).toMatchObject({ mode: 'shared_wallet', claims: expect.any(Number) });
    expect((await storedReceiving(a.session_id)).networks[0]).toEqual({
      network: 'local',
      wallet_address: sharedShop.wallet,
      deposit_destination: null,
    });
  });

  it('a wallet change leads new sessions to the new wallet; older sessions keep addresses leading to the old one', async () => {
    const merchant = await createMerchant(kassa.ctx, { wallet: '0xa0ee7a142d267c1f36714e4a8f75612f20a79720' });
    await setPaymentPolicy(kassa.ctx, merchant.organisationId, { receiving: 'deposit_addresses' });
    const before = await createSession(kassa, merchant, checkoutRequest());
    await setWallet(kassa.ctx, merchant.organisationId, NEW_WALLET);
    const after = await createSession(kassa, merchant, checkoutRequest());
    expect(after.wallet_address).toBe(addressFor(NEW_WALLET, after.session_id));
    expect((await storedReceiving(after.session_id)).networks.map((n) => n.deposit_destination)).toEqual([
      NEW_WALLET,
      NEW_WALLET,
      NEW_WALLET,
    ]);
    const old = await kassa.http.get(`/checkout-sessions/${before.session_id}`);
    expect(old.body.wallet_address).toBe(addressFor(merchant.wallet, before.session_id));
    expect((await storedReceiving(before.session_id)).networks.map((n) => n.deposit_destination)).toEqual([
      merchant.wallet,
      merchant.wallet,
      merchant.wallet,
    ]);
  });

  it('a wallet of its own on one network gives that network an address leading there', async () => {
    const merchant = await createMerchant(kassa.ctx, { wallet: '0x14dc79964da2c08b23698b3d3cc7ca32193d9955' });
    await setPaymentPolicy(kassa.ctx, merchant.organisationId, { receiving: 'deposit' });
    await setWallet(kassa.ctx, merchant.organisationId, '0x23618e81e3f5cdf7f54c3d65f7fbc0abf5b21e8f', 'bsc');
    const session = await createSession(kassa, merchant, checkoutRequest());
    const stored = await storedReceiving(session.session_id);
    const bsc = stored.networks.find((n) => n.network === 'bsc')!;
    const local = stored.networks.find((n) => n.network === 'local')!;
    expect(bsc.wallet_address).toBe(addressFor('0x23618e81e3f5cdf7f54c3d65f7fbc0abf5b21e8f', session.session_id));
    expect(local.wallet_address).toBe(addressFor(merchant.wallet, session.session_id));
    expect(session.wallet_address).toBe(local.wallet_address);
  });

  it('a payment link of the organisation opens sessions with deposit addresses too', async () => {
    const link = await createLink(kassa, depositShop, { identity_options: ['email'] });
    const response = await visitLink(kassa, link.payment_link_id, { email: 'payer@example.com' });
    expect(response.status, JSON.stringify(response.body)).toBe(201);
    expect(response.body.wallet_address).toBe(addressFor(depositShop.wallet, response.body.session_id));
    expect((await storedReceiving(response.body.session_id)).claims).toBe(0);
  });

  it('keeps its mode when the organisation goes back to the shared wallet', async () => {
    const merchant = await createMerchant(kassa.ctx, { wallet: '0xbcd4042de499d14e55001ccbb24a551f3b954096' });
    await setPaymentPolicy(kassa.ctx, merchant.organisationId, { receiving: 'deposit' });
    const deposit = await createSession(kassa, merchant, checkoutRequest());
    await setPaymentPolicy(kassa.ctx, merchant.organisationId, { receiving: 'shared' });
    const shared = await createSession(kassa, merchant, checkoutRequest());
    expect(shared.wallet_address).toBe(merchant.wallet);
    expect((await storedReceiving(shared.session_id)).mode).toBe('shared_wallet');
    const still = await kassa.http.get(`/checkout-sessions/${deposit.session_id}`);
    expect(still.body.wallet_address).toBe(addressFor(merchant.wallet, deposit.session_id));
    expect((await storedReceiving(deposit.session_id)).mode).toBe('deposit_addresses');
  });

  it('refuses a receiving mode it does not know', async () => {
    await expect(setPaymentPolicy(kassa.ctx, sharedShop.organisationId, { receiving: 'hot_wallet' })).rejects.toThrow(
      /receiving mode must be deposit or shared/,
    );
  });
});
