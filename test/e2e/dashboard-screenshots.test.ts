import { randomBytes } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkoutRequest } from '../factories/checkout-request.js';
import { createMerchant, type TestMerchant } from '../factories/merchant.js';
import { launchBrowser, type TestBrowser } from '../support/browser.js';
import { startChainKassa, startTestChain, type ChainKassa, type TestChain } from '../support/chain.js';
import { DASHBOARD_PASSWORD, dashboardMember } from '../support/dashboard-client.js';
import { createSession, postBind } from '../support/rest-kassa.js';
import { startWebhookReceiver, type WebhookReceiver } from '../support/webhook-receiver.js';
import { FAST_WEBHOOKS, signedRequest, startDeliveryLoop } from '../support/webhooks.js';

/**
 * The screenshots in docs/dashboard.md, taken from a real Kassa on a fresh database with a few sessions (one paid
 * on anvil, its webhook delivered; another endpoint answering 503) in a real Chromium at 1280 px. Runs only when asked:
 *   KASSA_SCREENSHOTS=1 npx vitest run test/e2e/dashboard-screenshots.test.ts
 * and writes docs/images/dashboard-sessions.png, dashboard-session.png and dashboard-webhooks.png.
 */

const OUT = new URL('../../docs/images/', import.meta.url);
const EMAIL = 'owner@demo-shop.example';

