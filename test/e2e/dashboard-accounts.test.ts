import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApp } from '../../src/app.js';
import { createLogger } from '../../src/logging.js';
import { demoSignInToken } from '../../src/demo.js';
import { SIGN_IN_FAILURES_PER_ACCOUNT, SIGN_IN_FAILURES_PER_ADDRESS } from '../../src/domain/dashboard/sign-in.js';
import { createMerchant, type TestMerchant } from '../factories/merchant.js';
import { parseJsonOutput, runKassaInProcess } from '../support/cli-process.js';
import { startTestKassa, type TestKassa } from '../support/kassa.js';

/**
 * Dashboard accounts and roles (docs/dashboard.md) over real HTTP on PostgreSQL: an invite from the CLI, setting
 * the password, signing in, the cookie's flags, signing out everywhere, disabling, the sign-in throttle, CSRF and
 * cross-site refusals, roles, and one organisation's user reading nothing of another's.
 */

const PASSWORD = 'correct horse battery staple';
let kassa: TestKassa;
let cliEnv: Record<string, string>;
let shopA: TestMerchant;
let shopB: TestMerchant;

beforeAll(async () => {
  kassa = await startTestKassa();
  cliEnv = {
    KASSA_ENV: 'test',
    LOG_LEVEL: 'silent',
    KASSA_NETWORKS: 'local',
    DATABASE_URL: kassa.database.databaseUrl!,
    KASSA_DATA_DIR: kassa.database.dataDir,
    CHECKOUT_BASE_URL: kassa.url,
  };
  shopA = await createMerchant(kassa.ctx, { name: 'Shop A' });
  shopB = await createMerchant(kassa.ctx, { name: 'Shop B' });
});

afterAll(async () => {
  await kassa?.close();
});

interface Answer {
  readonly status: number;
  readonly headers: Headers;
  readonly text: string;
  readonly json: () => Record<string, unknown>;
}

/** A request as a browser on Kassa's own origin would send it, unless `headers` says otherwise. */
async function send(
  method: string,
  path: string,
  options: { cookie?: string; form?: Record<string, string>; json?: unknown; headers?: Record<string, string> } = {},
  base = kassa.url,
): Promise<Answer> {
  const headers: Record<string, string> = { ...(method === 'GET' ? {} : { Origin: base }), ...options.headers };
  // An empty value leaves the header out (a request with no Origin).
  for (const [name, value] of Object.entries(headers)) if (value === '') delete headers[name];
  if (options.cookie) headers.Cookie = options.cookie;
  let body: string | undefined;
  if (options.form) {
    headers['Content-Type'] = 'application/x-www-form-urlencoded';
    body = new URLSearchParams(options.form).toString();
  } else if (options.json !== undefined) {
    headers['Content-Type'] = 'application/json';
    body = JSON.stringify(options.json);
  }
  const response = await fetch(`${base}${path}`, { method, headers, body, redirect: 'manual' });
  const text = await response.text();
  return { status: response.status, headers: response.headers, text, json: () => JSON.parse(text) };
}

/** The cookie a Set-Cookie header sets, as a Cookie header sends it back. */
function cookieFrom(answer: Answer): string {
  const set = answer.headers.getSetCookie();
  expect(set, answer.text).toHaveLength(1);
  return set[0]!.split(';')[0]!;
}

async function invite(org: string, email: string, role: string) {
  const run = await runKassaInProcess(
    ['users', 'invite', '--org', org, '--email', email, '--role', role, '--json'],
    cliEnv,
  );
  expect(run.code, run.stderr).toBe(0);
  return parseJsonOutput<{ user_id: string; invite_url: string | null; expires_at: string | null; role: string }>(run);
}

