import { timingSafeEqual } from 'node:crypto';
import type { Request, Response } from 'express';
import type { DomainContext } from '../domain/context.js';
import { forbidden, unauthorised } from '../domain/shared/errors.js';
import { authenticate, type Principal, type StartedSession } from '../domain/dashboard/sign-in.js';
import { HttpError } from './http-error.js';
import { rawBytes, readJsonBody } from './json-body.js';

/** How the dashboard's session cookie is set (docs/dashboard.md#sessions-and-cookies). */
export interface DashboardCookieOptions {
  /** Production: `Secure` and the `__Host-` name (a request over HTTPS gets `Secure` in any case). */
  readonly secureCookies: boolean;
}

const COOKIE = 'kassa_dashboard';
const HOST_COOKIE = `__Host-${COOKIE}`;

function cookieName(options: DashboardCookieOptions): string {
  return options.secureCookies ? HOST_COOKIE : COOKIE;
}

/** The session token from the request's cookie, if any. */
export function sessionToken(req: Request, options: DashboardCookieOptions): string | null {
  const name = cookieName(options);
  for (const part of (req.headers.cookie ?? '').split(';')) {
    const [key, ...value] = part.trim().split('=');
    if (key === name) return value.join('=') || null;
  }
  return null;
}

/** HttpOnly, SameSite=Strict, Path=/; Secure in production or over HTTPS. The session lives server-side only. */
export function setSessionCookie(
  req: Request,
  res: Response,
  session: StartedSession,
  options: DashboardCookieOptions,
): void {
  const secure = options.secureCookies || req.secure;
  const maxAge = Math.max(0, Math.floor((session.expiresAt.getTime() - Date.now()) / 1000));
  res.append(
    'Set-Cookie',
    `${cookieName(options)}=${session.token}; Path=/; Max-Age=${maxAge}; HttpOnly; SameSite=Strict` +
      (secure ? '; Secure' : ''),
  );
}

export function clearSessionCookie(req: Request, res: Response, options: DashboardCookieOptions): void {
  const secure = options.secureCookies || req.secure;
  res.append(
    'Set-Cookie',
    `${cookieName(options)}=; Path=/; Max-Age=0; HttpOnly; SameSite=Strict` + (secure ? '; Secure' : ''),
  );
}

/** The signed-in person, or `unauthorised` (401). */
export async function principalOf(
  ctx: DomainContext,
  req: Request,
  options: DashboardCookieOptions,
): Promise<Principal> {
  const token = sessionToken(req, options);
  if (!token) throw unauthorised('Not signed in: sign in at /dashboard/sign-in');
  return authenticate(ctx, token);
}

/**
 * Cross-site requests are refused first (docs/dashboard.md#cross-site-requests): Origin or Sec-Fetch-Site must name
 * Kassa's own origin or CHECKOUT_BASE_URL's. Clients sending neither pass here but still need the CSRF token.
 */
export function requireSameOrigin(req: Request, publicBaseUrl: string): void {
  const origin = req.headers.origin;
  if (origin !== undefined) {
    if (origin !== `${req.protocol}://${req.get('host')}` && origin !== new URL(publicBaseUrl).origin)
      throw forbidden('Cross-site request refused');
    return;
  }
  const site = req.headers['sec-fetch-site'];
  if (site !== undefined && site !== 'same-origin' && site !== 'none') throw forbidden('Cross-site request refused');
}

/** The double-submit check: the request carries the CSRF token bound to its session (header or form field). */
export function requireCsrfToken(req: Request, principal: Principal, fields: Readonly<Record<string, string>>): void {
  const header = req.headers['x-csrf-token'];
  const sent = (typeof header === 'string' ? header : undefined) ?? fields.csrf_token ?? '';
  const expected = Buffer.from(principal.csrfToken);
  const given = Buffer.from(sent);
  if (given.length !== expected.length || !timingSafeEqual(given, expected))
    throw forbidden('Missing or wrong CSRF token: reload the page and try again');
}

/** Whether the caller is a browser form (answered with pages and redirects) rather than a JSON client. */
export function isFormPost(req: Request): boolean {
  return /^application\/x-www-form-urlencoded\s*(;|$)/i.test(req.headers['content-type'] ?? '');
}

/** A form's or a JSON object's string fields (others are dropped); 415 for any other body. */
export function readFields(req: Request): Record<string, string> {
  const type = req.headers['content-type'];
  if (type === undefined && rawBytes(req).length === 0) return {};
  if (isFormPost(req)) return Object.fromEntries(new URLSearchParams(rawBytes(req).toString('utf8')));
  const body = readJsonBody(req);
  if (typeof body !== 'object' || body === null || Array.isArray(body))
    throw new HttpError(400, ['Request body must be a JSON object']);
  return Object.fromEntries(
    Object.entries(body).filter((entry): entry is [string, string] => typeof entry[1] === 'string'),
  );
}
