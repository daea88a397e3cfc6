import { randomUUID } from 'node:crypto';
import type { DomainContext } from '../context.js';
import { DomainError, notFound, unauthorised } from '../shared/errors.js';
import { isUuid } from '../shared/uuid.js';
import type { AuditEntry, DashboardLinkKind, DashboardWrites, MembershipRecord } from './dashboard-ports.js';
import { checkPasswordRules, hashPassword, UNUSABLE_HASH, verifyPassword } from './passwords.js';
import type { DashboardRole } from './roles.js';
import { dashboardLinkUrl, newToken, tokenHash } from './tokens.js';
import { normaliseEmail, SIGN_IN_LINK_MINUTES } from './users.js';

/** Failed sign-ins allowed per account and per address in the window (docs/dashboard.md#signing-in). */
export const SIGN_IN_FAILURES_PER_ACCOUNT = 5;
export const SIGN_IN_FAILURES_PER_ADDRESS = 20;
export const SIGN_IN_WINDOW_MINUTES = 15;
/** A session ends after this long unused, and this long after sign-in in any case. */
export const SESSION_IDLE_HOURS = 12;
export const SESSION_MAX_DAYS = 7;
/** A session's expiry is moved on at most this often (one write per active user per interval). */
const TOUCH_EVERY_MS = 5 * 60_000;

/** Too many failed sign-ins: REST 429 with Retry-After. */
export class SignInThrottled extends DomainError {
  constructor(
    readonly retryAfterSeconds: number,
    what: string,
  ) {
    const limit = what === 'for this account' ? SIGN_IN_FAILURES_PER_ACCOUNT : SIGN_IN_FAILURES_PER_ADDRESS;
    super(
      'rate_limited',
      `Too many failed sign-ins ${what}: at most ${limit} per ${SIGN_IN_WINDOW_MINUTES} minutes; retry after ` +
        `${retryAfterSeconds} s`,
    );
  }
}

/** A new signed-in session: `token` goes into the cookie and nowhere else. */
export interface StartedSession {
  readonly token: string;
  readonly csrfToken: string;
  readonly userId: string;
  readonly expiresAt: Date;
}

/** The signed-in person behind a cookie, checked on every request. */
export interface Principal {
  readonly sessionId: string;
  readonly userId: string;
  readonly email: string;
  readonly csrfToken: string;
  readonly memberships: readonly MembershipRecord[];
}

/** Starts a signed-in session for the account (after a password, a link or a passkey). */
export async function startSession(tx: DashboardWrites, ctx: DomainContext, userId: string, address: string) {
  const token = newToken();
  const csrfToken = newToken();
  const expiresAt = new Date(ctx.clock().getTime() + SESSION_IDLE_HOURS * 3_600_000);
  await tx.insertSession({ id: randomUUID(), tokenHash: tokenHash(token), userId, csrfToken, address, expiresAt });
  return { token, csrfToken, userId, expiresAt };
}

/** Refuses with SignInThrottled when the account or the address has too many recent failed sign-ins. */
export async function checkSignInThrottle(ctx: DomainContext, by: { email: string } | { address: string }) {
  const now = ctx.clock();
  const since = new Date(now.getTime() - SIGN_IN_WINDOW_MINUTES * 60_000);
  const failures = await ctx.store.dashboard.failuresSince(since, by);
  const perAccount = 'email' in by;
  if (failures.count < (perAccount ? SIGN_IN_FAILURES_PER_ACCOUNT : SIGN_IN_FAILURES_PER_ADDRESS)) return;
  const oldest = (failures.oldest ?? now).getTime();
  const retryAfter = Math.max(1, Math.ceil((oldest + SIGN_IN_WINDOW_MINUTES * 60_000 - now.getTime()) / 1000));
  throw new SignInThrottled(retryAfter, perAccount ? 'for this account' : 'from this address');
}

/**
 * Throttled per account and per address before the password is looked at; an unknown account costs as much time as
 * a known one and gets the same answer (docs/dashboard.md#signing-in).
 */
export async function signIn(
  ctx: DomainContext,
  input: { email: string; password: string },
  address: string,
): Promise<StartedSession> {
  const store = ctx.store.dashboard;
  const email = input.email.trim().toLowerCase();
  await checkSignInThrottle(ctx, { email });
  await checkSignInThrottle(ctx, { address });
  const user = await store.findUserByEmail(email);
  const matches = await verifyPassword(input.password, user?.passwordHash ?? UNUSABLE_HASH);
  if (!user || !matches || user.passwordHash === null || user.disabledAt) {
    await store.recordFailure(email, address);
    throw unauthorised('Wrong e-mail address or password');
  }
  return store.transaction(async (tx) => {
    await tx.clearFailures(email);
    const session = await startSession(tx, ctx, user.id, address);
    await auditSignIn(tx, user.id, address, 'user.signed_in');
    return session;
  });
}

/** Writes a sign-in to the audit log of every organisation the account belongs to. */
export async function auditSignIn(
  tx: DashboardWrites,
  userId: string,
  address: string | null,
  action: string,
  details: AuditEntry['details'] = {},
) {
  for (const membership of await tx.membershipsOf(userId))
    await tx.audit({ organisationId: membership.organisationId, userId, action, details, address });
}

