import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRefundWatcher, type RefundWatcher } from '../../src/chain/refund-watcher.js';
import { sandboxAccount } from '../../src/chain/sandbox.js';
import { createRefund } from '../../src/domain/refunds/create-refund.js';
import { Decimal } from '../../src/domain/shared/money.js';
import { createLogger } from '../../src/logging.js';
import { checkoutRequest } from '../factories/checkout-request.js';
import { createMerchant, type TestMerchant } from '../factories/merchant.js';
import { launchBrowser, type TestBrowser } from '../support/browser.js';
import { startChainKassa, startTestChain, type ChainKassa, type TestChain } from '../support/chain.js';
import { DASHBOARD_PASSWORD, dashboardMember } from '../support/dashboard-client.js';
import { createSession, postBind } from '../support/rest-kassa.js';
import { signatureValid, startWebhookReceiver, type WebhookReceiver } from '../support/webhook-receiver.js';
import { FAST_WEBHOOKS, signedRequest, startDeliveryLoop } from '../support/webhooks.js';

/**
 * Issue 36's journey in a real Chromium over a real Kassa, anvil and PostgreSQL: an overpaid session's excess is
 * refunded through the claim link, the payer proving the address with the wallet that paid (EIP-191 from an injected
 * EIP-1193 provider backed by anvil); the merchant sends it from the dashboard with the browser wallet; the watcher
 * confirms it; the webhooks arrive signed.
 */

// Anvil's dev accounts sign for the injected wallets: the shop receives at 1, the payer pays from 2.
const SHOP_WALLET = sandboxAccount(1).address.toLowerCase();
const PAYER = sandboxAccount(2).address.toLowerCase();
const OWNER = 'owner@refund-shop.example';

let browser: TestBrowser;
let chain: TestChain;
let node: ChainKassa;
let shop: TestMerchant;
let receiver: WebhookReceiver;
let secret: string;
let loop: { stop(): Promise<void> };
let refunds: RefundWatcher;

beforeAll(async () => {
  chain = await startTestChain();
  node = await startChainKassa(chain.url, { env: FAST_WEBHOOKS });
  const { kassa } = node;
  shop = await createMerchant(kassa.ctx, { wallet: SHOP_WALLET, name: 'Refund Shop' });
  receiver = await startWebhookReceiver();
  const endpoint = await signedRequest(kassa, shop, 'post', '/webhook-endpoints', { url: receiver.url });
  expect(endpoint.status, JSON.stringify(endpoint.body)).toBe(201);
  secret = endpoint.body.secret;
  loop = startDeliveryLoop(kassa.ctx);
  const settings = { rpcTimeoutMs: 5_000, leaseSeconds: 30, maxBlocksPerRange: 1000, droppedAfterMinutes: 60 };
  refunds = createRefundWatcher(kassa.ctx, kassa.ctx.store.refundWatch, settings, createLogger('silent'));
  await dashboardMember(kassa, shop.organisationId, OWNER, 'owner');
  browser = await launchBrowser();
}, 90_000);

afterAll(async () => {
  await browser?.close();
  await loop?.stop();
  await receiver?.close();
  await node?.close();
  await chain?.stop();
});

/** A page whose `window.ethereum` is `account` on anvil: accounts answered here, everything else sent to the node. */
async function walletPage(account: string): Promise<{ page: Page; calls: string[]; problems: string[] }> {
  const page = await browser.context.newPage();
  const calls: string[] = [];
  const problems: string[] = [];
  page.on('console', (message) => message.type() === 'error' && problems.push(message.text()));
  page.on('pageerror', (error) => problems.push(error.message));
  await page.exposeFunction('__anvilRequest', async (method: string, params: unknown[]) => {
    calls.push(method);
    return chain.rpc(method, params);
  });
  await page.addInitScript((address: string) => {
    const call = (globalThis as unknown as { __anvilRequest: (m: string, p: unknown[]) => Promise<unknown> })
      .__anvilRequest;
    (globalThis as unknown as { ethereum: unknown }).ethereum = {
      request: async ({ method, params }: { method: string; params?: unknown[] }) =>
        method === 'eth_requestAccounts' || method === 'eth_accounts' ? [address] : call(method, params ?? []),
    };
  }, account);
  return { page, calls, problems };
}

