import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import type { CDPSession, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { disableUser } from '../../src/domain/dashboard/users.js';
import { passkeysOfAccount, removePasskeyAsOperator } from '../../src/domain/dashboard/passkeys.js';
import { createMerchant, type TestMerchant } from '../factories/merchant.js';
import { launchBrowser, type TestBrowser } from '../support/browser.js';
import {
  DASHBOARD_PASSWORD,
  dashboardMember,
  dashboardRequest,
  type DashboardMember,
} from '../support/dashboard-client.js';
import { startTestKassa, type TestKassa } from '../support/kassa.js';

/**
 * Passkeys (docs/dashboard.md#passkeys) in a real Chromium with a CDP virtual authenticator, against a real Kassa on
 * PostgreSQL: register, sign out, sign in with the passkey; then over HTTP a replayed and an expired challenge, an
 * unregistered credential, another person's passkey, a disabled account, the sign-in throttle, and removal.
 */

const AXE_SOURCE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');
const ADA = 'ada@passkey-shop.example';
const BOB = 'bob@passkey-shop.example';

let kassa: TestKassa;
let shop: TestMerchant;
let origin: string;
let owner: DashboardMember;
let browser: TestBrowser;
let page: Page;
let cdp: CDPSession;
let authenticatorId: string;
let skewMs = 0;
const problems: string[] = [];

beforeAll(async () => {
  kassa = await startTestKassa({ clock: () => new Date(Date.now() + skewMs) });
  // WebAuthn wants a host name, not an IP: the public address is localhost on the port the server got.
  origin = kassa.url.replace('127.0.0.1', 'localhost');
  (kassa.ctx as { checkoutBaseUrl: string }).checkoutBaseUrl = origin;
  shop = await createMerchant(kassa.ctx, { name: 'Passkey Shop' });
  owner = await dashboardMember(kassa, shop.organisationId, 'owner@passkey-shop.example', 'owner');
  await dashboardMember(kassa, shop.organisationId, ADA, 'viewer');
  await dashboardMember(kassa, shop.organisationId, BOB, 'viewer');
  browser = await launchBrowser({ width: 1280, height: 900 });
  page = await browser.context.newPage();
  page.on('pageerror', (error) => problems.push(`page error: ${error.message}`));
  page.on('console', (message) => {
    if (message.type() === 'error') problems.push(`console: ${message.text()}`);
  });
  page.on('request', (request) => {
    if (new URL(request.url()).origin !== origin) problems.push(`third-party: ${request.url()}`);
  });
  cdp = await browser.context.newCDPSession(page);
  await cdp.send('WebAuthn.enable', { enableUI: false });
  ({ authenticatorId } = await cdp.send('WebAuthn.addVirtualAuthenticator', {
    options: {
      protocol: 'ctap2',
      transport: 'internal',
      hasResidentKey: true,
      hasUserVerification: true,
      isUserVerified: true,
      automaticPresenceSimulation: true,
    },
  }));
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await kassa?.close();
});

async function signInWithPassword(email: string): Promise<void> {
  await page.goto(`${origin}/dashboard/sign-in`);
  await page.fill('#email', email);
  await page.fill('#password', DASHBOARD_PASSWORD);
  await Promise.all([page.waitForURL(`${origin}/dashboard`), page.click('form button[type=submit]')]);
}

async function addPasskey(name: string): Promise<void> {
  await page.goto(`${origin}/dashboard/account`);
  await page.fill('#passkey-name', name);
  await Promise.all([page.waitForEvent('load'), page.click('#add-passkey button[type=submit]')]);
  await expect.poll(() => page.locator('#passkeys tbody').innerText()).toContain(name);
}

/** The credential id (base64url) the virtual authenticator holds for the account with this user id. */
async function credentialIdOf(userId: string): Promise<string> {
  const { credentials } = await cdp.send('WebAuthn.getCredentials', { authenticatorId });
  const mine = credentials.find((c) => Buffer.from(c.userHandle ?? '', 'base64').toString('utf8') === userId);
  expect(mine, `a credential for ${userId}`).toBeDefined();
  return Buffer.from(mine!.credentialId, 'base64').toString('base64url');
}

/**
 * A signed assertion made in the page over `challenge` (from Kassa's sign-in options unless given) with the credential
 * `credentialId`, as the page's script sends it; nothing is posted.
 */
function assertion(credentialId: string, challenge?: string): Promise<Record<string, unknown>> {
  return page.evaluate(
    async ({ credentialId, challenge }) => {
      const bytes = (text: string) =>
        Uint8Array.from(atob(text.replace(/-/g, '+').replace(/_/g, '/')), (c) => c.charCodeAt(0));
      const text = (buffer: ArrayBuffer) =>
        btoa(String.fromCharCode(...new Uint8Array(buffer)))
          .replace(/\+/g, '-')
          .replace(/\//g, '_')
          .replace(/=+$/, '');
      let wanted = challenge;
      if (!wanted) {
        const options = await fetch('/dashboard/passkeys/sign-in-options', {
          method: 'POST',
          headers: { 'Content-Type': 'application/json' },
          body: '{}',
        });
        wanted = ((await options.json()) as { challenge: string }).challenge;
      }
      const credential = (await (globalThis as any).navigator.credentials.get({
        publicKey: {
          challenge: bytes(wanted),
          rpId: 'localhost',
          allowCredentials: [{ type: 'public-key', id: bytes(credentialId) }],
          userVerification: 'preferred',
        },
      })) as { id: string; rawId: ArrayBuffer; type: string; response: any };
      const response = credential.response;
      return {
        id: credential.id,
        rawId: text(credential.rawId),
        type: credential.type,
        response: {
          clientDataJSON: text(response.clientDataJSON),
          authenticatorData: text(response.authenticatorData),
          signature: text(response.signature),
          ...(response.userHandle ? { userHandle: text(response.userHandle) } : {}),
        },
        clientExtensionResults: {},
      };
    },
    { credentialId, challenge },
  );
}

const postAssertion = (credential: unknown) =>
  dashboardRequest(kassa.url, 'POST', '/dashboard/passkeys/sign-in', { json: { credential } });

async function auditActions(): Promise<string[]> {
  const audit = await dashboardRequest(
    kassa.url,
    'GET',
    `/dashboard/api/organisations/${shop.organisationId}/audit-log`,
    {
      cookie: owner.cookie,
    },
  );
  expect(audit.status, audit.text).toBe(200);
  return audit.json<Array<{ action: string; user_email: string | null }>>().map((e) => `${e.action} ${e.user_email}`);
}

describe('passkeys in Chromium', () => {
  it(
    'registers a passkey on the account page, signs out, signs in with it; axe clean, nothing third-party',
    {
      timeout: 90_000,
    },
    async () => {
      await signInWithPassword(ADA);
      await Promise.all([page.waitForURL(`${origin}/dashboard/account`), page.click('text=Your account and passkeys')]);
      expect(await page.locator('#passkeys-none').innerText()).toContain('No passkey yet');
      await page.evaluate(AXE_SOURCE);
      const violations = await page.evaluate<string[]>(`axe.run(document, { resultTypes: ['violations'] })
      .then((result) => result.violations.map((v) => v.id + ': ' + JSON.stringify(v.nodes.map((n) => n.target))))`);
      expect(violations).toEqual([]);

      await addPasskey('Laptop');
      expect(await page.locator('#passkeys tbody tr').count()).toBe(1);
      expect(await auditActions()).toContain(`user.passkey_added ${ADA}`);

      await page.goto(`${origin}/dashboard`);
      await Promise.all([page.waitForURL(`${origin}/dashboard/sign-in`), page.click('button:text-is("Sign out")')]);
      expect(await page.isVisible('#passkey-button')).toBe(true);
      await Promise.all([page.waitForURL(`${origin}/dashboard`), page.click('#passkey-button')]);
      expect(await page.locator('main').innerText()).toContain(`Signed in as ${ADA}`);
      expect(await auditActions()).toContain(`user.signed_in_with_passkey ${ADA}`);
      await page.goto(`${origin}/dashboard/account`);
      expect(await page.locator('#passkeys tbody').innerText()).not.toContain('never');
      expect(problems).toEqual([]);
    },
  );
});

describe('passkey sign-in over HTTP', () => {
  let adaId = '';
  let adaCredential = '';

  beforeAll(async () => {
    adaId = (await passkeysOfAccount(kassa.ctx, ADA)).userId;
    adaCredential = await credentialIdOf(adaId);
  });

  it('a signed assertion signs in once: replayed, its challenge is gone', { timeout: 30_000 }, async () => {
    const credential = await assertion(adaCredential);
    const first = await postAssertion(credential);
    expect(first.status, first.text).toBe(200);
    expect(first.json().user_id).toBe(adaId);
    expect(first.headers.getSetCookie()[0]).toMatch(/^kassa_dashboard=.+HttpOnly; SameSite=Strict/);
    const again = await postAssertion(credential);
    expect(again.status, again.text).toBe(401);
    expect(again.json().message).toMatch(/passkey was not accepted/);
  });

  it('a challenge older than five minutes is refused; a challenge Kassa never gave is refused', async () => {
    const credential = await assertion(adaCredential);
    skewMs = 5 * 60_000 + 1_000;
    try {
      const late = await postAssertion(credential);
      expect(late.status, late.text).toBe(401);
    } finally {
      skewMs = 0;
    }
    const made = await assertion(adaCredential, Buffer.from('a challenge of my own choosing').toString('base64url'));
    expect((await postAssertion(made)).status).toBe(401);
  });

  it('a credential registered nowhere is refused, and counts as a failed sign-in', async () => {
    const foreignId = await page.evaluate(async () => {
      const created = (await (globalThis as any).navigator.credentials.create({
        publicKey: {
          rp: { id: 'localhost', name: 'Not Kassa' },
          user: { id: crypto.getRandomValues(new Uint8Array(16)), name: 'mallory', displayName: 'mallory' },
          challenge: crypto.getRandomValues(new Uint8Array(32)),
          pubKeyCredParams: [{ type: 'public-key', alg: -7 }],
        },
      })) as { id: string; rawId: ArrayBuffer; type: string; response: any };
      return btoa(String.fromCharCode(...new Uint8Array(created.rawId)))
        .replace(/\+/g, '-')
        .replace(/\//g, '_')
        .replace(/=+$/, '');
    });
    const before = await kassa.runtime.db.prisma.dashboardSignInFailure.count();
    const answer = await postAssertion(await assertion(foreignId));
    expect(answer.status, answer.text).toBe(401);
    expect(await kassa.runtime.db.prisma.dashboardSignInFailure.count()).toBe(before + 1);
  });

  it('malformed credentials are a 400, never a 500; cross-site posts are refused', async () => {
    for (const credential of [null, 'x', { id: 'abc', rawId: 'abc', type: 'public-key', response: {} }])
      expect((await postAssertion(credential)).status).toBe(400);
    const forged = await dashboardRequest(kassa.url, 'POST', '/dashboard/passkeys/sign-in-options', {
      json: {},
      headers: { Origin: 'https://evil.example' },
    });
    expect(forged.status).toBe(403);
  });

  it('lists only your own passkeys; another person cannot remove yours', async () => {
    const carol = await dashboardMember(kassa, shop.organisationId, 'carol@passkey-shop.example', 'admin');
    const mine = await dashboardRequest(kassa.url, 'GET', '/dashboard/api/passkeys', { cookie: carol.cookie });
    expect(mine.json()).toEqual({ data: [] });
    const adaPasskey = (await passkeysOfAccount(kassa.ctx, ADA)).passkeys[0]!;
    const removed = await dashboardRequest(kassa.url, 'POST', `/dashboard/api/passkeys/${adaPasskey.id}/remove`, {
      cookie: carol.cookie,
      headers: { 'X-CSRF-Token': carol.csrf },
    });
    expect(removed.status, removed.text).toBe(404);
    expect((await passkeysOfAccount(kassa.ctx, ADA)).passkeys).toHaveLength(1);
  });

  it(
    'a disabled account’s passkey stops working at once; the throttle counts passkey attempts',
    {
      timeout: 60_000,
    },
    async () => {
      await signInWithPassword(BOB);
      await addPasskey('Security key');
      const bobCredential = await credentialIdOf((await passkeysOfAccount(kassa.ctx, BOB)).userId);
      expect((await postAssertion(await assertion(bobCredential))).status).toBe(200);

      for (let i = 0; i < 5; i++) {
        const wrong = await dashboardRequest(kassa.url, 'POST', '/dashboard/sign-in', {
          json: { email: BOB, password: 'not the password at all' },
        });
        expect(wrong.status).toBe(401);
      }
      const throttled = await postAssertion(await assertion(bobCredential));
      expect(throttled.status, throttled.text).toBe(429);
      expect(Number(throttled.headers.get('retry-after'))).toBeGreaterThan(0);

      await disableUser(kassa.ctx, ADA);
      const disabled = await postAssertion(await assertion(adaCredential));
      expect(disabled.status, disabled.text).toBe(401);
    },
  );

  it(
    'removed on the account page or by the operator, a passkey signs in no more; both audited',
    {
      timeout: 60_000,
    },
    async () => {
      await dashboardMember(kassa, shop.organisationId, 'dave@passkey-shop.example', 'viewer');
      await signInWithPassword('dave@passkey-shop.example');
      await addPasskey('Phone');
      const daveId = (await passkeysOfAccount(kassa.ctx, 'dave@passkey-shop.example')).userId;
      const daveCredential = await credentialIdOf(daveId);
      await page.goto(`${origin}/dashboard/account`);
      await page.click('#passkeys button:text-is("Remove")');
      await page.locator('#passkeys-none').waitFor();
      expect((await postAssertion(await assertion(daveCredential))).status).toBe(401);
      expect(await auditActions()).toContain('user.passkey_removed dave@passkey-shop.example');

      const bob = await passkeysOfAccount(kassa.ctx, BOB);
      await removePasskeyAsOperator(kassa.ctx, bob.passkeys[0]!.id);
      expect((await passkeysOfAccount(kassa.ctx, BOB)).passkeys).toEqual([]);
      expect(await auditActions()).toContain('user.passkey_removed null');
    },
  );
});
