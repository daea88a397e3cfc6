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
import { signatureValid, startWebhookReceiver, type WebhookReceiver } from '../support/webhook-receiver.js';
import { FAST_WEBHOOKS, startDeliveryLoop } from '../support/webhooks.js';

/**
 * Managing webhook endpoints in the dashboard (docs/dashboard.md#webhooks) over a real Kassa on PostgreSQL with a
 * real receiver: add (the secret shown once signs what arrives), disable, enable, rotate, by role and audited; a
 * delivery's request body and every attempt's answer; another organisation's nothing; and the page in Chromium.
 */

const AXE_SOURCE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

const ADD = `mutation Add($org: ID!, $url: String!, $events: [String!]) {
  addWebhookEndpoint(organisationId: $org, url: $url, events: $events) {
    endpoint { id url events enabled } secret previousSecretExpiresAt
  }
}`;
const SET_ENABLED = `mutation SetEnabled($org: ID!, $id: ID!, $enabled: Boolean!) {
  setWebhookEndpointEnabled(organisationId: $org, id: $id, enabled: $enabled) { endpoint { id enabled } secret }
}`;
const ROTATE = `mutation Rotate($org: ID!, $id: ID!) {
  rotateWebhookSecret(organisationId: $org, id: $id) { endpoint { id } secret previousSecretExpiresAt }
}`;
const TEST_EVENT = `mutation Test($org: ID!, $id: ID!) {
  sendWebhookTestEvent(organisationId: $org, id: $id) { requestBody httpStatus latencyMs error response }
}`;
const ENDPOINTS = `query Endpoints($org: ID!) {
  webhookEndpoints(organisationId: $org) { id url enabled deliveries { id status } }
}`;
const DELIVERY = `query Delivery($org: ID!, $id: ID!) {
  webhookDelivery(organisationId: $org, id: $id) {
    id endpointId eventType status requestBody attempts { attempt httpStatus latencyMs error response at }
  }
}`;

let kassa: TestKassa;
let loop: { stop(): Promise<void> };
let receiver: WebhookReceiver;
let shopA: TestMerchant;
let shopB: TestMerchant;
let developer: DashboardMember;
let support: DashboardMember;
let owner: DashboardMember;
let ownerB: DashboardMember;
let browser: TestBrowser | undefined;

beforeAll(async () => {
  kassa = await startTestKassa({ env: { ...FAST_WEBHOOKS } });
  shopA = await createMerchant(kassa.ctx, { wallet: `0x${randomBytes(20).toString('hex')}`, name: 'Hook Admin' });
  shopB = await createMerchant(kassa.ctx, { wallet: `0x${randomBytes(20).toString('hex')}`, name: 'Elsewhere' });
  receiver = await startWebhookReceiver();
  receiver.fallback = { status: 202, body: 'x'.repeat(700) + ' the end' };
  loop = startDeliveryLoop(kassa.ctx);
  developer = await dashboardMember(kassa, shopA.organisationId, 'dev@hook-admin.example', 'developer');
  support = await dashboardMember(kassa, shopA.organisationId, 'support@hook-admin.example', 'support');
  owner = await dashboardMember(kassa, shopA.organisationId, 'owner@hook-admin.example', 'owner');
  ownerB = await dashboardMember(kassa, shopB.organisationId, 'owner@elsewhere.example', 'owner');
}, 120_000);

afterAll(async () => {
  await loop?.stop();
  await browser?.close();
  await receiver?.close();
  await kassa?.close();
});

async function auditActions(): Promise<Array<{ action: string; user_email: string | null; details: object }>> {
  const audit = await dashboardRequest(
    kassa.url,
    'GET',
    `/dashboard/api/organisations/${shopA.organisationId}/audit-log`,
    { cookie: owner.cookie },
  );
  expect(audit.status, audit.text).toBe(200);
  return audit.json();
}

