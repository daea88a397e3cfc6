import { randomBytes } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { purgeDashboardRecords } from '../../src/domain/dashboard/purge.js';
import { checkoutRequest } from '../factories/checkout-request.js';
import { createMerchant, type TestMerchant } from '../factories/merchant.js';
import { launchBrowser, type TestBrowser } from '../support/browser.js';
import {
  DASHBOARD_PASSWORD,
  dashboardMember,
  merchantGraphql,
  type DashboardMember,
} from '../support/dashboard-client.js';
import { startTestKassa, type TestKassa } from '../support/kassa.js';
import { createSession } from '../support/rest-kassa.js';
import { FAST_WEBHOOKS, startDeliveryLoop } from '../support/webhooks.js';

/**
 * A receiver's whole answer (docs/dashboard.md#webhooks) over a real Kassa on PostgreSQL and a real receiver: kept up
 * to 64 KiB with its headers, cut past that with the size it declared, read over the merchant GraphQL API and shown
 * on the webhooks page; after 30 days only the first 1,024 bytes stay.
 */

const ANSWER = 'response responseTruncated responseSize responseHeaders { name value }';
const ADD = `mutation Add($org: ID!, $url: String!) {
  addWebhookEndpoint(organisationId: $org, url: $url) { endpoint { id } }
}`;
const ENDPOINTS = `query Endpoints($org: ID!) {
  webhookEndpoints(organisationId: $org) { id deliveries { id status responseExcerpt } }
}`;
const DELIVERY = `query Delivery($org: ID!, $id: ID!) {
  webhookDelivery(organisationId: $org, id: $id) { status requestBody attempts { attempt httpStatus ${ANSWER} } }
}`;
const TEST_EVENT = `mutation Test($org: ID!, $id: ID!) {
  sendWebhookTestEvent(organisationId: $org, id: $id) { httpStatus ${ANSWER} }
}`;

const KIB = 1024;
/** What the receiver answers next: a body of this many bytes (ASCII, a marker at the end). */
let answerBytes = 5 * KIB;
const bodyOf = (bytes: number) => 'a'.repeat(bytes - 4) + 'END.';

let kassa: TestKassa;
let loop: { stop(): Promise<void> };
let receiver: Server;
let receiverUrl: string;
let shop: TestMerchant;
let owner: DashboardMember;
let endpointId = '';
let browser: TestBrowser | undefined;

