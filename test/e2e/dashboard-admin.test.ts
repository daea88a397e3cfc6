import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createMerchant, type TestMerchant } from '../factories/merchant.js';
import { launchBrowser, type TestBrowser } from '../support/browser.js';
import {
  DASHBOARD_PASSWORD,
  dashboardMember,
  dashboardRequest,
  type DashboardAnswer,
  type DashboardMember,
} from '../support/dashboard-client.js';
import { startTestKassa, type TestKassa } from '../support/kassa.js';
import { signedRequest } from '../support/webhooks.js';

/**
 * Payment links, API keys and settings in the dashboard (docs/dashboard.md#links-keys-and-settings) over a real
 * Kassa on PostgreSQL: by role, through the REST API's rules, audited, another organisation's nothing; and the
 * pages in Chromium at 360 and 1280 px, axe clean.
 */

const AXE_SOURCE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

let kassa: TestKassa;
let shop: TestMerchant;
let other: TestMerchant;
let owner: DashboardMember;
let admin: DashboardMember;
let developer: DashboardMember;
let viewer: DashboardMember;
let ownerOther: DashboardMember;
let browser: TestBrowser | undefined;

beforeAll(async () => {
  kassa = await startTestKassa();
  shop = await createMerchant(kassa.ctx, { wallet: `0x${randomBytes(20).toString('hex')}`, name: 'Admin Shop' });
  other = await createMerchant(kassa.ctx, { wallet: `0x${randomBytes(20).toString('hex')}`, name: 'Other' });
  owner = await dashboardMember(kassa, shop.organisationId, 'owner@admin-shop.example', 'owner');
  admin = await dashboardMember(kassa, shop.organisationId, 'admin@admin-shop.example', 'admin');
  developer = await dashboardMember(kassa, shop.organisationId, 'dev@admin-shop.example', 'developer');
  viewer = await dashboardMember(kassa, shop.organisationId, 'viewer@admin-shop.example', 'viewer');
  ownerOther = await dashboardMember(kassa, other.organisationId, 'owner@other.example', 'owner');
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await kassa?.close();
});

function call(
  member: DashboardMember,
  method: string,
  path: string,
  json?: unknown,
  organisationId = shop.organisationId,
): Promise<DashboardAnswer> {
  return dashboardRequest(kassa.url, method, `/dashboard/api/organisations/${organisationId}${path}`, {
    cookie: member.cookie,
    ...(json === undefined ? {} : { json }),
    headers: { 'X-CSRF-Token': member.csrf },
  });
}

async function lastAudit(): Promise<{ action: string; user_email: string; details: Record<string, unknown> }> {
  const audit = await call(owner, 'GET', '/audit-log');
  expect(audit.status, audit.text).toBe(200);
  return audit.json<Array<{ action: string; user_email: string; details: Record<string, unknown> }>>()[0]!;
}