describe('managing endpoints over the merchant GraphQL API', () => {
  let endpointId = '';
  let secret = '';

  it('a developer adds an endpoint; the secret, shown once, signs what arrives; audited', async () => {
    const added = await merchantGraphql(kassa, developer, ADD, {
      org: shopA.organisationId,
      url: receiver.url,
      events: ['checkout_session.created'],
    });
    expect(added.errors, JSON.stringify(added.errors)).toBeUndefined();
    const change = added.data!.addWebhookEndpoint;
    expect(change).toMatchObject({
      endpoint: { url: receiver.url, events: ['checkout_session.created'], enabled: true },
      previousSecretExpiresAt: null,
    });
    expect(change.secret).toMatch(/^whsec_[0-9a-f]{64}$/);
    endpointId = change.endpoint.id;
    secret = change.secret;

    await createSession(kassa, shopA, checkoutRequest());
    const hook = await receiver.waitFor((got) => got.some((h) => h.body.type === 'checkout_session.created'));
    expect(signatureValid(secret, hook.at(-1)!.headers, hook.at(-1)!.rawBody)).toBe(true);
    // The secret is never read back.
    const listed = await merchantGraphql(kassa, developer, ENDPOINTS, { org: shopA.organisationId });
    expect(JSON.stringify(listed.data)).not.toContain(secret);
    expect((await auditActions())[0]).toMatchObject({
      action: 'webhook_endpoint.added',
      user_email: 'dev@hook-admin.example',
      details: { endpoint_id: endpointId, url: receiver.url },
    });
  });

  it("refuses a bad URL or event with the REST API's rules", async () => {
    const bad = await merchantGraphql(kassa, developer, ADD, {
      org: shopA.organisationId,
      url: 'ftp://example.com/hook',
      events: ['no.such.event'],
    });
    expect(bad.errors?.[0]?.extensions.code).toBe('BAD_USER_INPUT');
    expect(bad.errors?.[0]?.message).toMatch(/url/);
  });

  it("shows a delivery's request body and every attempt's answer", async () => {
    const listed = await merchantGraphql(kassa, support, ENDPOINTS, { org: shopA.organisationId });
    const deliveryId = listed.data!.webhookEndpoints[0].deliveries[0].id as string;
    await expect
      .poll(async () => {
        const answer = await merchantGraphql(kassa, support, DELIVERY, { org: shopA.organisationId, id: deliveryId });
        return answer.data?.webhookDelivery.status;
      })
      .toBe('succeeded');
    const answer = await merchantGraphql(kassa, support, DELIVERY, { org: shopA.organisationId, id: deliveryId });
    const detail = answer.data!.webhookDelivery;
    expect(detail).toMatchObject({ id: deliveryId, endpointId, eventType: 'checkout_session.created' });
    // The body every attempt sent, byte for byte.
    expect(detail.requestBody).toBe(receiver.received.at(-1)!.rawBody);
    expect(detail.attempts).toEqual([
      expect.objectContaining({ attempt: 1, httpStatus: 202, error: null, response: 'x'.repeat(700) + ' the end' }),
    ]);
    const foreign = await merchantGraphql(kassa, ownerB, DELIVERY, { org: shopB.organisationId, id: deliveryId });
    expect(foreign.errors?.[0]?.extensions.code).toBe('NOT_FOUND');
  });

  it('a developer sends a signed test event and sees the answer; nothing is stored; audited', async () => {
    const before = receiver.received.length;
    const deliveriesBefore = await merchantGraphql(kassa, developer, ENDPOINTS, { org: shopA.organisationId });
    const sent = await merchantGraphql(kassa, developer, TEST_EVENT, { org: shopA.organisationId, id: endpointId });
    expect(sent.errors, JSON.stringify(sent.errors)).toBeUndefined();
    const result = sent.data!.sendWebhookTestEvent;
    expect(result).toMatchObject({ httpStatus: 202, error: null, response: 'x'.repeat(700) + ' the end' });
    const hook = receiver.received[before]!;
    expect(hook.body).toMatchObject({
      type: 'kassa.test',
      data: { endpoint_id: endpointId, organisation_id: shopA.organisationId },
    });
    expect(hook.rawBody).toBe(result.requestBody);
    expect(signatureValid(secret, hook.headers, hook.rawBody)).toBe(true);
    const deliveriesAfter = await merchantGraphql(kassa, developer, ENDPOINTS, { org: shopA.organisationId });
    expect(deliveriesAfter.data).toEqual(deliveriesBefore.data);
    expect((await auditActions())[0]).toMatchObject({
      action: 'webhook_endpoint.test_sent',
      details: { endpoint_id: endpointId, http_status: 202 },
    });
    const refused = await merchantGraphql(kassa, support, TEST_EVENT, { org: shopA.organisationId, id: endpointId });
    expect(refused.errors?.[0]?.extensions.code).toBe('FORBIDDEN');
    const foreign = await merchantGraphql(kassa, ownerB, TEST_EVENT, { org: shopB.organisationId, id: endpointId });
    expect(foreign.errors?.[0]?.extensions.code).toBe('NOT_FOUND');
    expect(receiver.received.length).toBe(before + 1);
  });

  it('support may not add, disable or rotate; another organisation is not found', async () => {
    for (const [query, variables] of [
      [ADD, { url: receiver.url }],
      [SET_ENABLED, { id: endpointId, enabled: false }],
      [ROTATE, { id: endpointId }],
    ] as const) {
      const refused = await merchantGraphql(kassa, support, query, { org: shopA.organisationId, ...variables });
      expect(refused.errors?.[0]?.extensions.code).toBe('FORBIDDEN');
      const foreign = await merchantGraphql(kassa, ownerB, query, { org: shopA.organisationId, ...variables });
      expect(foreign.errors?.[0]?.extensions.code).toBe('NOT_FOUND');
    }
    // Its own organisation named, another's endpoint: not found either.
    const crossed = await merchantGraphql(kassa, ownerB, ROTATE, { org: shopB.organisationId, id: endpointId });
    expect(crossed.errors?.[0]?.extensions.code).toBe('NOT_FOUND');
  });

  it('a developer disables and enables an endpoint and rotates its secret; audited', async () => {
    const off = await merchantGraphql(kassa, developer, SET_ENABLED, {
      org: shopA.organisationId,
      id: endpointId,
      enabled: false,
    });
    expect(off.data).toEqual({
      setWebhookEndpointEnabled: { endpoint: { id: endpointId, enabled: false }, secret: null },
    });
    const on = await merchantGraphql(kassa, developer, SET_ENABLED, {
      org: shopA.organisationId,
      id: endpointId,
      enabled: true,
    });
    expect(on.data!.setWebhookEndpointEnabled.endpoint.enabled).toBe(true);
    const rotated = await merchantGraphql(kassa, developer, ROTATE, { org: shopA.organisationId, id: endpointId });
    const change = rotated.data!.rotateWebhookSecret;
    expect(change.secret).toMatch(/^whsec_[0-9a-f]{64}$/);
    expect(change.secret).not.toBe(secret);
    expect(Date.parse(change.previousSecretExpiresAt)).toBeGreaterThan(Date.now());

    // The next delivery is signed with the new secret (and the old one, for the overlap).
    const before = receiver.received.length;
    await createSession(kassa, shopA, checkoutRequest());
    const got = await receiver.waitFor((all) => all.length > before);
    expect(signatureValid(change.secret, got.at(-1)!.headers, got.at(-1)!.rawBody)).toBe(true);
    expect(signatureValid(secret, got.at(-1)!.headers, got.at(-1)!.rawBody)).toBe(true);

    const actions = (await auditActions()).map((entry) => entry.action);
    expect(actions.slice(0, 3)).toEqual([
      'webhook_endpoint.secret_rotated',
      'webhook_endpoint.enabled',
      'webhook_endpoint.disabled',
    ]);
  });
});

