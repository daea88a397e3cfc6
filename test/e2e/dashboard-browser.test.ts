import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Decimal } from '../../src/domain/shared/money.js';
import { checkoutRequest } from '../factories/checkout-request.js';
import { createMerchant, type TestMerchant } from '../factories/merchant.js';
import { launchBrowser, type TestBrowser } from '../support/browser.js';
import { startChainKassa, startTestChain, type ChainKassa, type TestChain } from '../support/chain.js';
import {
  DASHBOARD_PASSWORD,
  dashboardMember,
  dashboardRequest,
  type DashboardMember,
} from '../support/dashboard-client.js';
import { createSession, postBind } from '../support/rest-kassa.js';
import { startWebhookReceiver, type WebhookReceiver } from '../support/webhook-receiver.js';
import { signedRequest, startDeliveryLoop } from '../support/webhooks.js';

/**
 * The dashboard's sessions pages in a real Chromium (docs/dashboard.md#the-pages) over a real Kassa, anvil and
 * PostgreSQL: sign in through the form, filter by transaction hash (the filter lives in the URL and survives a
 * reload), open the session and read its timeline, German, axe clean at 360 and 1280 px, no console error and no
 * third-party request; and the streamed CSV export over HTTP.
 */

const AXE_SOURCE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

let browser: TestBrowser | undefined;
let chain: TestChain;
let node: ChainKassa;
let shop: TestMerchant;
let other: TestMerchant;
let owner: DashboardMember;
let paidId: string;
let openId: string;
let paidHash: string;
let paidBtc: { amount: string; unit_price_fiat: string };
let paidBlock: bigint;
let receiver: WebhookReceiver;
let loop: { stop(): Promise<void> };

beforeAll(async () => {
  chain = await startTestChain();
  node = await startChainKassa(chain.url);
  const { kassa } = node;
  shop = await createMerchant(kassa.ctx, { wallet: `0x${randomBytes(20).toString('hex')}`, name: 'Browser Shop' });
  other = await createMerchant(kassa.ctx, { wallet: `0x${randomBytes(20).toString('hex')}`, name: 'Other Shop' });
  receiver = await startWebhookReceiver();
  const endpoint = await signedRequest(kassa, shop, 'post', '/webhook-endpoints', {
    url: receiver.url,
    events: ['checkout_session.paid'],
  });
  expect(endpoint.status, JSON.stringify(endpoint.body)).toBe(201);
  loop = startDeliveryLoop(kassa.ctx);
  const paid = await createSession(
    kassa,
    shop,
    checkoutRequest({ user: { id: '=HYPERLINK("x"),9', email: 'payer9@example.com' } }),
  );
  paidId = paid.session_id;
  const btc = (paid.crypto_options as Array<{ ticker: string; amount: string; unit_price_fiat: string }>).find(
    (o) => o.ticker === 'BTC',
  )!;
  paidBtc = btc;
  const sent = await chain.pay(shop.wallet, 'BTC', btc.amount);
  paidHash = sent.hash.toLowerCase();
  paidBlock = sent.blockNumber;
  const bound = await postBind(kassa, paidId, { tx_hash: sent.hash, chain_id: '31337', crypto_currency: 'BTC' });
  expect(bound.status, JSON.stringify(bound.body)).toBe(200);
  await node.watchers.tick();
  openId = (await createSession(kassa, shop, checkoutRequest({ currency: 'EUR' }))).session_id;
  await createSession(kassa, other, checkoutRequest());
  owner = await dashboardMember(kassa, shop.organisationId, 'owner@browser-shop.example', 'owner');
  await receiver.waitFor((got) => got.length === 1);
}, 120_000);

afterAll(async () => {
  await loop?.stop();
  await receiver?.close();
  await browser?.close();
  await node?.close();
  await chain?.stop();
});

interface Watched {
  readonly page: Page;
  readonly problems: string[];
}

