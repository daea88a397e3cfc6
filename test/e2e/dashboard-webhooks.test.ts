import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkoutRequest } from '../factories/checkout-request.js';
import { createMerchant, type TestMerchant } from '../factories/merchant.js';
import { launchBrowser, type TestBrowser } from '../support/browser.js';
import {
  DASHBOARD_PASSWORD,
  dashboardMember,
  dashboardRequest,
  merchantGraphql,
  type DashboardMember,
} from '../support/dashboard-client.js';
import { startTestKassa, type TestKassa } from '../support/kassa.js';
import { createSession } from '../support/rest-kassa.js';
import { startWebhookReceiver, type WebhookReceiver } from '../support/webhook-receiver.js';
import { FAST_WEBHOOKS, signedRequest, startDeliveryLoop } from '../support/webhooks.js';

/**
 * The dashboard's webhooks (docs/dashboard.md#webhooks) over a real Kassa on PostgreSQL with real receivers: the
 * endpoints with their deliveries and what the receiver answered, "redeliver every failed one" by role (and the
 * audit log of it), another organisation's nothing; and the page in a real Chromium, English and German, axe clean.
 * Deliveries give up after a third of a second (KASSA_WEBHOOK_GIVE_UP_HOURS), so a receiver answering 500 fails them.
 */

const AXE_SOURCE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

const ENDPOINTS = `query Endpoints($org: ID!) {
  webhookEndpoints(organisationId: $org) {
    id url events enabled
    deliveries { id eventType status attempts httpStatus error responseExcerpt createdAt deliveredAt }
  }
}`;
const REDELIVER_FAILED = `mutation RedeliverFailed($org: ID!) {
  redeliverFailedWebhooks(organisationId: $org) { deliveryIds }
}`;

interface Endpoint {
  id: string;
  url: string;
  events: string[];
  enabled: boolean;
  deliveries: Array<{ id: string; status: string; httpStatus: number | null; responseExcerpt: string | null }>;
}

let kassa: TestKassa;
let loop: { stop(): Promise<void> };
let good: WebhookReceiver;
let bad: WebhookReceiver;
let shopA: TestMerchant;
let shopB: TestMerchant;
let owner: DashboardMember;
let viewer: DashboardMember;
let support: DashboardMember;
let ownerB: DashboardMember;
const endpointIds = { good: '', bad: '', disabled: '', other: '' };
let browser: TestBrowser | undefined;
let firstSessionId: string;

async function addEndpoint(shop: TestMerchant, url: string): Promise<string> {
  const created = await signedRequest(kassa, shop, 'post', '/webhook-endpoints', {
    url,
    events: ['checkout_session.created'],
  });
  expect(created.status, JSON.stringify(created.body)).toBe(201);
  return (created.body as { id: string }).id;
}

async function endpointsOf(member: DashboardMember, org: string): Promise<Endpoint[]> {
  const answer = await merchantGraphql<{ webhookEndpoints: Endpoint[] }>(kassa, member, ENDPOINTS, { org });
  expect(answer.errors, JSON.stringify(answer.errors)).toBeUndefined();
  return answer.data!.webhookEndpoints;
}

const statuses = async (member: DashboardMember, org: string) =>
  Object.fromEntries(
    (await endpointsOf(member, org)).map((e) => [e.id, e.deliveries.map((d) => d.status).join(',')] as const),
  );

