import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import type { Page } from 'playwright-core';
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
 * The dashboard's whole journey in a real Chromium, by keyboard only, over a real Kassa, anvil and PostgreSQL
 * (issue 35): sign in → filter by transaction hash → open the session → a payment made on the chain arrives live →
 * redeliver its webhook → export CSV → create and deactivate a payment link → revoke a key → sign out. Axe clean at
 * every step, no console error, no request to another host.
 */

const AXE_SOURCE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

let browser: TestBrowser | undefined;
let chain: TestChain;
let node: ChainKassa;
let shop: TestMerchant;
let receiver: WebhookReceiver;
let loop: { stop(): Promise<void> };
let firstId: string;
let firstHash: string;
let secondId: string;
let secondBtc: string;

beforeAll(async () => {
  chain = await startTestChain();
  node = await startChainKassa(chain.url, { env: FAST_WEBHOOKS });
  const { kassa } = node;
  shop = await createMerchant(kassa.ctx, { wallet: `0x${randomBytes(20).toString('hex')}`, name: 'Journey Shop' });
  receiver = await startWebhookReceiver();
  const endpoint = await signedRequest(kassa, shop, 'post', '/webhook-endpoints', {
    url: receiver.url,
    events: ['checkout_session.paid'],
  });
  expect(endpoint.status, JSON.stringify(endpoint.body)).toBe(201);
  loop = startDeliveryLoop(kassa.ctx);
  const first = await createSession(kassa, shop, checkoutRequest());
  firstId = first.session_id;
  const btc = (s: Record<string, unknown>) =>
    (s.crypto_options as Array<{ ticker: string; amount: string }>).find((o) => o.ticker === 'BTC')!.amount;
  const sent = await chain.pay(shop.wallet, 'BTC', btc(first));
  firstHash = sent.hash.toLowerCase();
  const bound = await postBind(kassa, firstId, { tx_hash: sent.hash, chain_id: '31337', crypto_currency: 'BTC' });
  expect(bound.status, JSON.stringify(bound.body)).toBe(200);
  await node.watchers.tick();
  const second = await createSession(kassa, shop, checkoutRequest({ currency: 'EUR' }));
  secondId = second.session_id;
  secondBtc = btc(second);
  await dashboardMember(kassa, shop.organisationId, 'owner@journey.example', 'owner');
  await receiver.waitFor((got) => got.length === 1);
}, 120_000);

afterAll(async () => {
  await loop?.stop();
  await receiver?.close();
  await browser?.close();
  await node?.close();
  await chain?.stop();
});

/** Presses Tab until `selector` has the focus: it can be reached by keyboard. */
async function tabTo(page: Page, selector: string, most = 400): Promise<void> {
  for (let i = 0; i < most; i++) {
    await page.keyboard.press('Tab');
    if (await page.evaluate<boolean>(`document.activeElement?.matches(${JSON.stringify(selector)}) ?? false`)) return;
  }
  throw new Error(`${selector} cannot be reached with Tab`);
}

async function expectAxeClean(page: Page, label: string): Promise<void> {
  await page.evaluate(AXE_SOURCE);
  const violations = await page.evaluate<string[]>(`axe.run(document, { resultTypes: ['violations'] })
    .then((result) => result.violations.map((v) => v.id + ': ' + JSON.stringify(v.nodes.map((n) => n.target))))`);
  expect(violations, `${label}: ${violations.join('\n')}`).toEqual([]);
}