async function newPage(viewport: { width: number; height: number }, locale = 'en'): Promise<Watched> {
  browser ??= await launchBrowser();
  const page = await browser.context.newPage();
  await page.setViewportSize(viewport);
  await page.setExtraHTTPHeaders({ 'Accept-Language': locale });
  const problems: string[] = [];
  page.on('pageerror', (error) => problems.push(`page error: ${error.message}`));
  page.on('console', (message) => {
    if (message.type() === 'error') problems.push(`console: ${message.text()}`);
  });
  page.on('request', (request) => {
    const url = new URL(request.url());
    if (url.protocol !== 'data:' && url.origin !== node.kassa.url) problems.push(`third-party: ${request.url()}`);
  });
  return { page, problems };
}

async function expectAxeClean(page: Page, label: string): Promise<void> {
  await page.evaluate(AXE_SOURCE);
  const violations = await page.evaluate<string[]>(`axe.run(document, { resultTypes: ['violations'] })
    .then((result) => result.violations.map((v) => v.id + ': ' + JSON.stringify(v.nodes.map((n) => n.target))))`);
  expect(violations, `${label}: ${violations.join('\n')}`).toEqual([]);
}

async function signIn(page: Page): Promise<void> {
  await page.goto(`${node.kassa.url}/dashboard/sign-in`);
  await page.fill('#email', 'owner@browser-shop.example');
  await page.fill('#password', DASHBOARD_PASSWORD);
  await Promise.all([page.waitForURL(`${node.kassa.url}/dashboard`), page.click('button[type=submit]')]);
}

const rowsOf = (page: Page) => page.locator('#results tbody tr');

describe('the sessions pages in Chromium', () => {
  for (const viewport of [
    { width: 1280, height: 900 },
    { width: 360, height: 740 },
  ]) {
    it(
      `sign in, filter by transaction hash, reload, open the session (${viewport.width} px)`,
      { timeout: 90_000 },
      async () => {
        const { page, problems } = await newPage(viewport);
        await signIn(page);
        await expectAxeClean(page, 'home');
        await Promise.all([page.waitForURL(/\/dashboard\/sessions\?/), page.click('text=Browser Shop')]);
        await expect.poll(() => rowsOf(page).count()).toBe(2);
        expect(await page.locator('h1').innerText()).toBe('Checkout sessions');
        await expectAxeClean(page, `sessions at ${viewport.width}`);

        await page.fill('#f-tx', paidHash.toUpperCase().replace('0X', '0x'));
        await Promise.all([page.waitForURL(/tx=0x/), page.click('.filters button[type=submit]')]);
        await expect.poll(() => rowsOf(page).count()).toBe(1);
        await page.reload();
        await expect.poll(() => rowsOf(page).count()).toBe(1);
        expect(await page.inputValue('#f-tx')).toBe(paidHash.toUpperCase().replace('0X', '0x'));
        expect(await rowsOf(page).first().innerText()).toContain('Paid');

        await Promise.all([
          page.waitForURL(new RegExp(`/dashboard/sessions/${paidId}`)),
          rowsOf(page).first().locator('a').click(),
        ]);
        await page.locator('.timeline li').first().waitFor();
        const timeline = await page.locator('.timeline').innerText();
        expect(timeline).toContain('Session created');
        expect(timeline).toContain(`Transaction bound · ${paidHash} (local)`);
        expect(timeline).toContain('Transfer seen');
        expect(timeline).toContain('counted by bound_tx');
        expect(timeline).toContain('Waiting for payment → Paid');
        await expectAxeClean(page, `session at ${viewport.width}`);
        expect(problems).toEqual([]);
        await page.close();
      },
    );
  }

  it('speaks German, and keeps the language across the filter form', { timeout: 60_000 }, async () => {
    const { page, problems } = await newPage({ width: 1280, height: 900 }, 'de-DE,de;q=0.9');
    await signIn(page);
    await page.goto(`${node.kassa.url}/dashboard/sessions?org=${shop.organisationId}&status=paid`);
    await expect.poll(() => rowsOf(page).count()).toBe(1);
    expect(await page.getAttribute('html', 'lang')).toBe('de');
    expect(await page.locator('h1').innerText()).toBe('Checkout-Sitzungen');
    expect(await rowsOf(page).first().innerText()).toContain('Bezahlt');
    await page.selectOption('#f-status', '');
    await Promise.all([page.waitForURL(/lang=de/), page.click('.filters button[type=submit]')]);
    await expect.poll(() => rowsOf(page).count()).toBe(2);
    await expectAxeClean(page, 'German sessions');
    await page.goto(`${node.kassa.url}/dashboard/sessions/${openId}?org=${shop.organisationId}&lang=de`);
    await page.locator('.timeline li').first().waitFor();
    expect(await page.locator('.timeline').innerText()).toContain('Sitzung erstellt');
    expect(problems).toEqual([]);
    await page.close();
  });

  it('sends a browser without a session to the sign-in page, and refuses another organisation', async () => {
    const anonymous = await dashboardRequest(node.kassa.url, 'GET', `/dashboard/sessions?org=${shop.organisationId}`);
    expect(anonymous.status).toBe(303);
    expect(anonymous.headers.get('location')).toBe('/dashboard/sign-in');
    const foreign = await dashboardRequest(node.kassa.url, 'GET', `/dashboard/sessions?org=${other.organisationId}`, {
      cookie: owner.cookie,
    });
    expect(foreign.status).toBe(404);
  });
});

