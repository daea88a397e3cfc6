import { createHash, randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkoutRequest } from '../factories/checkout-request.js';
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
import { createSession } from '../support/rest-kassa.js';

/**
 * The logo from the dashboard's settings page (docs/dashboard.md#links-keys-and-settings) over a real Kassa on
 * PostgreSQL: the CLI's rules (PNG or WebP by their bytes, 100 KB, no SVG), admins and owners only, audited; and in
 * Chromium, uploaded on the settings page, shown on the checkout page, removed.
 */

const AXE_SOURCE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');
const PNG = readFileSync(new URL('../fixtures/logo.png', import.meta.url));
const PNG_SHA256 = createHash('sha256').update(PNG).digest('hex');
const SVG = Buffer.from('<svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script></svg>');

let kassa: TestKassa;
let shop: TestMerchant;
let other: TestMerchant;
let owner: DashboardMember;
let admin: DashboardMember;
let developer: DashboardMember;
let ownerOther: DashboardMember;
let browser: TestBrowser | undefined;

beforeAll(async () => {
  kassa = await startTestKassa();
  shop = await createMerchant(kassa.ctx, { wallet: `0x${randomBytes(20).toString('hex')}`, name: 'Logo Shop' });
  other = await createMerchant(kassa.ctx, { wallet: `0x${randomBytes(20).toString('hex')}`, name: 'Other' });
  owner = await dashboardMember(kassa, shop.organisationId, 'owner@logo-shop.example', 'owner');
  admin = await dashboardMember(kassa, shop.organisationId, 'admin@logo-shop.example', 'admin');
  developer = await dashboardMember(kassa, shop.organisationId, 'dev@logo-shop.example', 'developer');
  ownerOther = await dashboardMember(kassa, other.organisationId, 'owner@logo-other.example', 'owner');
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await kassa?.close();
});

/** The logo route with raw bytes, as the settings page sends a file. */
async function logo(
  member: DashboardMember,
  method: 'PUT' | 'DELETE',
  body?: Buffer,
  options: { organisationId?: string; headers?: Record<string, string> } = {},
): Promise<DashboardAnswer> {
  const path = `/dashboard/api/organisations/${options.organisationId ?? shop.organisationId}/logo`;
  const response = await fetch(`${kassa.url}${path}`, {
    method,
    headers: {
      Origin: kassa.url,
      Cookie: member.cookie,
      'X-CSRF-Token': member.csrf,
      'Content-Type': 'application/octet-stream',
      ...options.headers,
    },
    body,
  });
  const text = await response.text();
  return { status: response.status, headers: response.headers, text, json: () => JSON.parse(text) };
}

async function settings(): Promise<{ logo_sha256: string | null }> {
  const answer = await dashboardRequest(
    kassa.url,
    'GET',
    `/dashboard/api/organisations/${shop.organisationId}/settings`,
    {
      cookie: owner.cookie,
    },
  );
  return answer.json();
}