describe('payment links', () => {
  let linkId = '';

  it("an admin creates a link with the REST API's rules; audited; anyone reads it with its uses and QR", async () => {
    const created = await call(admin, 'POST', '/payment-links', {
      name: 'Gift card',
      currency: 'USD',
      items: [{ name: 'Gift card', quantity: 1, unit_price: 25 }],
      max_uses: 10,
    });
    expect(created.status, created.text).toBe(201);
    const link = created.json<Record<string, any>>();
    expect(link).toMatchObject({ name: 'Gift card', total_amount_fiat: '25.00000000', uses: 0, max_uses: 10 });
    linkId = link.payment_link_id;
    expect(await lastAudit()).toMatchObject({
      action: 'payment_link.created',
      user_email: 'admin@admin-shop.example',
      details: { payment_link_id: linkId, name: 'Gift card' },
    });
    const listed = await call(viewer, 'GET', '/payment-links');
    expect(listed.json<{ data: Array<{ payment_link_id: string; state: string }> }>().data).toEqual([
      expect.objectContaining({ payment_link_id: linkId, state: 'active' }),
    ]);
    const qr = await call(viewer, 'GET', `/payment-links/${linkId}/qr.svg`);
    expect(qr.status).toBe(200);
    expect(qr.headers.get('content-type')).toMatch(/^image\/svg\+xml/);
    expect(qr.text).toContain('<svg');

    const bad = await call(admin, 'POST', '/payment-links', {
      name: '',
      currency: 'USD',
      amount_fiat: { min: 5, max: 1 },
    });
    expect(bad.status).toBe(400);
    expect(bad.json<{ message: string[] }>().message.join(' ')).toMatch(/max must not be less than min/);
  });

  it('an admin renames and deactivates it; audited', async () => {
    const renamed = await call(admin, 'PATCH', `/payment-links/${linkId}`, { name: 'Gift card 25', max_uses: null });
    expect(renamed.status, renamed.text).toBe(200);
    expect(renamed.json()).toMatchObject({ name: 'Gift card 25', max_uses: null });
    const off = await call(admin, 'PATCH', `/payment-links/${linkId}`, { active: false });
    expect(off.json()).toMatchObject({ active: false, state: 'inactive' });
    expect(await lastAudit()).toMatchObject({
      action: 'payment_link.deactivated',
      details: { payment_link_id: linkId },
    });
  });

  it('a developer may not change links; another organisation finds none', async () => {
    const refused = await call(developer, 'PATCH', `/payment-links/${linkId}`, { active: true });
    expect(refused.status).toBe(403);
    const created = await call(developer, 'POST', '/payment-links', {
      name: 'x',
      currency: 'USD',
      amount_fiat: { min: 1, max: 2 },
    });
    expect(created.status).toBe(403);
    expect((await call(ownerOther, 'GET', '/payment-links')).status).toBe(404);
    const crossed = await call(ownerOther, 'PATCH', `/payment-links/${linkId}`, { active: true }, other.organisationId);
    expect(crossed.status).toBe(404);
    expect(
      (await call(ownerOther, 'GET', `/payment-links/${linkId}/qr.svg`, undefined, other.organisationId)).status,
    ).toBe(404);
  });

  it('refuses a change without the CSRF token or from another site', async () => {
    const noToken = await dashboardRequest(
      kassa.url,
      'PATCH',
      `/dashboard/api/organisations/${shop.organisationId}/payment-links/${linkId}`,
      { cookie: admin.cookie, json: { active: true } },
    );
    expect(noToken.status).toBe(403);
    const crossSite = await dashboardRequest(
      kassa.url,
      'PATCH',
      `/dashboard/api/organisations/${shop.organisationId}/payment-links/${linkId}`,
      {
        cookie: admin.cookie,
        json: { active: true },
        headers: { 'X-CSRF-Token': admin.csrf, Origin: 'https://evil.example' },
      },
    );
    expect(crossSite.status).toBe(403);
  });
});

describe('API keys', () => {
  it('a developer creates a key (secret shown once) and revokes one; last use is shown; audited', async () => {
    expect((await signedRequest(kassa, shop, 'get', '/payment-links')).status).toBe(200);
    const listed = await call(viewer, 'GET', '/api-keys');
    const keys = listed.json<{ data: Array<Record<string, any>> }>().data;
    expect(keys).toHaveLength(1);
    expect(keys[0]).toMatchObject({ api_key: shop.apiKey, state: 'active' });
    expect(keys[0]!.last_used_at).not.toBeNull();
    expect(JSON.stringify(keys)).not.toContain(shop.apiSecret);

    const created = await call(developer, 'POST', '/api-keys');
    expect(created.status, created.text).toBe(201);
    const issued = created.json<{ id: string; api_key: string; api_secret: string }>();
    expect(issued.api_secret).toMatch(/^sk_[0-9a-f]{64}$/);
    expect(await lastAudit()).toMatchObject({ action: 'api_key.created', details: { api_key: issued.api_key } });
    const fresh = { apiKey: issued.api_key, apiSecret: issued.api_secret };
    expect((await signedRequest(kassa, fresh, 'get', '/payment-links')).status).toBe(200);

    const revoked = await call(developer, 'POST', `/api-keys/${issued.id}/revoke`);
    expect(revoked.status, revoked.text).toBe(200);
    expect(revoked.json()).toMatchObject({ id: issued.id, state: 'revoked' });
    expect((await signedRequest(kassa, fresh, 'get', '/payment-links')).status).toBe(401);
    expect(await lastAudit()).toMatchObject({ action: 'api_key.revoked', user_email: 'dev@admin-shop.example' });
  });

  it("support may not create keys; another organisation's key is not found", async () => {
    expect((await call(viewer, 'POST', '/api-keys')).status).toBe(403);
    const mine = (await call(viewer, 'GET', '/api-keys')).json<{ data: Array<{ id: string }> }>().data[0]!;
    const crossed = await call(ownerOther, 'POST', `/api-keys/${mine.id}/revoke`, undefined, other.organisationId);
    expect(crossed.status).toBe(404);
    expect((await signedRequest(kassa, shop, 'get', '/payment-links')).status).toBe(200);
  });
});