async function claimLink(tx: DashboardWrites, ctx: DomainContext, token: string, kind: DashboardLinkKind) {
  const link = await tx.claimLink(tokenHash(token), kind, ctx.clock());
  const user = link && (await tx.findUserById(link.userId));
  if (!link || !user || user.disabledAt)
    throw unauthorised('This link is not valid: it was used already, has expired or never existed');
  return { link, user };
}

/** An invite's one-time link: sets the password and signs the person in; the link works only once. */
export async function acceptInvite(
  ctx: DomainContext,
  input: { token: string; password: string },
  address: string,
): Promise<StartedSession> {
  checkPasswordRules(input.password);
  const passwordHash = await hashPassword(input.password);
  return ctx.store.dashboard.transaction(async (tx) => {
    const { link, user } = await claimLink(tx, ctx, input.token, 'invite');
    await tx.setPassword(user.id, passwordHash);
    await tx.audit({
      organisationId: link.organisationId,
      userId: user.id,
      action: 'user.invite_accepted',
      details: { email: user.email },
      address,
    });
    return startSession(tx, ctx, user.id, address);
  });
}

/** A one-time sign-in link (development's demo owner): signs in without a password, once. */
export async function redeemSignInLink(ctx: DomainContext, token: string, address: string): Promise<StartedSession> {
  return ctx.store.dashboard.transaction(async (tx) => {
    const { user } = await claimLink(tx, ctx, token, 'sign_in');
    await auditSignIn(tx, user.id, address, 'user.signed_in_by_link');
    return startSession(tx, ctx, user.id, address);
  });
}

/**
 * Development: a one-time sign-in link for `email` as `role` of the organisation, creating the account and its
 * membership on first use. Returns the token for /dashboard/sign-in-link.
 */
export async function createSignInLink(
  ctx: DomainContext,
  organisationId: string,
  email: string,
  role: DashboardRole,
): Promise<{ token: string; url: string; expiresAt: Date }> {
  const address = normaliseEmail(email);
  const now = ctx.clock();
  return ctx.store.dashboard.transaction(async (tx) => {
    let user = await tx.findUserByEmail(address);
    if (!user) {
      await tx.insertUser({ id: randomUUID(), email: address });
      user = (await tx.findUserByEmail(address))!;
    }
    if (!(await tx.membership(organisationId, user.id)))
      await tx.insertMembership({ organisationId, userId: user.id, role });
    const token = newToken();
    const expiresAt = new Date(now.getTime() + SIGN_IN_LINK_MINUTES * 60_000);
    await tx.retireLinks(user.id, 'sign_in', now);
    await tx.insertLink({
      id: randomUUID(),
      tokenHash: tokenHash(token),
      kind: 'sign_in',
      userId: user.id,
      organisationId,
      expiresAt,
    });
    return { token, url: dashboardLinkUrl(ctx.checkoutBaseUrl, 'sign_in', token), expiresAt };
  });
}

/**
 * The person a session cookie belongs to; `unauthorised` when the session was ended, has expired or its account
 * is disabled. Moves the idle expiry on (at most every few minutes, never past SESSION_MAX_DAYS after sign-in).
 */
export async function authenticate(ctx: DomainContext, token: string): Promise<Principal> {
  const store = ctx.store.dashboard;
  const now = ctx.clock();
  const session = await store.findSession(tokenHash(token));
  const user = session && session.expiresAt > now ? await store.findUserById(session.userId) : null;
  if (!session || !user || user.disabledAt)
    throw unauthorised('Not signed in, or the session has ended: sign in again');
  if (now.getTime() - session.lastSeenAt.getTime() > TOUCH_EVERY_MS) {
    const cap = session.createdAt.getTime() + SESSION_MAX_DAYS * 86_400_000;
    const expiresAt = new Date(Math.min(now.getTime() + SESSION_IDLE_HOURS * 3_600_000, cap));
    if (!(await store.touchSession(session.id, now, expiresAt)))
      throw unauthorised('The session has ended: sign in again');
  }
  return {
    sessionId: session.id,
    userId: user.id,
    email: user.email,
    csrfToken: session.csrfToken,
    memberships: await store.membershipsOf(user.id),
  };
}

/** The principal's role in the organisation; an organisation they do not belong to is not found (never forbidden). */
export function roleIn(principal: Principal, organisationId: string): DashboardRole {
  const membership = isUuid(organisationId)
    ? principal.memberships.find((m) => m.organisationId === organisationId)
    : undefined;
  if (!membership) throw notFound(`Organisation ${organisationId} not found`);
  return membership.role;
}

export async function signOut(ctx: DomainContext, principal: Principal): Promise<void> {
  await ctx.store.dashboard.deleteSession(principal.sessionId);
}

/** Ends every session of the principal's account, this one included. */
export async function signOutEverywhere(ctx: DomainContext, principal: Principal, address: string): Promise<number> {
  return ctx.store.dashboard.transaction(async (tx) => {
    const ended = await tx.deleteSessionsOf(principal.userId);
    for (const membership of principal.memberships)
      await tx.audit({
        organisationId: membership.organisationId,
        userId: principal.userId,
        action: 'user.signed_out_everywhere',
        details: { sessions_ended: ended },
        address,
      });
    return ended;
  });
}
