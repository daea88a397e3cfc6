import { createHash, randomBytes } from 'node:crypto';

/** A random secret for a cookie or a one-time link; only its hash is stored. */
export function newToken(): string {
  return randomBytes(32).toString('base64url');
}

export function tokenHash(token: string): string {
  return createHash('sha256').update(token).digest('hex');
}

/** A one-time link's address: the token rides in the fragment, which no server, log or Referer sees. */
export function dashboardLinkUrl(baseUrl: string, kind: 'invite' | 'sign_in', token: string): string {
  return `${baseUrl}/dashboard/${kind === 'invite' ? 'invite' : 'sign-in-link'}#token=${token}`;
}