beforeAll(async () => {
  kassa = await startTestKassa({ env: { ...FAST_WEBHOOKS } });
  shop = await createMerchant(kassa.ctx, { wallet: `0x${randomBytes(20).toString('hex')}`, name: 'Answer Shop' });
  receiver = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      const body = bodyOf(answerBytes);
      res.writeHead(200, {
        'Content-Type': 'text/plain; charset=utf-8',
        'Content-Length': String(Buffer.byteLength(body)),
        'X-Receiver': 'answer-shop',
        'Set-Cookie': ['a=1', 'b=2'],
      });
      res.end(body);
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  receiverUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hooks`;
  loop = startDeliveryLoop(kassa.ctx);
  owner = await dashboardMember(kassa, shop.organisationId, 'owner@answer-shop.example', 'owner');
  const added = await merchantGraphql(kassa, owner, ADD, { org: shop.organisationId, url: receiverUrl });
  expect(added.errors, JSON.stringify(added.errors)).toBeUndefined();
  endpointId = added.data!.addWebhookEndpoint.endpoint.id;
}, 120_000);

afterAll(async () => {
  await loop?.stop();
  await browser?.close();
  await new Promise((resolve) => receiver?.close(resolve));
  await kassa?.close();
});

/** Creates a session, waits for its delivery to succeed, answers the delivery's detail. */
async function deliveredAnswer(bytes: number): Promise<{ id: string; detail: Record<string, any> }> {
  answerBytes = bytes;
  const session = await createSession(kassa, shop, checkoutRequest());
  let id = '';
  await expect
    .poll(
      async () => {
        const listed = await merchantGraphql(kassa, owner, ENDPOINTS, { org: shop.organisationId });
        const deliveries = listed.data!.webhookEndpoints[0].deliveries as Array<{ id: string; status: string }>;
        for (const delivery of deliveries) {
          const answer = await merchantGraphql(kassa, owner, DELIVERY, { org: shop.organisationId, id: delivery.id });
          const detail = answer.data!.webhookDelivery;
          if (detail.status === 'succeeded' && detail.requestBody.includes(session.session_id)) id = delivery.id;
        }
        return id;
      },
      { timeout: 20_000 },
    )
    .not.toBe('');
  const answer = await merchantGraphql(kassa, owner, DELIVERY, { org: shop.organisationId, id });
  return { id, detail: answer.data!.webhookDelivery };
}

const header = (name: string, value: string) => ({ name, value });

describe("a receiver's whole answer", () => {
  let smallId = '';

  it('an answer within 64 KiB is kept whole, with its headers; the list keeps its short excerpt', async () => {
    const { id, detail } = await deliveredAnswer(5 * KIB);
    smallId = id;
    const attempt = detail.attempts[0];
    expect(attempt.response).toBe(bodyOf(5 * KIB));
    expect(attempt).toMatchObject({ httpStatus: 200, responseTruncated: false, responseSize: 5 * KIB });
    expect(attempt.responseHeaders).toEqual(
      expect.arrayContaining([
        header('x-receiver', 'answer-shop'),
        header('set-cookie', 'a=1, b=2'),
        header('content-type', 'text/plain; charset=utf-8'),
      ]),
    );
    const listed = await merchantGraphql(kassa, owner, ENDPOINTS, { org: shop.organisationId });
    const row = listed.data!.webhookEndpoints[0].deliveries.find((d: { id: string }) => d.id === id);
    expect(row.responseExcerpt).toBe('a'.repeat(500));
  });

  it('an answer past 64 KiB is cut there, marked truncated, with the size it declared', async () => {
    const { detail } = await deliveredAnswer(100 * KIB);
    const attempt = detail.attempts[0];
    expect(attempt.response).toHaveLength(64 * KIB);
    expect(attempt.response).toBe(bodyOf(100 * KIB).slice(0, 64 * KIB));
    expect(attempt).toMatchObject({ responseTruncated: true, responseSize: 100 * KIB });
  });

  it('a test event answers the whole answer and its headers too', async () => {
    answerBytes = 3 * KIB;
    const sent = await merchantGraphql(kassa, owner, TEST_EVENT, { org: shop.organisationId, id: endpointId });
    expect(sent.errors, JSON.stringify(sent.errors)).toBeUndefined();
    expect(sent.data!.sendWebhookTestEvent).toMatchObject({
      httpStatus: 200,
      response: bodyOf(3 * KIB),
      responseTruncated: false,
      responseSize: 3 * KIB,
    });
    expect(sent.data!.sendWebhookTestEvent.responseHeaders).toContainEqual(header('x-receiver', 'answer-shop'));
  });

  it('after 30 days the hourly clean-up leaves the first 1,024 bytes and the size; newer answers stay', async () => {
    const prisma = kassa.runtime.db.prisma;
    const old = new Date(Date.now() - 31 * 86_400_000);
    await prisma.webhookDeliveryAttempt.updateMany({ where: { deliveryId: smallId }, data: { createdAt: old } });
    await purgeDashboardRecords(kassa.ctx);
    const cleared = await prisma.webhookDeliveryAttempt.findFirstOrThrow({ where: { deliveryId: smallId } });
    expect(cleared).toMatchObject({ responseBody: null, responseHeaders: null, responseTruncated: true });
    const answer = await merchantGraphql(kassa, owner, DELIVERY, { org: shop.organisationId, id: smallId });
    expect(answer.data!.webhookDelivery.attempts[0]).toEqual({
      attempt: 1,
      httpStatus: 200,
      response: 'a'.repeat(KIB),
      responseTruncated: true,
      responseSize: 5 * KIB,
      responseHeaders: null,
    });
    const kept = await prisma.webhookDeliveryAttempt.count({
      where: { deliveryId: { not: smallId }, responseBody: { not: null } },
    });
    expect(kept).toBe(1);
  });

  it('the webhooks page shows the whole answer, the cut note and the headers', { timeout: 90_000 }, async () => {
    browser = await launchBrowser({ width: 1280, height: 900 });
    const page = await browser.context.newPage();
    const problems: string[] = [];
    page.on('pageerror', (error) => problems.push(error.message));
    await page.goto(`${kassa.url}/dashboard/sign-in`);
    await page.fill('#email', 'owner@answer-shop.example');
    await page.fill('#password', DASHBOARD_PASSWORD);
    await Promise.all([page.waitForURL(`${kassa.url}/dashboard`), page.click('form button[type=submit]')]);
    await page.goto(`${kassa.url}/dashboard/webhooks?org=${shop.organisationId}`);
    const details = page.locator('details:has(> summary:text-is("Request and response"))');
    await details.first().waitFor();
    // Newest first: the test event is not stored, so the first delivery is the 100 KiB answer.
    await details.first().locator('summary').click();
    const attempt = details.first().locator('ol.attempts li').first();
    await attempt.waitFor();
    expect((await attempt.locator('pre').first().innerText()).length).toBe(64 * KIB);
    expect(await attempt.innerText()).toContain('only the first 64 KiB of this answer are kept. It had 102400 bytes.');
    await attempt.locator('details.headers summary').click();
    expect(await attempt.locator('details.headers pre').innerText()).toContain('x-receiver: answer-shop');
    expect(problems).toEqual([]);
  });
});