describe('a refund through the claim link, proved, sent from the dashboard', () => {
  it('refunds the overpaid excess to the paying wallet, confirmed on the chain, with signed webhooks', async () => {
    const { kassa } = node;
    const session = await createSession(kassa, shop, checkoutRequest());
    const quote = (session.crypto_options as Array<{ ticker: string; amount: string }>).find(
      (o) => o.ticker === 'USDT',
    )!;
    const paid = await chain.pay(SHOP_WALLET, 'USDT', new Decimal(quote.amount).plus(5).toFixed(), { from: 2 });
    const bound = await postBind(kassa, session.session_id, {
      tx_hash: paid.hash,
      chain_id: '31337',
      crypto_currency: 'USDT',
      payer_wallet_address: PAYER,
    });
    expect(bound.status, JSON.stringify(bound.body)).toBe(200);
    await node.watchers.tick();
    const { refund } = await createRefund(kassa.ctx, shop.organisationId, session.session_id, { kind: 'excess' });
    expect(refund).toMatchObject({ status: 'awaiting_destination', amount: new Decimal(5) });

    // The payer opens the claim link, proves the address with the wallet that paid, sends it.
    const payer = await walletPage(PAYER);
    await payer.page.goto(`${kassa.url}/r/${refund.id}`);
    await expect.poll(() => payer.page.textContent('#refund-amount')).toBe('5.00000000 USDT');
    expect(await payer.page.textContent('#refund-network')).toBe('Local sandbox (anvil) (chain 31337)');
    expect(await payer.page.textContent('#refund-shop')).toBe('Refund Shop');
    expect(await payer.page.isVisible('#claim-warning')).toBe(true);
    await payer.page.fill('#claim-address', 'bc1qar0srrr7xfkvy5l643lydnw9re59gtzzwf5mdq');
    await payer.page.click('#claim-submit');
    await expect.poll(() => payer.page.textContent('#claim-error')).toContain('That looks like a Bitcoin address');
    await payer.page.fill('#claim-address', '');
    await payer.page.click('#claim-wallet-button');
    await expect.poll(() => payer.page.textContent('#claim-proof-state')).toContain('Signed by');
    expect(payer.calls).toContain('personal_sign');
    expect((await payer.page.inputValue('#claim-address')).toLowerCase()).toBe(PAYER);
    await payer.page.click('#claim-submit');
    await payer.page.waitForSelector('#claim-done', { state: 'visible' });
    expect(await payer.page.textContent('#claim-done-text')).toContain(`Your wallet ${PAYER} proved it.`);
    expect(await kassa.ctx.store.refunds.findById(refund.id)).toMatchObject({
      status: 'ready',
      destination: PAYER,
      destinationSource: 'claim_signed',
      proof: { address: PAYER },
    });
    // The link is used: opened again, it says so.
    const again = await payer.page.goto(`${kassa.url}/r/${refund.id}`);
    expect(again?.status()).toBe(409);
    expect(await payer.page.textContent('h1')).toBe('This refund link has been used');
    expect(payer.problems.filter((text) => !/409/.test(text))).toEqual([]);

    // The shop's owner sends it from the dashboard with the browser wallet that holds the shop's money.
    const merchant = await walletPage(SHOP_WALLET);
    await merchant.page.goto(`${kassa.url}/dashboard/sign-in`);
    await merchant.page.fill('#email', OWNER);
    await merchant.page.fill('#password', DASHBOARD_PASSWORD);
    await Promise.all([merchant.page.waitForURL(`${kassa.url}/dashboard`), merchant.page.click('button[type=submit]')]);
    await merchant.page.goto(`${kassa.url}/dashboard/sessions/${session.session_id}?org=${shop.organisationId}`);
    const send = merchant.page.locator(`[data-send="${refund.id}"]`);
    await send.waitFor();
    const before = await usdtOf(PAYER);
    await send.click();
    await expect.poll(() => merchant.page.textContent('#refund-status')).toMatch(/^Sent 0x[0-9a-f]{64}/);
    expect(merchant.calls).toContain('eth_sendTransaction');
    const sent = (await kassa.ctx.store.refunds.findById(refund.id))!;
    expect(sent).toMatchObject({ status: 'sent', transfer: { sentFrom: SHOP_WALLET } });
    expect((await usdtOf(PAYER)) - before).toBe(refund.baseUnits);

    await refunds.tick();
    expect(await kassa.ctx.store.refunds.findById(refund.id)).toMatchObject({
      status: 'confirmed',
      transfer: { txHash: sent.transfer.txHash },
    });
    await merchant.page.reload();
    await merchant.page.locator(`[data-refund="${refund.id}"][data-status="confirmed"]`).waitFor();
    expect(merchant.problems).toEqual([]);

    const types = ['refund.created', 'refund.destination_submitted', 'refund.sent', 'refund.confirmed'];
    const got = await receiver.waitFor((all) =>
      types.every((type) => all.some((hook) => hook.body.type === type && hook.body.data.id === refund.id)),
    );
    const ours = got.filter((hook) => hook.body.type.startsWith('refund.'));
    for (const hook of ours) expect(signatureValid(secret, hook.headers, hook.rawBody)).toBe(true);
    expect(ours.find((hook) => hook.body.type === 'refund.confirmed')!.body.data).toMatchObject({
      status: 'confirmed',
      destination: PAYER,
      destination_source: 'claim_signed',
      proof_address: PAYER,
    });
  }, 120_000);
});

async function usdtOf(address: string): Promise<bigint> {
  const token = chain.network.tokens.find((t) => t.ticker === 'USDT')!.address;
  const data = `0x70a08231${address.slice(2).padStart(64, '0')}`;
  return BigInt(await chain.rpc<string>('eth_call', [{ to: token, data }, 'latest']));
}