describe('settings', () => {
  it('an admin sets the brand colour and the payment tolerance with the CLI rules; audited; a developer may not', async () => {
    const before = await call(viewer, 'GET', '/settings');
    expect(before.json()).toMatchObject({ brand_color: null, logo_sha256: null });
    const saved = await call(admin, 'PATCH', '/settings', {
      brand_color: '#AA3300',
      underpayment_tolerance_percent: '1.5',
      late_payment_window_minutes: '120',
    });
    expect(saved.status, saved.text).toBe(200);
    expect(saved.json()).toEqual({
      brand_color: '#aa3300',
      logo_sha256: null,
      underpayment_tolerance_percent: '1.50',
      late_payment_window_minutes: 120,
    });
    expect(await lastAudit()).toMatchObject({
      action: 'settings.updated',
      details: { brand_color: '#aa3300', underpayment_tolerance_percent: '1.50', late_payment_window_minutes: 120 },
    });
    const bad = await call(admin, 'PATCH', '/settings', { underpayment_tolerance_percent: '101' });
    expect(bad.status).toBe(400);
    expect((await call(developer, 'PATCH', '/settings', { brand_color: '' })).status).toBe(403);
  });
});

async function expectAxeClean(page: Page, label: string): Promise<void> {
  await page.evaluate(AXE_SOURCE);
  const violations = await page.evaluate<string[]>(`axe.run(document, { resultTypes: ['violations'] })
    .then((result) => result.violations.map((v) => v.id + ': ' + JSON.stringify(v.nodes.map((n) => n.target))))`);
  expect(violations, `${label}: ${violations.join('\n')}`).toEqual([]);
}

describe('the pages in Chromium', () => {
  for (const width of [1280, 360]) {
    it(`links, keys and settings work for the owner, axe clean (${width} px)`, { timeout: 90_000 }, async () => {
      browser ??= await launchBrowser();
      const page = await browser.context.newPage();
      await page.setViewportSize({ width, height: 900 });
      const problems: string[] = [];
      page.on('pageerror', (error) => problems.push(`page error: ${error.message}`));
      page.on('console', (message) => {
        if (message.type() === 'error') problems.push(`console: ${message.text()}`);
      });
      page.on('request', (request) => {
        if (new URL(request.url()).origin !== kassa.url) problems.push(`third-party: ${request.url()}`);
      });
      await page.goto(`${kassa.url}/dashboard/sign-in`);
      await page.fill('#email', 'owner@admin-shop.example');
      await page.fill('#password', DASHBOARD_PASSWORD);
      await Promise.all([page.waitForURL(`${kassa.url}/dashboard`), page.click('button[type=submit]')]);

      await page.goto(`${kassa.url}/dashboard/links?org=${shop.organisationId}`);
      await page.fill('#f-link-name', `Poster ${width}`);
      await page.fill('#f-link-price', '12.5');
      await page.click('#create-link button[type=submit]');
      await expect.poll(() => page.locator('#link-status').innerText()).toContain('/l/');
      const row = page.locator('tr', { hasText: `Poster ${width}` });
      await expect.poll(() => row.innerText()).toContain('Active');
      await expect
        .poll(() => row.locator('img').evaluate((img) => (img as unknown as { naturalWidth: number }).naturalWidth))
        .toBeGreaterThan(0);
      await row.locator('button', { hasText: 'Deactivate' }).click();
      await expect.poll(() => page.locator('tr', { hasText: `Poster ${width}` }).innerText()).toContain('Inactive');
      await expectAxeClean(page, `links at ${width}`);

      await page.goto(`${kassa.url}/dashboard/keys?org=${shop.organisationId}`);
      await page.locator('tbody tr').first().waitFor();
      await page.click('#create-key button[type=submit]');
      await expect.poll(() => page.locator('#key-status').innerText()).toMatch(/sk_[0-9a-f]{64}/);
      const keyRows = page.locator('tbody tr', { hasText: 'Active' });
      const activeBefore = await keyRows.count();
      await keyRows.last().locator('button', { hasText: 'Revoke' }).click();
      await expect.poll(() => page.locator('tbody tr', { hasText: 'Active' }).count()).toBe(activeBefore - 1);
      await expectAxeClean(page, `keys at ${width}`);

      await page.goto(`${kassa.url}/dashboard/settings?org=${shop.organisationId}`);
      await expect.poll(() => page.inputValue('#f-underpayment_tolerance_percent')).toMatch(/^\d+\.\d\d$/);
      await page.fill('#f-underpayment_tolerance_percent', width === 360 ? '3' : '2');
      await page.click('#settings button[type=submit]');
      await expect.poll(() => page.locator('#settings-status').innerText()).toBe('Saved');
      await expectAxeClean(page, `settings at ${width}`);
      expect(problems).toEqual([]);
      await page.close();
    });
  }
});
