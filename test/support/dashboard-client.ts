import { expect } from 'vitest';
import { CLI_ACTOR } from '../../src/domain/dashboard/actors.js';
import { inviteUser } from '../../src/domain/dashboard/users.js';
import type { TestKassa } from './kassa.js';

/** A browser's requests to the dashboard over real HTTP (docs/dashboard.md): cookies, CSRF token, Origin. */

export const DASHBOARD_PASSWORD = 'correct horse battery staple';

export interface DashboardAnswer {
  readonly status: number;
  readonly headers: Headers;
  readonly text: string;
  json<T = Record<string, unknown>>(): T;
}

export interface DashboardMember {
  readonly cookie: string;
  readonly csrf: string;
}

/** A request as a browser on Kassa's own origin sends it; an empty header value leaves that header out. */
export async function dashboardRequest(
  base: string,
  method: string,
  path: string,
  options: { cookie?: string; form?: Record<string, string>; json?: unknown; headers?: Record<string, string> } = {},
): Promise<DashboardAnswer> {
  const headers: Record<string, string> = { ...(method === 'GET' ? {} : { Origin: base }), ...options.headers };
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
export function cookieFrom(answer: DashboardAnswer): string {
  const set = answer.headers.getSetCookie();
  expect(set, answer.text).toHaveLength(1);
  return set[0]!.split(';')[0]!;
}

/** Invites `email` as `role` (as the operator does), sets the password through the link: their cookie and token. */
export async function dashboardMember(
  kassa: TestKassa,
  organisationId: string,
  email: string,
  role: string,
): Promise<DashboardMember> {
  const invitation = await inviteUser(kassa.ctx, { organisationId, email, role }, CLI_ACTOR);
  const accepted = await dashboardRequest(kassa.url, 'POST', '/dashboard/invite', {
    json: { token: invitation.token, password: DASHBOARD_PASSWORD },
  });
  expect(accepted.status, accepted.text).toBe(200);
  return { cookie: cookieFrom(accepted), csrf: accepted.json<{ csrf_token: string }>().csrf_token };
}

/** One operation on the merchant GraphQL API as the member. */
export async function merchantGraphql<T = Record<string, any>>(
  kassa: TestKassa,
  member: DashboardMember,
  query: string,
  variables: Record<string, unknown> = {},
): Promise<{ status: number; data: T | null; errors?: Array<{ message: string; extensions: { code: string } }> }> {
  const answer = await dashboardRequest(kassa.url, 'POST', '/dashboard/graphql', {
    cookie: member.cookie,
    json: { query, variables },
    headers: { 'X-CSRF-Token': member.csrf },
  });
  return { status: answer.status, ...answer.json() };
}