describe('the journey', () => {
  it(
    'sign in, find, watch a payment arrive, redeliver, export, a link, a key, sign out: by keyboard',
    { timeout: 180_000 },
    async () => {
      const base = node.kassa.url;
      const org = shop.organisationId;
      browser ??= await launchBrowser();
      const page = await browser.context.newPage();
      await page.setViewportSize({ width: 1280, height: 900 });
      const problems: string[] = [];
      page.on('pageerror', (error) => problems.push(`page error: ${error.message}`));
      page.on('console', (message) => {
        if (message.type() === 'error') problems.push(`console: ${message.text()}`);
      });
      page.on('request', (request) => {
        const url = new URL(request.url());
        if (url.protocol !== 'data:' && url.origin !== base) problems.push(`third-party: ${request.url()}`);
      });

      // Sign in.
      await page.goto(`${base}/dashboard/sign-in`);
      await tabTo(page, '#email');
      await page.keyboard.type('owner@journey.example');
      await tabTo(page, '#password');
      await page.keyboard.type(DASHBOARD_PASSWORD);
      await Promise.all([page.waitForURL(`${base}/dashboard`), page.keyboard.press('Enter')]);
      await tabTo(page, `a[href^="/dashboard/sessions?org=${org}"]`);
      await Promise.all([page.waitForURL(/\/dashboard\/sessions\?/), page.keyboard.press('Enter')]);
      await page.locator('tbody tr').first().waitFor();

      // Filter by transaction hash.
      await tabTo(page, '#f-tx');
      await page.keyboard.type(firstHash);
      await Promise.all([page.waitForURL(/tx=0x/), page.keyboard.press('Enter')]);
      await expect.poll(() => page.locator('tbody tr').count()).toBe(1);
      await expectAxeClean(page, 'filtered list');

      // Open the session.
      await tabTo(page, `a[href*="${firstId}"]`);
      await Promise.all([page.waitForURL(new RegExp(firstId)), page.keyboard.press('Enter')]);
      await expect.poll(() => page.locator('.timeline').innerText()).toContain('Transfer seen');
      await expectAxeClean(page, 'session');

      // Back to the list: a payment made on the chain arrives without a reload.
      await tabTo(page, 'main p a[href^="/dashboard/sessions?"]');
      await Promise.all([page.waitForURL(/\/dashboard\/sessions\?org=/), page.keyboard.press('Enter')]);
      const secondRow = page.locator('tbody tr', { has: page.locator(`a[href*="${secondId}"]`) });
      await expect.poll(() => secondRow.innerText()).toContain('Waiting for payment');
      await page.evaluate('window.kassaNotReloaded = true');
      const sent = await chain.pay(shop.wallet, 'BTC', secondBtc);
      const bound = await postBind(node.kassa, secondId, {
        tx_hash: sent.hash,
        chain_id: '31337',
        crypto_currency: 'BTC',
      });
      expect(bound.status, JSON.stringify(bound.body)).toBe(200);
      await node.watchers.tick();
      await expect.poll(() => secondRow.innerText(), { timeout: 20_000 }).toContain('Paid');
      expect(await page.evaluate<boolean>('window.kassaNotReloaded === true')).toBe(true);

      // Its webhook, delivered, sent again from the session's timeline.
      await receiver.waitFor((got) => got.filter((h) => h.body.data.session_id === secondId).length === 1);
      await tabTo(page, `a[href*="${secondId}"]`);
      await Promise.all([page.waitForURL(new RegExp(secondId)), page.keyboard.press('Enter')]);
      await expect.poll(() => page.locator('.timeline button').count()).toBe(1);
      await tabTo(page, '.timeline button');
      await page.keyboard.press('Enter');
      await expect.poll(() => page.locator('.timeline [role=status]').innerText()).toBe('Queued again');
      await receiver.waitFor((got) => got.filter((h) => h.body.data.session_id === secondId).length === 2);
      await expectAxeClean(page, 'paid session');

      // Export CSV.
      await tabTo(page, 'nav a[href^="/dashboard/sessions?"]');
      await Promise.all([page.waitForURL(/\/dashboard\/sessions\?org=/), page.keyboard.press('Enter')]);
      await page.locator('tbody tr').first().waitFor();
      await tabTo(page, '#export');
      const [download] = await Promise.all([page.waitForEvent('download'), page.keyboard.press('Enter')]);
      const csv = readFileSync((await download.path())!, 'utf8');
      expect(csv).toContain(firstId);
      expect(csv).toContain(`${secondId},`);

      // Create and deactivate a payment link.
      await tabTo(page, 'nav a[href^="/dashboard/links?"]');
      await Promise.all([page.waitForURL(/\/dashboard\/links\?/), page.keyboard.press('Enter')]);
      await tabTo(page, '#f-link-name');
      await page.keyboard.type('Journey poster');
      await tabTo(page, '#f-link-price');
      await page.keyboard.type('9.99');
      await page.keyboard.press('Enter');
      const linkRow = page.locator('tbody tr', { hasText: 'Journey poster' });
      await expect.poll(() => linkRow.innerText()).toContain('Active');
      await tabTo(page, 'tbody tr button.small');
      await page.keyboard.press('Enter');
      await expect
        .poll(() => page.locator('tbody tr', { hasText: 'Journey poster' }).innerText())
        .toContain('Inactive');
      await expectAxeClean(page, 'links');

      // Revoke a key: calls signed with it are refused from then on.
      await tabTo(page, 'nav a[href^="/dashboard/keys?"]');
      await Promise.all([page.waitForURL(/\/dashboard\/keys\?/), page.keyboard.press('Enter')]);
      await page.locator('tbody tr').first().waitFor();
      await tabTo(page, 'tbody tr button.small');
      await page.keyboard.press('Enter');
      await expect.poll(() => page.locator('tbody tr').first().innerText()).toContain('Revoked');
      expect((await signedRequest(node.kassa, shop, 'get', '/payment-links')).status).toBe(401);
      await expectAxeClean(page, 'keys');

      // Sign out.
      await tabTo(page, 'header form button');
      await Promise.all([page.waitForURL(`${base}/dashboard/sign-in`), page.keyboard.press('Enter')]);
      await page.goto(`${base}/dashboard/sessions?org=${org}`);
      expect(page.url()).toBe(`${base}/dashboard/sign-in`);
      expect(problems).toEqual([]);
      await page.close();
    },
  );
});