describe('the CSV export', () => {
  const exportPath = (org: string, query = '') => `/dashboard/api/organisations/${org}/sessions.csv${query}`;

  it('streams the filtered sessions as CSV, newest first, quoted and safe for spreadsheets', async () => {
    const all = await dashboardRequest(node.kassa.url, 'GET', exportPath(shop.organisationId), {
      cookie: owner.cookie,
    });
    expect(all.status).toBe(200);
    expect(all.headers.get('content-type')).toBe('text/csv; charset=utf-8');
    expect(all.headers.get('content-disposition')).toBe(
      `attachment; filename="kassa-sessions-${shop.organisationId}.csv"`,
    );
    const lines = all.text.trimEnd().split('\r\n');
    expect(lines[0]).toBe(
      'session_id,created_at,status,fiat_currency,total_amount_fiat,crypto_currency,total_amount_crypto,' +
        'amount_received,payer_email,payer_id,payment_link_id,bound_tx_hash,expires_at',
    );
    expect(lines.slice(1).map((line) => line.split(',')[0])).toEqual([openId, paidId]);
    expect(lines[2]).toContain(',paid,USD,105.00000000,BTC,');
    // Quoted where it holds a comma or quote; a formula is made text.
    expect(lines[2]).toContain(`,payer9@example.com,"'=HYPERLINK(""x""),9",,${paidHash},`);

    const filtered = await dashboardRequest(node.kassa.url, 'GET', exportPath(shop.organisationId, `?tx=${paidHash}`), {
      cookie: owner.cookie,
    });
    expect(filtered.text.trimEnd().split('\r\n')).toHaveLength(2);
    const byCurrency = await dashboardRequest(
      node.kassa.url,
      'GET',
      exportPath(shop.organisationId, '?currency=EUR&status=waiting_payment&status=partial'),
      { cookie: owner.cookie },
    );
    expect(
      byCurrency.text
        .trimEnd()
        .split('\r\n')
        .slice(1)
        .map((line) => line.split(',')[0]),
    ).toEqual([openId]);
  });

  it('exports one row per payment of the filtered sessions, with its block, rate and fiat value', async () => {
    const path = (query = '') => `/dashboard/api/organisations/${shop.organisationId}/payments.csv${query}`;
    const all = await dashboardRequest(node.kassa.url, 'GET', path(), { cookie: owner.cookie });
    expect(all.status).toBe(200);
    expect(all.headers.get('content-type')).toBe('text/csv; charset=utf-8');
    expect(all.headers.get('content-disposition')).toBe(
      `attachment; filename="kassa-payments-${shop.organisationId}.csv"`,
    );
    const lines = all.text.trimEnd().split('\r\n');
    expect(lines[0]).toBe(
      'session_id,block_time,block_number,tx_hash,log_index,network,asset,amount,state,fiat_currency,rate,fiat_value',
    );
    expect(lines).toHaveLength(2);
    const cells = lines[1]!.split(',');
    const fiatValue = new Decimal(paidBtc.amount).mul(paidBtc.unit_price_fiat).toDecimalPlaces(8).toFixed(8);
    expect(cells[0]).toBe(paidId);
    expect(cells[1]).toMatch(/^\d{4}-\d{2}-\d{2}T/);
    expect(cells.slice(2)).toEqual([
      String(paidBlock),
      paidHash,
      cells[4],
      'local',
      'BTC',
      new Decimal(paidBtc.amount).toFixed(),
      cells[8],
      'USD',
      paidBtc.unit_price_fiat,
      fiatValue,
    ]);
    expect(['seen', 'confirmed']).toContain(cells[8]);

    // The rate is the one in force at the block's time: after a re-pricing, the price before it; a re-pricing
    // before the block does not count.
    const prisma = node.kassa.runtime.db.prisma;
    await prisma.$executeRaw`
      UPDATE checkout_session_quotes SET unit_price_fiat = 1 WHERE session_id = ${paidId}::uuid AND ticker = 'BTC'`;
    await prisma.$executeRaw`
      INSERT INTO checkout_session_quote_changes (session_id, ticker, old_unit_price_fiat, new_unit_price_fiat,
        old_amount, new_amount, old_quoted_at, rate_source, created_at)
      VALUES (${paidId}::uuid, 'BTC', 5, ${paidBtc.unit_price_fiat}::numeric, 1, 1, now() - interval '3 hours',
              'fixed', now() - interval '2 hours'),
             (${paidId}::uuid, 'BTC', ${paidBtc.unit_price_fiat}::numeric, 1, 1, 1, now() - interval '2 hours',
              'fixed', now() + interval '1 second')`;
    try {
      const repriced = await dashboardRequest(node.kassa.url, 'GET', path(), { cookie: owner.cookie });
      expect(repriced.text.trimEnd().split('\r\n')[1]!.split(',').slice(10)).toEqual([
        paidBtc.unit_price_fiat,
        fiatValue,
      ]);
    } finally {
      await prisma.$executeRaw`DELETE FROM checkout_session_quote_changes WHERE session_id = ${paidId}::uuid`;
      await prisma.$executeRaw`
        UPDATE checkout_session_quotes SET unit_price_fiat = ${paidBtc.unit_price_fiat}::numeric
         WHERE session_id = ${paidId}::uuid AND ticker = 'BTC'`;
    }
    // The session filters apply: the open sessions have no payment.
    const open = await dashboardRequest(node.kassa.url, 'GET', path('?status=waiting_payment'), {
      cookie: owner.cookie,
    });
    expect(open.text.trimEnd().split('\r\n')).toHaveLength(1);
    expect((await dashboardRequest(node.kassa.url, 'GET', path())).status).toBe(401);
    const foreign = await dashboardRequest(
      node.kassa.url,
      'GET',
      `/dashboard/api/organisations/${other.organisationId}/payments.csv`,
      { cookie: owner.cookie },
    );
    expect(foreign.status).toBe(404);
  });

  it('refuses a bad filter (400), no session (401) and another organisation (404) before any row', async () => {
    const bad = await dashboardRequest(node.kassa.url, 'GET', exportPath(shop.organisationId, '?from=yesterday'), {
      cookie: owner.cookie,
    });
    expect(bad.status).toBe(400);
    expect(bad.json().message).toEqual(['from must be a day, YYYY-MM-DD']);
    expect((await dashboardRequest(node.kassa.url, 'GET', exportPath(shop.organisationId))).status).toBe(401);
    const foreign = await dashboardRequest(node.kassa.url, 'GET', exportPath(other.organisationId), {
      cookie: owner.cookie,
    });
    expect(foreign.status).toBe(404);
  });
});