async function expectAxeClean(page: Page, label: string): Promise<void> {
  await page.evaluate(AXE_SOURCE);
  const violations = await page.evaluate<string[]>(`axe.run(document, { resultTypes: ['violations'] })
    .then((result) => result.violations.map((v) => v.id + ': ' + JSON.stringify(v.nodes.map((n) => n.target))))`);
  expect(violations, `${label}: ${violations.join('\n')}`).toEqual([]);
}

describe('the webhooks page for a developer', () => {
  it(
    'adds an endpoint, shows its secret once, disables it and opens a delivery; axe clean',
    { timeout: 60_000 },
    async () => {
      browser ??= await launchBrowser();
      const page = await browser.context.newPage();
      await page.setViewportSize({ width: 1280, height: 900 });
      const problems: string[] = [];
      page.on('pageerror', (error) => problems.push(`page error: ${error.message}`));
      page.on('console', (message) => {
        if (message.type() === 'error') problems.push(`console: ${message.text()}`);
      });
      await page.goto(`${kassa.url}/dashboard/sign-in`);
      await page.fill('#email', 'dev@hook-admin.example');
      await page.fill('#password', DASHBOARD_PASSWORD);
      await Promise.all([page.waitForURL(`${kassa.url}/dashboard`), page.click('button[type=submit]')]);
      await page.goto(`${kassa.url}/dashboard/webhooks?org=${shopA.organisationId}`);
      await expect.poll(() => page.locator('section.endpoint').count()).toBe(1);

      await page.fill('#endpoint-url', `${receiver.url}/second`);
      await page.check('input[value="checkout_session.paid"]');
      await page.click('#add-endpoint button[type=submit]');
      await expect.poll(() => page.locator('section.endpoint').count()).toBe(2);
      await expect
        .poll(() => page.locator('#endpoint-secret').innerText())
        .toMatch(/shown only now: whsec_[0-9a-f]{64}/);
      const second = page.locator('section.endpoint', { has: page.locator(`h2:text-is("${receiver.url}/second")`) });
      expect(await second.innerText()).toContain('checkout_session.paid');
      await second.locator('button', { hasText: 'Disable' }).click();
      await expect.poll(() => second.locator('p').first().innerText()).toContain('Disabled');

      const first = page.locator('section.endpoint', { has: page.locator(`h2:text-is("${receiver.url}")`) });
      await first.locator('button', { hasText: 'Send a test event' }).click();
      await expect
        .poll(() => first.locator('.actions [role=status]').innerText())
        .toContain('Test event answered: HTTP 202');
      await first.locator('summary').first().click();
      await expect.poll(() => first.locator('details pre').count()).toBeGreaterThan(1);
      expect(await first.locator('details pre').first().innerText()).toContain('"type": "checkout_session.created"');
      await expectAxeClean(page, 'webhooks for a developer');
      expect(problems).toEqual([]);
      await page.close();
    },
  );
});