describe.skipIf(!process.env.KASSA_SCREENSHOTS)('the dashboard screenshots', () => {
  let browser: TestBrowser | undefined;
  let chain: TestChain;
  let node: ChainKassa;
  let shop: TestMerchant;
  let paidId: string;
  let receiver: WebhookReceiver;
  let failing: WebhookReceiver;
  let loop: { stop(): Promise<void> };

  beforeAll(async () => {
    chain = await startTestChain();
    node = await startChainKassa(chain.url, { env: { ...FAST_WEBHOOKS, KASSA_WEBHOOK_GIVE_UP_HOURS: '0.0003' } });
    const { kassa } = node;
    shop = await createMerchant(kassa.ctx, { wallet: `0x${randomBytes(20).toString('hex')}`, name: 'Demo Shop' });
    receiver = await startWebhookReceiver();
    const endpoint = await signedRequest(kassa, shop, 'post', '/webhook-endpoints', {
      url: receiver.url,
      events: ['checkout_session.paid'],
    });
    expect(endpoint.status, JSON.stringify(endpoint.body)).toBe(201);
    loop = startDeliveryLoop(kassa.ctx);
    await createSession(
      kassa,
      shop,
      checkoutRequest({ currency: 'EUR', user: { id: 'c-1041', email: 'lea@example.com' } }),
    );
    const paid = await createSession(
      kassa,
      shop,
      checkoutRequest({ user: { id: 'c-1042', email: 'ada@example.com' } }),
    );
    paidId = paid.session_id;
    const btc = (paid.crypto_options as Array<{ ticker: string; amount: string }>).find((o) => o.ticker === 'BTC')!;
    const sent = await chain.pay(shop.wallet, 'BTC', btc.amount);
    const bound = await postBind(kassa, paidId, { tx_hash: sent.hash, chain_id: '31337', crypto_currency: 'BTC' });
    expect(bound.status, JSON.stringify(bound.body)).toBe(200);
    await node.watchers.tick();
    // Only the last session's events go to the failing endpoint: the paid session's timeline stays short.
    failing = await startWebhookReceiver();
    failing.fallback = { status: 503, body: 'Service Unavailable: maintenance until 10:00' };
    const down = await signedRequest(kassa, shop, 'post', '/webhook-endpoints', {
      url: `${failing.url}/orders`,
      events: ['checkout_session.created'],
    });
    expect(down.status, JSON.stringify(down.body)).toBe(201);
    await createSession(kassa, shop, checkoutRequest({ user: { id: 'c-1043', email: 'grace@example.com' } }));
    await createSession(
      kassa,
      shop,
      checkoutRequest({ currency: 'EUR', user: { id: 'c-1044', email: 'ines@example.com' } }),
    );
    await dashboardMember(kassa, shop.organisationId, EMAIL, 'owner');
    await receiver.waitFor((got) => got.length === 1);
  }, 120_000);

  afterAll(async () => {
    await loop?.stop();
    await receiver?.close();
    await failing?.close();
    await browser?.close();
    await node?.close();
    await chain?.stop();
  });

  it('saves the sessions list and a paid session at 1280 px', { timeout: 90_000 }, async () => {
    mkdirSync(OUT, { recursive: true });
    browser = await launchBrowser();
    const page = await browser.context.newPage();
    await page.setViewportSize({ width: 1280, height: 800 });
    await page.setExtraHTTPHeaders({ 'Accept-Language': 'en' });
    const problems: string[] = [];
    page.on('pageerror', (error) => problems.push(`page error: ${error.message}`));
    page.on('console', (message) => {
      if (message.type() === 'error') problems.push(`console: ${message.text()}`);
    });
    await page.goto(`${node.kassa.url}/dashboard/sign-in`);
    await page.fill('#email', EMAIL);
    await page.fill('#password', DASHBOARD_PASSWORD);
    await Promise.all([page.waitForURL(`${node.kassa.url}/dashboard`), page.click('button[type=submit]')]);

    await page.goto(`${node.kassa.url}/dashboard/sessions?org=${shop.organisationId}`);
    await expect.poll(() => page.locator('#results tbody tr').count()).toBe(4);
    await page.screenshot({ path: new URL('dashboard-sessions.png', OUT).pathname });

    await page.goto(`${node.kassa.url}/dashboard/sessions/${paidId}?org=${shop.organisationId}`);
    await page.locator('.timeline li').first().waitFor();
    await expect.poll(() => page.locator('.timeline').innerText()).toContain('Waiting for payment → Paid');
    await page.screenshot({ path: new URL('dashboard-session.png', OUT).pathname, fullPage: true });

    await page.goto(`${node.kassa.url}/dashboard/webhooks?org=${shop.organisationId}`);
    // Both deliveries to the failing endpoint given up: reload until the page shows them so.
    await expect
      .poll(
        async () => {
          await page.reload();
          await page.locator('section.endpoint').first().waitFor();
          return page.locator('section.endpoint tbody tr', { hasText: 'Failed' }).count();
        },
        { timeout: 20_000 },
      )
      .toBe(2);
    await page.screenshot({ path: new URL('dashboard-webhooks.png', OUT).pathname, fullPage: true });

    for (const body of [
      { name: 'Poster', currency: 'USD', items: [{ name: 'Poster', quantity: 1, unit_price: 12.5 }], max_uses: 100 },
      { name: 'Donation', currency: 'EUR', amount_fiat: { min: 5, max: 500 } },
    ]) {
      const link = await signedRequest(node.kassa, shop, 'post', '/payment-links', body);
      expect(link.status, JSON.stringify(link.body)).toBe(201);
    }
    await page.goto(`${node.kassa.url}/dashboard/links?org=${shop.organisationId}`);
    await expect.poll(() => page.locator('#results tbody tr').count()).toBe(2);
    await expect
      .poll(() =>
        page
          .locator('#results img')
          .last()
          .evaluate((img) => (img as unknown as { complete: boolean }).complete),
      )
      .toBe(true);
    await page.screenshot({ path: new URL('dashboard-links.png', OUT).pathname, fullPage: true });
    await page.goto(`${node.kassa.url}/dashboard/keys?org=${shop.organisationId}`);
    await page.locator('#results tbody tr').first().waitFor();
    await page.screenshot({ path: new URL('dashboard-keys.png', OUT).pathname });
    await page.goto(`${node.kassa.url}/dashboard/settings?org=${shop.organisationId}`);
    await expect.poll(() => page.inputValue('#f-underpayment_tolerance_percent')).not.toBe('');
    await page.screenshot({ path: new URL('dashboard-settings.png', OUT).pathname });
    expect(problems).toEqual([]);
    await page.close();
  });
});