describe('the logo over HTTP', () => {
  it('an admin uploads a PNG: stored under its hash, served by Kassa, audited', async () => {
    const uploaded = await logo(admin, 'PUT', PNG);
    expect(uploaded.status, uploaded.text).toBe(200);
    expect(uploaded.json()).toEqual({ logo_sha256: PNG_SHA256, logo_url: `/brand/logo/${PNG_SHA256}` });
    expect((await settings()).logo_sha256).toBe(PNG_SHA256);
    const served = await fetch(`${kassa.url}/brand/logo/${PNG_SHA256}`);
    expect(served.headers.get('content-type')).toBe('image/png');
    expect(Buffer.from(await served.arrayBuffer()).equals(PNG)).toBe(true);
    const audit = await dashboardRequest(
      kassa.url,
      'GET',
      `/dashboard/api/organisations/${shop.organisationId}/audit-log`,
      {
        cookie: owner.cookie,
      },
    );
    expect(audit.json<Array<Record<string, unknown>>>()[0]).toMatchObject({
      action: 'settings.updated',
      user_email: 'admin@logo-shop.example',
      details: { logo_sha256: PNG_SHA256 },
    });
  });

  it('refuses what the CLI refuses: SVG, other bytes, an empty body, over 100 KB; the logo stays', async () => {
    for (const body of [SVG, Buffer.from('GIF89a....'), Buffer.alloc(0)]) {
      const refused = await logo(admin, 'PUT', body);
      expect(refused.status, refused.text).toBe(400);
      expect(refused.json().message).toEqual(['logo must be a PNG or WebP image (SVG and other formats are refused)']);
    }
    const large = Buffer.concat([PNG, Buffer.alloc(100 * 1024)]);
    expect((await logo(admin, 'PUT', large)).status).toBe(413);
    expect((await settings()).logo_sha256).toBe(PNG_SHA256);
  });

  it('below admin is 403, another organisation 404, a cross-site or tokenless request 403', async () => {
    expect((await logo(developer, 'PUT', PNG)).status).toBe(403);
    expect((await logo(developer, 'DELETE')).status).toBe(403);
    expect((await logo(ownerOther, 'PUT', PNG)).status).toBe(404);
    expect((await logo(admin, 'PUT', PNG, { headers: { Origin: 'https://evil.example' } })).status).toBe(403);
    expect((await logo(admin, 'PUT', PNG, { headers: { 'X-CSRF-Token': 'wrong' } })).status).toBe(403);
    expect((await logo(ownerOther, 'PUT', PNG, { organisationId: other.organisationId })).status).toBe(200);
    expect((await settings()).logo_sha256).toBe(PNG_SHA256);
  });

  it('removing it clears it', async () => {
    const removed = await logo(owner, 'DELETE');
    expect(removed.status, removed.text).toBe(200);
    expect(removed.json()).toEqual({ logo_sha256: null, logo_url: null });
    expect((await settings()).logo_sha256).toBeNull();
  });
});

describe('the logo in Chromium', () => {
  it(
    'uploaded on the settings page, shown on the checkout page, removed again; axe clean',
    { timeout: 90_000 },
    async () => {
      browser = await launchBrowser({ width: 1280, height: 900 });
      const page = await browser.context.newPage();
      const problems: string[] = [];
      page.on('pageerror', (error) => problems.push(error.message));
      page.on('console', (message) => message.type() === 'error' && problems.push(message.text()));
      await page.goto(`${kassa.url}/dashboard/sign-in`);
      await page.fill('#email', 'admin@logo-shop.example');
      await page.fill('#password', DASHBOARD_PASSWORD);
      await Promise.all([page.waitForURL(`${kassa.url}/dashboard`), page.click('form button[type=submit]')]);
      await page.goto(`${kassa.url}/dashboard/settings?org=${shop.organisationId}`);
      await expect.poll(() => page.locator('#logo-current').innerText()).toContain('No logo');

      await page.setInputFiles('#logo-file', { name: 'logo.png', mimeType: 'image/png', buffer: PNG });
      await page.click('#logo-form button[type=submit]');
      await page.locator('#logo-current img').waitFor();
      expect(await page.getAttribute('#logo-current img', 'src')).toBe(`/brand/logo/${PNG_SHA256}`);
      expect(await page.locator('#logo-status').innerText()).toContain('Logo saved');
      await expect
        .poll(() => page.evaluate('document.querySelector("#logo-current img").naturalWidth'))
        .toBeGreaterThan(0);
      await page.evaluate(AXE_SOURCE);
      const violations = await page.evaluate<string[]>(`axe.run(document, { resultTypes: ['violations'] })
      .then((result) => result.violations.map((v) => v.id + ': ' + JSON.stringify(v.nodes.map((n) => n.target))))`);
      expect(violations).toEqual([]);

      const session = await createSession(kassa, shop, checkoutRequest());
      await page.goto(`${kassa.url}/pay/${session.session_id}`);
      const merchantLogo = page.locator('img.merchant-logo');
      await merchantLogo.waitFor();
      expect(await merchantLogo.getAttribute('src')).toBe(`/brand/logo/${PNG_SHA256}`);
      await expect
        .poll(() => page.evaluate('document.querySelector("img.merchant-logo").naturalWidth'))
        .toBeGreaterThan(0);

      await page.goto(`${kassa.url}/dashboard/settings?org=${shop.organisationId}`);
      await page.locator('#logo-current img').waitFor();
      await page.click('#logo-remove');
      await expect.poll(() => page.locator('#logo-current').innerText()).toContain('No logo');
      expect(await page.isHidden('#logo-remove')).toBe(true);
      expect((await settings()).logo_sha256).toBeNull();
      expect(problems).toEqual([]);
    },
  );
});