/** Polls until `read` answers what `expected` is (as JSON), or throws with the last answer. */
async function settle<T>(read: () => Promise<T>, expected: T, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let last: T = await read();
  while (JSON.stringify(last) !== JSON.stringify(expected)) {
    if (Date.now() > deadline) throw new Error(`still ${JSON.stringify(last)}, expected ${JSON.stringify(expected)}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
    last = await read();
  }
}

beforeAll(async () => {
  kassa = await startTestKassa({ env: { ...FAST_WEBHOOKS, KASSA_WEBHOOK_GIVE_UP_HOURS: '0.0001' } });
  shopA = await createMerchant(kassa.ctx, { wallet: `0x${randomBytes(20).toString('hex')}`, name: 'Hook Shop' });
  shopB = await createMerchant(kassa.ctx, { wallet: `0x${randomBytes(20).toString('hex')}`, name: 'Other Shop' });
  good = await startWebhookReceiver();
  bad = await startWebhookReceiver();
  bad.fallback = { status: 500, body: 'down: database locked' };
  endpointIds.good = await addEndpoint(shopA, good.url);
  endpointIds.bad = await addEndpoint(shopA, bad.url);
  endpointIds.disabled = await addEndpoint(shopA, `${bad.url}?disabled`);
  endpointIds.other = await addEndpoint(shopB, bad.url);
  loop = startDeliveryLoop(kassa.ctx);
  firstSessionId = (await createSession(kassa, shopA, checkoutRequest())).session_id;
  await createSession(kassa, shopA, checkoutRequest());
  await createSession(kassa, shopB, checkoutRequest());
  owner = await dashboardMember(kassa, shopA.organisationId, 'owner@hook-shop.example', 'owner');
  viewer = await dashboardMember(kassa, shopA.organisationId, 'viewer@hook-shop.example', 'viewer');
  support = await dashboardMember(kassa, shopA.organisationId, 'support@hook-shop.example', 'support');
  ownerB = await dashboardMember(kassa, shopB.organisationId, 'owner@other-shop.example', 'owner');
  await settle(() => statuses(owner, shopA.organisationId), {
    [endpointIds.good]: 'succeeded,succeeded',
    [endpointIds.bad]: 'failed,failed',
    [endpointIds.disabled]: 'failed,failed',
  });
  await settle(() => statuses(ownerB, shopB.organisationId), { [endpointIds.other]: 'failed' });
  const disabled = await signedRequest(kassa, shopA, 'patch', `/webhook-endpoints/${endpointIds.disabled}`, {
    enabled: false,
  });
  expect(disabled.status, JSON.stringify(disabled.body)).toBe(200);
}, 120_000);

afterAll(async () => {
  await loop?.stop();
  await browser?.close();
  await good?.close();
  await bad?.close();
  await kassa?.close();
});

describe('webhooks over the merchant GraphQL API', () => {
  it('a viewer reads the endpoints with their deliveries and what the receiver answered, never a secret', async () => {
    const endpoints = await endpointsOf(viewer, shopA.organisationId);
    expect(endpoints.map((e) => e.id).sort()).toEqual([endpointIds.good, endpointIds.bad, endpointIds.disabled].sort());
    const failing = endpoints.find((e) => e.id === endpointIds.bad)!;
    expect(failing).toMatchObject({ url: bad.url, events: ['checkout_session.created'], enabled: true });
    expect(failing.deliveries[0]).toMatchObject({
      status: 'failed',
      httpStatus: 500,
      responseExcerpt: 'down: database locked',
    });
    const delivered = endpoints.find((e) => e.id === endpointIds.good)!;
    expect(delivered.deliveries[0]).toMatchObject({ status: 'succeeded', httpStatus: 200 });
    expect(endpoints.find((e) => e.id === endpointIds.disabled)!.enabled).toBe(false);
    const secret = await merchantGraphql(
      kassa,
      viewer,
      `query($org: ID!) { webhookEndpoints(organisationId: $org) { secret } }`,
      {
        org: shopA.organisationId,
      },
    );
    expect(secret.status).toBe(400);
  });

  it('a viewer may not redeliver; another organisation is not found, for reading and redelivering', async () => {
    const refused = await merchantGraphql(kassa, viewer, REDELIVER_FAILED, { org: shopA.organisationId });
    expect(refused.errors?.[0]?.extensions.code).toBe('FORBIDDEN');
    for (const query of [ENDPOINTS, REDELIVER_FAILED]) {
      const foreign = await merchantGraphql(kassa, ownerB, query, { org: shopA.organisationId });
      expect(foreign.errors?.[0]?.extensions.code).toBe('NOT_FOUND');
      expect(foreign.errors?.[0]?.message).toBe(`Organisation ${shopA.organisationId} not found`);
    }
    expect(await statuses(owner, shopA.organisationId)).toMatchObject({ [endpointIds.bad]: 'failed,failed' });
  });
});

async function expectAxeClean(page: Page, label: string): Promise<void> {
  await page.evaluate(AXE_SOURCE);
  const violations = await page.evaluate<string[]>(`axe.run(document, { resultTypes: ['violations'] })
    .then((result) => result.violations.map((v) => v.id + ': ' + JSON.stringify(v.nodes.map((n) => n.target))))`);
  expect(violations, `${label}: ${violations.join('\n')}`).toEqual([]);
}

async function signedInPage(email: string, viewport: { width: number; height: number }, locale = 'en') {
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
    if (url.protocol !== 'data:' && url.origin !== kassa.url) problems.push(`third-party: ${request.url()}`);
  });
  await page.goto(`${kassa.url}/dashboard/sign-in`);
  await page.fill('#email', email);
  await page.fill('#password', DASHBOARD_PASSWORD);
  await Promise.all([page.waitForURL(`${kassa.url}/dashboard`), page.click('button[type=submit]')]);
  return { page, problems };
}

describe('the webhooks page in Chromium', () => {
  for (const viewport of [
    { width: 1280, height: 900 },
    { width: 360, height: 740 },
  ]) {
    it(`shows the endpoints and their deliveries, axe clean (${viewport.width} px)`, { timeout: 60_000 }, async () => {
      const { page, problems } = await signedInPage('viewer@hook-shop.example', viewport);
      await page.goto(`${kassa.url}/dashboard/sessions?org=${shopA.organisationId}`);
      await Promise.all([page.waitForURL(/\/dashboard\/webhooks\?/), page.click('nav >> text=Webhooks')]);
      await expect.poll(() => page.locator('section.endpoint').count()).toBe(3);
      expect(await page.locator('h1').innerText()).toBe('Webhooks');
      const failing = page.locator('section.endpoint', { has: page.locator(`h2:text-is("${bad.url}")`) });
      expect(await failing.locator('tbody tr').first().innerText()).toMatch(
        /checkout_session\.created\s+Failed\s+\d+\s+500\s+down: database locked/,
      );
      // A viewer is not offered what it may not do.
      expect(await page.locator('#redeliver-failed').count()).toBe(0);
      expect(await page.locator('section.endpoint button').count()).toBe(0);
      await expectAxeClean(page, `webhooks at ${viewport.width}`);
      expect(problems).toEqual([]);
      await page.close();
    });
  }

  it("a session's timeline names a refused attempt's HTTP status once", { timeout: 60_000 }, async () => {
    const { page, problems } = await signedInPage('viewer@hook-shop.example', { width: 1280, height: 900 });
    await page.goto(`${kassa.url}/dashboard/sessions/${firstSessionId}?org=${shopA.organisationId}`);
    await page.locator('.timeline li').first().waitFor();
    const timeline = await page.locator('.timeline').innerText();
    expect(timeline).toContain('Webhook attempt · checkout_session.created #1 · HTTP 500');
    expect(timeline).not.toContain('HTTP 500 · HTTP 500');
    expect(problems).toEqual([]);
    await page.close();
  });

  it('speaks German', { timeout: 60_000 }, async () => {
    const { page, problems } = await signedInPage('owner@hook-shop.example', { width: 1280, height: 900 }, 'de');
    await page.goto(`${kassa.url}/dashboard/webhooks?org=${shopA.organisationId}`);
    await expect.poll(() => page.locator('section.endpoint').count()).toBe(3);
    expect(await page.getAttribute('html', 'lang')).toBe('de');
    expect(await page.locator('#redeliver-failed').innerText()).toBe(
      'Alle fehlgeschlagenen Zustellungen erneut senden',
    );
    expect(await page.locator('main').innerText()).toContain('Fehlgeschlagen');
    await expectAxeClean(page, 'German webhooks');
    expect(problems).toEqual([]);
    await page.close();
  });
});

describe('redelivering every failed delivery', () => {
  it('support queues the failed deliveries of enabled endpoints, once the receiver is back they arrive; audited', async () => {
    bad.fallback = { status: 200 };
    const { page, problems } = await signedInPage('support@hook-shop.example', { width: 1280, height: 900 });
    await page.goto(`${kassa.url}/dashboard/webhooks?org=${shopA.organisationId}`);
    await page.locator('#redeliver-failed').waitFor();
    // One Redeliver button per delivery: six of them on three endpoints.
    expect(await page.locator('section.endpoint button').count()).toBe(6);
    const before = await endpointsOf(support, shopA.organisationId);
    const failedIds = before.find((e) => e.id === endpointIds.bad)!.deliveries.map((d) => d.id);
    await page.click('#redeliver-failed');
    await expect.poll(() => page.locator('#redeliver-failed + span').innerText()).toBe('Queued again: 2');
    expect(problems).toEqual([]);
    await page.close();

    await expect
      .poll(() => statuses(support, shopA.organisationId), { timeout: 20_000 })
      .toEqual({
        [endpointIds.good]: 'succeeded,succeeded',
        [endpointIds.bad]: 'succeeded,succeeded',
        // A disabled endpoint's failed deliveries stay as they were.
        [endpointIds.disabled]: 'failed,failed',
      });
    // Another organisation's failed delivery is untouched.
    expect(await statuses(ownerB, shopB.organisationId)).toEqual({ [endpointIds.other]: 'failed' });
    // Nothing failed is left: the mutation queues nothing more.
    const again = await merchantGraphql(kassa, support, REDELIVER_FAILED, { org: shopA.organisationId });
    expect(again.data).toEqual({ redeliverFailedWebhooks: { deliveryIds: [] } });

    const audit = await dashboardRequest(
      kassa.url,
      'GET',
      `/dashboard/api/organisations/${shopA.organisationId}/audit-log`,
      {
        cookie: owner.cookie,
      },
    );
    const entries = audit.json() as unknown as Array<{ action: string; user_email: string | null; details: object }>;
    expect(entries.filter((e) => e.action === 'webhook.failed_redelivered')).toEqual([
      expect.objectContaining({ user_email: 'support@hook-shop.example', details: { count: 0 } }),
      expect.objectContaining({ user_email: 'support@hook-shop.example', details: { count: 2 } }),
    ]);
    expect(failedIds).toHaveLength(2);
  });
});
