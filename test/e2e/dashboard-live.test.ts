import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { disableUser } from '../../src/domain/dashboard/users.js';
import { checkoutRequest } from '../factories/checkout-request.js';
import { createMerchant, type TestMerchant } from '../factories/merchant.js';
import { launchBrowser, type TestBrowser } from '../support/browser.js';
import { DASHBOARD_PASSWORD, dashboardMember, type DashboardMember } from '../support/dashboard-client.js';
import { startTestKassa, type TestKassa } from '../support/kassa.js';
import { createSession } from '../support/rest-kassa.js';

/**
 * Live updates of the dashboard (docs/dashboard.md#live-updates) over a real Kassa on PostgreSQL (its LISTEN change
 * feed): the stream names the organisation's changed sessions and never another's, ends for a disabled account, and
 * the sessions list and a session's page in Chromium change without a reload.
 */

let kassa: TestKassa;
let shopA: TestMerchant;
let shopB: TestMerchant;
let ownerA: DashboardMember;
let ownerB: DashboardMember;
let browser: TestBrowser | undefined;

beforeAll(async () => {
  kassa = await startTestKassa();
  shopA = await createMerchant(kassa.ctx, { wallet: `0x${randomBytes(20).toString('hex')}`, name: 'Live A' });
  shopB = await createMerchant(kassa.ctx, { wallet: `0x${randomBytes(20).toString('hex')}`, name: 'Live B' });
  ownerA = await dashboardMember(kassa, shopA.organisationId, 'owner@live-a.example', 'owner');
  ownerB = await dashboardMember(kassa, shopB.organisationId, 'owner@live-b.example', 'owner');
  // The feed hears changes once its LISTEN connection is up.
  const deadline = Date.now() + 20_000;
  while (!kassa.runtime.changes.live && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20));
  expect(kassa.runtime.changes.live).toBe(true);
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await kassa?.close();
});

/** An open event stream: the events read so far, and whether the server ended it. */
async function openStream(member: DashboardMember, organisationId: string) {
  const abort = new AbortController();
  const response = await fetch(`${kassa.url}/dashboard/api/organisations/${organisationId}/live`, {
    headers: { Cookie: member.cookie },
    signal: abort.signal,
  });
  const events: Array<{ event: string; data: string }> = [];
  const stream = { status: response.status, events, ended: false, close: () => abort.abort() };
  if (response.status !== 200) return stream;
  const reader = response.body!.pipeThrough(new TextDecoderStream()).getReader();
  void (async () => {
    let buffer = '';
    try {
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        buffer += value;
        let end: number;
        while ((end = buffer.indexOf('\n\n')) >= 0) {
          const block = buffer.slice(0, end);
          buffer = buffer.slice(end + 2);
          const event = /^event: (.*)$/m.exec(block)?.[1];
          const data = /^data: (.*)$/m.exec(block)?.[1];
          if (event && data !== undefined) events.push({ event, data });
        }
      }
    } catch {
      // Aborted by the test.
    }
    stream.ended = true;
  })();
  return stream;
}

const named = (events: Array<{ event: string; data: string }>) =>
  events.filter((e) => e.event === 'sessions').flatMap((e) => JSON.parse(e.data) as string[]);

describe('the live stream', () => {
  it("names the organisation's changed sessions and never another organisation's", async () => {
    const stream = await openStream(ownerA, shopA.organisationId);
    expect(stream.status).toBe(200);
    const theirs = (await createSession(kassa, shopB, checkoutRequest())).session_id;
    const ours = (await createSession(kassa, shopA, checkoutRequest())).session_id;
    await expect.poll(() => named(stream.events), { timeout: 10_000 }).toContain(ours);
    // Both changes were announced before ours was told; theirs was filtered out.
    const later = (await createSession(kassa, shopA, checkoutRequest())).session_id;
    await expect.poll(() => named(stream.events), { timeout: 10_000 }).toContain(later);
    expect(named(stream.events)).not.toContain(theirs);
    stream.close();
  });

  it('is refused for an organisation one does not belong to, and without a session', async () => {
    const foreign = await openStream(ownerB, shopA.organisationId);
    expect(foreign.status).toBe(404);
    const anonymous = await fetch(`${kassa.url}/dashboard/api/organisations/${shopA.organisationId}/live`);
    expect(anonymous.status).toBe(401);
  });

  it('ends at the next change once the account is disabled, naming nothing more', async () => {
    const member = await dashboardMember(kassa, shopA.organisationId, 'viewer@live-a.example', 'viewer');
    const stream = await openStream(member, shopA.organisationId);
    expect(stream.status).toBe(200);
    await disableUser(kassa.ctx, 'viewer@live-a.example');
    const after = (await createSession(kassa, shopA, checkoutRequest())).session_id;
    await expect.poll(() => stream.ended, { timeout: 10_000 }).toBe(true);
    expect(named(stream.events)).not.toContain(after);
  });
});

describe('the pages', () => {
  it('the sessions list and a session page change without a reload', { timeout: 90_000 }, async () => {
    browser ??= await launchBrowser();
    const page = await browser.context.newPage();
    const problems: string[] = [];
    page.on('pageerror', (error) => problems.push(`page error: ${error.message}`));
    page.on('console', (message) => {
      if (message.type() === 'error') problems.push(`console: ${message.text()}`);
    });
    await page.goto(`${kassa.url}/dashboard/sign-in`);
    await page.fill('#email', 'owner@live-a.example');
    await page.fill('#password', DASHBOARD_PASSWORD);
    await Promise.all([page.waitForURL(`${kassa.url}/dashboard`), page.click('button[type=submit]')]);
    await page.goto(`${kassa.url}/dashboard/sessions?org=${shopA.organisationId}`);
    await page.locator('tbody tr').first().waitFor();
    const rowsBefore = await page.locator('tbody tr').count();

    const fresh = (await createSession(kassa, shopA, checkoutRequest())).session_id;
    await expect.poll(() => page.locator(`a[href*="${fresh}"]`).count(), { timeout: 15_000 }).toBe(1);
    expect(await page.locator('tbody tr').count()).toBe(rowsBefore + 1);

    await page.goto(`${kassa.url}/dashboard/sessions/${fresh}?org=${shopA.organisationId}`);
    await page.locator('.timeline li').first().waitFor();
    // Any change of the session row is announced (a payment's is one of them).
    await kassa.runtime.db.prisma.checkoutSession.update({
      where: { id: fresh },
      data: { metadata: { note: 'changed live' } },
    });
    await expect.poll(() => page.locator('main').innerText(), { timeout: 15_000 }).toContain('changed live');
    expect(problems).toEqual([]);
    await page.close();
  });
});