function tokenOf(url: string): string {
  return new URL(url).hash.replace(/^#token=/, '');
}

/** Invites, sets the password through the link and signs in: the new person's cookie and CSRF token. */
async function member(org: string, email: string, role: string) {
  const { invite_url } = await invite(org, email, role);
  const accepted = await send('POST', '/dashboard/invite', {
    json: { token: tokenOf(invite_url!), password: PASSWORD },
  });
  expect(accepted.status, accepted.text).toBe(200);
  return { cookie: cookieFrom(accepted), csrf: accepted.json().csrf_token as string };
}

async function signIn(email: string, password = PASSWORD, origin?: string) {
  return send('POST', '/dashboard/sign-in', { json: { email, password }, headers: origin ? { Origin: origin } : {} });
}

describe('an invite from the CLI', () => {
  it('prints a one-time link valid 24 h that sets the password and signs in with a strict cookie', async () => {
    const before = Date.now();
    const run = await runKassaInProcess(
      ['users', 'invite', '--org', shopA.organisationId, '--email', 'Ada@Shop-A.example', '--role', 'owner'],
      cliEnv,
    );
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toContain('invited ada@shop-a.example as owner');
    const url = /^(http\S+\/dashboard\/invite#token=[\w-]{43})$/m.exec(run.stdout)?.[1];
    expect(url, run.stdout).toBeDefined();
    const until = new Date(/until (\S+)\):/.exec(run.stdout)![1]!).getTime();
    expect(until - before).toBeGreaterThan(24 * 3_600_000 - 60_000);
    expect(until - before).toBeLessThanOrEqual(24 * 3_600_000 + 60_000);

    const page = await send('GET', '/dashboard/invite');
    expect(page.status).toBe(200);
    expect(page.headers.get('content-security-policy')).toContain("frame-ancestors 'none'");
    expect(page.text).toContain('/dashboard/assets/link.js');

    const weak = await send('POST', '/dashboard/invite', { form: { token: tokenOf(url!), password: 'short' } });
    expect(weak.status).toBe(400);
    expect(weak.text).toContain('at least 12 characters');

    const accepted = await send('POST', '/dashboard/invite', { form: { token: tokenOf(url!), password: PASSWORD } });
    expect(accepted.status).toBe(303);
    expect(accepted.headers.get('location')).toBe('/dashboard');
    const [setCookie] = accepted.headers.getSetCookie();
    expect(setCookie).toMatch(/^kassa_dashboard=[\w-]{43}; /);
    expect(setCookie).toContain('HttpOnly');
    expect(setCookie).toContain('SameSite=Strict');
    expect(setCookie).toContain('Path=/');
    // Not production and plain HTTP: not Secure (production's cookie is tested below).
    expect(setCookie).not.toContain('Secure');

    const home = await send('GET', '/dashboard', { cookie: cookieFrom(accepted) });
    expect(home.status).toBe(200);
    expect(home.text).toContain('ada@shop-a.example');
    expect(home.text).toContain('Shop A');

    // Once only.
    const again = await send('POST', '/dashboard/invite', { json: { token: tokenOf(url!), password: PASSWORD } });
    expect(again.status).toBe(401);

    const list = await runKassaInProcess(['users', 'list', '--org', shopA.organisationId, '--json'], cliEnv);
    expect(parseJsonOutput<unknown[]>(list)).toEqual([
      expect.objectContaining({ email: 'ada@shop-a.example', role: 'owner', state: 'active' }),
    ]);
  });

  it('refuses an unknown role, a bad e-mail address and an unknown organisation', async () => {
    const badRole = await runKassaInProcess(
      ['users', 'invite', '--org', shopA.organisationId, '--email', 'x@shop-a.example', '--role', 'god'],
      cliEnv,
    );
    expect(badRole.code).toBe(2);
    expect(badRole.stderr).toContain('Unknown role "god"');
    const badEmail = await runKassaInProcess(
      ['users', 'invite', '--org', shopA.organisationId, '--email', 'nobody', '--role', 'viewer'],
      cliEnv,
    );
    expect(badEmail.code).toBe(2);
    const noOrg = await runKassaInProcess(
      [
        'users',
        'invite',
        '--org',
        '00000000-0000-4000-8000-000000000000',
        '--email',
        'x@y.example',
        '--role',
        'viewer',
      ],
      cliEnv,
    );
    expect(noOrg.code).toBe(4);
  });
});

describe('signing in and out', () => {
  it('signs in with the password; a wrong one is refused with the same answer as an unknown account', async () => {
    await member(shopA.organisationId, 'bob@shop-a.example', 'admin');
    const wrong = await signIn('bob@shop-a.example', 'not the password at all');
    const unknown = await signIn('nobody@shop-a.example', 'not the password at all');
    expect(wrong.status).toBe(401);
    expect(unknown.status).toBe(401);
    expect(wrong.json().message).toBe(unknown.json().message);

    const ok = await signIn('BOB@shop-a.example');
    expect(ok.status).toBe(200);
    const me = await send('GET', '/dashboard/api/me', { cookie: cookieFrom(ok) });
    expect(me.json()).toMatchObject({
      email: 'bob@shop-a.example',
      csrf_token: ok.json().csrf_token,
      organisations: [{ id: shopA.organisationId, name: 'Shop A', role: 'admin' }],
    });
  });

  it('"sign out everywhere" ends every session of the account at once', async () => {
    const { cookie: first } = await member(shopA.organisationId, 'carol@shop-a.example', 'viewer');
    const second = await signIn('carol@shop-a.example');
    const secondCookie = cookieFrom(second);
    expect((await send('GET', '/dashboard/api/me', { cookie: first })).status).toBe(200);

    const out = await send('POST', '/dashboard/sign-out-everywhere', {
      cookie: secondCookie,
      headers: { 'X-CSRF-Token': second.json().csrf_token as string },
    });
    expect(out.status).toBe(204);
    expect(out.headers.getSetCookie()[0]).toMatch(/^kassa_dashboard=; Path=\/; Max-Age=0/);
    for (const cookie of [first, secondCookie]) {
      expect((await send('GET', '/dashboard/api/me', { cookie })).status).toBe(401);
      const home = await send('GET', '/dashboard', { cookie });
      expect(home.status).toBe(303);
      expect(home.headers.get('location')).toBe('/dashboard/sign-in');
    }
  });

  it('sign out (a form with the CSRF field) ends this session only', async () => {
    const { cookie: first } = await member(shopA.organisationId, 'dan@shop-a.example', 'viewer');
    const second = await signIn('dan@shop-a.example');
    const home = await send('GET', '/dashboard', { cookie: cookieFrom(second) });
    const csrf = /name="csrf_token" value="([\w-]+)"/.exec(home.text)![1]!;
    const out = await send('POST', '/dashboard/sign-out', { cookie: cookieFrom(second), form: { csrf_token: csrf } });
    expect(out.status).toBe(303);
    expect(out.headers.get('location')).toBe('/dashboard/sign-in');
    expect((await send('GET', '/dashboard/api/me', { cookie: cookieFrom(second) })).status).toBe(401);
    expect((await send('GET', '/dashboard/api/me', { cookie: first })).status).toBe(200);
  });

  it("a disabled user's cookie stops working at once, and the account cannot sign in", async () => {
    const { cookie } = await member(shopA.organisationId, 'eve@shop-a.example', 'developer');
    expect((await send('GET', '/dashboard/api/me', { cookie })).status).toBe(200);
    const run = await runKassaInProcess(['users', 'disable', 'eve@shop-a.example'], cliEnv);
    expect(run.code, run.stderr).toBe(0);
    expect((await send('GET', '/dashboard/api/me', { cookie })).status).toBe(401);
    expect((await signIn('eve@shop-a.example')).status).toBe(401);
    const list = parseJsonOutput<Array<{ email: string; state: string }>>(
      await runKassaInProcess(['users', 'list', '--org', shopA.organisationId, '--json'], cliEnv),
    );
    expect(list.find((user) => user.email === 'eve@shop-a.example')?.state).toBe('disabled');
  });

  it('in production the cookie is Secure and named __Host-', async () => {
    const app = createApp({
      ctx: kassa.ctx,
      logger: createLogger('silent'),
      readiness: { checkDatabase: async () => undefined },
      dashboard: { secureCookies: true },
    });
    const server: Server = await new Promise((resolve) => {
      const listening = app.listen(0, '127.0.0.1', () => resolve(listening));
    });
    try {
      const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
      await member(shopA.organisationId, 'fay@shop-a.example', 'viewer');
      const ok = await send(
        'POST',
        '/dashboard/sign-in',
        { json: { email: 'fay@shop-a.example', password: PASSWORD } },
        base,
      );
      const [setCookie] = ok.headers.getSetCookie();
      expect(setCookie).toMatch(
        /^__Host-kassa_dashboard=[\w-]{43}; Path=\/; Max-Age=\d+; HttpOnly; SameSite=Strict; Secure$/,
      );
      expect((await send('GET', '/dashboard/api/me', { cookie: cookieFrom(ok) }, base)).status).toBe(200);
      // The development name is not read in production.
      const plain = cookieFrom(ok).replace('__Host-', '');
      expect((await send('GET', '/dashboard/api/me', { cookie: plain }, base)).status).toBe(401);
    } finally {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
  });

  it("development's one-time sign-in link signs the demo organisation's owner in, once", async () => {
    const token = await demoSignInToken(kassa.ctx, {
      organisationId: shopB.organisationId,
      apiKey: shopB.apiKey,
      apiSecret: shopB.apiSecret,
    });
    expect((await send('GET', '/dashboard/sign-in-link')).text).toContain('data-link="submit"');
    const used = await send('POST', '/dashboard/sign-in-link', { form: { token } });
    expect(used.status).toBe(303);
    const me = await send('GET', '/dashboard/api/me', { cookie: cookieFrom(used) });
    expect(me.json()).toMatchObject({
      email: 'owner@demo-shop.invalid',
      organisations: [{ id: shopB.organisationId, role: 'owner' }],
    });
    expect((await send('POST', '/dashboard/sign-in-link', { form: { token } })).status).toBe(401);
  });
});

describe('cross-site requests', () => {
  it('refuses a forged cross-site POST, with or without the CSRF token, and one without the token', async () => {
    const { cookie, csrf } = await member(shopA.organisationId, 'gus@shop-a.example', 'viewer');
    const forged = await send('POST', '/dashboard/sign-out-everywhere', {
      cookie,
      form: { csrf_token: csrf },
      headers: { Origin: 'https://evil.example' },
    });
    expect(forged.status).toBe(403);
    expect(forged.json().message).toBe('Cross-site request refused');
    const fetchMetadataOnly = await send('POST', '/dashboard/sign-out-everywhere', {
      cookie,
      form: { csrf_token: csrf },
      headers: { Origin: '', 'Sec-Fetch-Site': 'cross-site' },
    });
    expect(fetchMetadataOnly.status).toBe(403);
    const noToken = await send('POST', '/dashboard/sign-out-everywhere', { cookie, form: {} });
    expect(noToken.status).toBe(403);
    expect(noToken.json().message).toContain('CSRF token');
    const wrongToken = await send('POST', '/dashboard/sign-out', {
      cookie,
      headers: { 'X-CSRF-Token': 'x'.repeat(43) },
    });
    expect(wrongToken.status).toBe(403);
    // None of them ended the session.
    expect((await send('GET', '/dashboard/api/me', { cookie })).status).toBe(200);
    // Kassa's public origin (CHECKOUT_BASE_URL, here https://pay.example.test) is its own, as behind a proxy that
    // terminates TLS; a look-alike is not.
    const viaProxy = await send('POST', '/dashboard/sign-out', {
      cookie,
      headers: { 'X-CSRF-Token': csrf, Origin: 'https://pay.example.test.evil.example' },
    });
    expect(viaProxy.status).toBe(403);
    const publicOrigin = await signIn('gus@shop-a.example', PASSWORD, 'https://pay.example.test');
    expect(publicOrigin.status).toBe(200);
    // Nor is a sign-in accepted from another site (login CSRF).
    const login = await send('POST', '/dashboard/sign-in', {
      json: { email: 'gus@shop-a.example', password: PASSWORD },
      headers: { Origin: 'https://evil.example' },
    });
    expect(login.status).toBe(403);
  });
});

describe('roles and organisations', () => {
  let owner: { cookie: string; csrf: string };
  let viewer: { cookie: string; csrf: string };
  let ownerB: { cookie: string; csrf: string };

  beforeAll(async () => {
    owner = await member(shopA.organisationId, 'hal@shop-a.example', 'owner');
    viewer = await member(shopA.organisationId, 'ivy@shop-a.example', 'viewer');
    ownerB = await member(shopB.organisationId, 'jon@shop-b.example', 'owner');
  });

  const inviteOver = (who: { cookie: string; csrf: string }, org: string, email: string, role: string) =>
    send('POST', `/dashboard/api/organisations/${org}/invites`, {
      cookie: who.cookie,
      json: { email, role },
      headers: { 'X-CSRF-Token': who.csrf },
    });

  it('a viewer reads the organisation but may not list or invite users, nor read the audit log', async () => {
    const read = await send('GET', `/dashboard/api/organisations/${shopA.organisationId}`, { cookie: viewer.cookie });
    expect(read.status).toBe(200);
    expect(read.json()).toMatchObject({ id: shopA.organisationId, name: 'Shop A', role: 'viewer' });
    const users = await send('GET', `/dashboard/api/organisations/${shopA.organisationId}/users`, {
      cookie: viewer.cookie,
    });
    expect(users.status).toBe(403);
    expect((await inviteOver(viewer, shopA.organisationId, 'kim@shop-a.example', 'viewer')).status).toBe(403);
    const audit = await send('GET', `/dashboard/api/organisations/${shopA.organisationId}/audit-log`, {
      cookie: viewer.cookie,
    });
    expect(audit.status).toBe(403);
  });

  it('an admin invites up to admin, never owner; the owner reads the audit log of it all', async () => {
    const admin = await member(shopA.organisationId, 'lea@shop-a.example', 'admin');
    const invited = await inviteOver(admin, shopA.organisationId, 'max@shop-a.example', 'support');
    expect(invited.status).toBe(201);
    expect(invited.json()).toMatchObject({ email: 'max@shop-a.example', role: 'support' });
    expect(invited.json().invite_url).toMatch(/\/dashboard\/invite#token=[\w-]{43}$/);
    expect((await inviteOver(admin, shopA.organisationId, 'ned@shop-a.example', 'owner')).status).toBe(403);
    expect((await inviteOver(admin, shopA.organisationId, 'max@shop-a.example', 'viewer')).status).toBe(409);
    // Without the CSRF token, nothing is invited.
    const noToken = await send('POST', `/dashboard/api/organisations/${shopA.organisationId}/invites`, {
      cookie: admin.cookie,
      json: { email: 'olga@shop-a.example', role: 'viewer' },
    });
    expect(noToken.status).toBe(403);

    const audit = await send('GET', `/dashboard/api/organisations/${shopA.organisationId}/audit-log`, {
      cookie: owner.cookie,
    });
    expect(audit.status).toBe(200);
    const entries = audit.json() as unknown as Array<{ action: string; user_email: string | null; details: object }>;
    expect(entries[0]).toMatchObject({
      action: 'user.invited',
      user_email: 'lea@shop-a.example',
      details: { email: 'max@shop-a.example', role: 'support' },
    });
    const actions = entries.map((entry) => entry.action);
    for (const action of ['user.invite_accepted', 'user.signed_in', 'user.signed_out_everywhere', 'user.disabled'])
      expect(actions).toContain(action);
    expect(entries.some((entry) => entry.details && JSON.stringify(entry).includes('olga'))).toBe(false);
    // The CLI's own invites are there, by no user.
    expect(entries.find((e) => e.action === 'user.invited' && e.user_email === null)).toBeDefined();
  });

  it("a user of one organisation reads nothing of another's: by id, its users, its audit log, an invite into it", async () => {
    const paths = ['', '/users', '/audit-log'].map(
      (tail) => `/dashboard/api/organisations/${shopB.organisationId}${tail}`,
    );
    for (const path of paths) {
      const answer = await send('GET', path, { cookie: owner.cookie });
      expect(answer.status, path).toBe(404);
      // The same answer as for an organisation that does not exist at all.
      expect(answer.json().message).toBe(`Organisation ${shopB.organisationId} not found`);
      expect((await send('GET', path, { cookie: ownerB.cookie })).status, path).toBe(200);
    }
    expect((await inviteOver(owner, shopB.organisationId, 'pat@shop-b.example', 'viewer')).status).toBe(404);
    const me = await send('GET', '/dashboard/api/me', { cookie: owner.cookie });
    expect(JSON.stringify(me.json())).not.toContain(shopB.organisationId);
    // And without a session, nothing at all.
    expect((await send('GET', `/dashboard/api/organisations/${shopA.organisationId}`)).status).toBe(401);
  });
});

describe('the sign-in throttle', () => {
  it(`refuses an account after ${SIGN_IN_FAILURES_PER_ACCOUNT} failures in the window, even with the right password`, async () => {
    await member(shopA.organisationId, 'quinn@shop-a.example', 'viewer');
    for (let i = 0; i < SIGN_IN_FAILURES_PER_ACCOUNT; i++)
      expect((await signIn('quinn@shop-a.example', `guess number ${i}`)).status).toBe(401);
    const throttled = await signIn('quinn@shop-a.example');
    expect(throttled.status).toBe(429);
    expect(Number(throttled.headers.get('retry-after'))).toBeGreaterThan(800);
    expect(throttled.json().message).toContain('for this account');
    // As a form, the page again with the reason.
    const form = await send('POST', '/dashboard/sign-in', {
      form: { email: 'quinn@shop-a.example', password: PASSWORD },
    });
    expect(form.status).toBe(429);
    expect(form.text).toContain('Too many failed sign-ins');
  });

  it(`refuses an address after ${SIGN_IN_FAILURES_PER_ADDRESS} failures in the window, whatever the account`, async () => {
    await member(shopA.organisationId, 'rosa@shop-a.example', 'viewer');
    let answer: Answer | undefined;
    for (let i = 0; i <= SIGN_IN_FAILURES_PER_ADDRESS; i++) {
      answer = await signIn(`stranger${i}@elsewhere.example`, 'some password guess');
      if (answer.status === 429) break;
      expect(answer.status).toBe(401);
    }
    expect(answer!.status).toBe(429);
    expect(answer!.json().message).toContain('from this address');
    expect((await signIn('rosa@shop-a.example')).status).toBe(429);
  });
});
