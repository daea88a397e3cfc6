import { randomUUID } from 'node:crypto';
import type { DomainContext } from '../context.js';
import { conflict, forbidden, invalid, notFound } from '../shared/errors.js';
import { isUuid } from '../shared/uuid.js';
import { actorAddress, actorUserId, type DashboardActor } from './actors.js';
import type { DashboardUserRecord, MembershipRecord } from './dashboard-ports.js';
import { isDashboardRole, requirePermission, roleRank, DASHBOARD_ROLES, type DashboardRole } from './roles.js';
import { dashboardLinkUrl, newToken, tokenHash } from './tokens.js';

/** How long an invite link works (docs/dashboard.md#accounts). */
export const INVITE_HOURS = 24;
/** How long development's sign-in link for the demo owner works. */
export const SIGN_IN_LINK_MINUTES = 60;

const EMAIL = /^[^\s@]{1,64}@[^\s@]{1,255}$/;

export function normaliseEmail(email: string): string {
  const lower = email.trim().toLowerCase();
  if (!EMAIL.test(lower) || (!lower.split('@')[1]!.includes('.') && !lower.endsWith('@localhost')))
    throw invalid(`${JSON.stringify(email)} is not an e-mail address`);
  return lower;
}

export function parseRole(role: string): DashboardRole {
  if (!isDashboardRole(role))
    throw invalid(`Unknown role ${JSON.stringify(role)}: one of ${DASHBOARD_ROLES.join(', ')}`);
  return role;
}

export interface Invitation {
  readonly userId: string;
  readonly email: string;
  readonly role: DashboardRole;
  /** The one-time token for /dashboard/invite; null when the person already has a password and was only added. */
  readonly token: string | null;
  /** The link to send the person: /dashboard/invite with the token in the fragment. */
  readonly url: string | null;
  readonly expiresAt: Date | null;
}

/**
 * A new person gets a one-time link that sets their password; an existing account is only added, never has its
 * password reset. A dashboard user needs `manage_users` and gives no role above their own.
 */
export async function inviteUser(
  ctx: DomainContext,
  input: { organisationId: string; email: string; role: string },
  actor: DashboardActor,
): Promise<Invitation> {
  const email = normaliseEmail(input.email);
  const role = parseRole(input.role);
  if (actor.kind === 'user') {
    requirePermission(actor.role, 'manage_users');
    if (roleRank(role) > roleRank(actor.role)) throw forbidden(`An ${actor.role} cannot give the ${role} role`);
  }
  await requireOrganisation(ctx, input.organisationId);
  const now = ctx.clock();
  return ctx.store.dashboard.transaction(async (tx) => {
    let user = await tx.findUserByEmail(email);
    if (user?.disabledAt) throw conflict(`The account ${email} is disabled`);
    if (user && (await tx.membership(input.organisationId, user.id)))
      throw conflict(`${email} is already a member of this organisation`);
    const userId = user?.id ?? randomUUID();
    if (!user) {
      await tx.insertUser({ id: userId, email });
      user = { id: userId, email, passwordHash: null, disabledAt: null, createdAt: now };
    }
    await tx.insertMembership({ organisationId: input.organisationId, userId, role });
    let token: string | null = null;
    let expiresAt: Date | null = null;
    if (user.passwordHash === null) {
      token = newToken();
      expiresAt = new Date(now.getTime() + INVITE_HOURS * 3_600_000);
      await tx.retireLinks(userId, 'invite', now);
      await tx.insertLink({
        id: randomUUID(),
        tokenHash: tokenHash(token),
        kind: 'invite',
        userId,
        organisationId: input.organisationId,
        expiresAt,
      });
    }
    await tx.audit({
      organisationId: input.organisationId,
      userId: actorUserId(actor),
      action: 'user.invited',
      details: { email, role },
      address: actorAddress(actor),
    });
    const url = token && dashboardLinkUrl(ctx.checkoutBaseUrl, 'invite', token);
    return { userId, email, role, token, url, expiresAt };
  });
}

export interface DashboardUserSummary {
  readonly id: string;
  readonly email: string;
  readonly role: DashboardRole;
  /** invited: no password set yet. */
  readonly state: 'active' | 'invited' | 'disabled';
  readonly createdAt: Date;
}

function summarise(member: MembershipRecord & { user: DashboardUserRecord }): DashboardUserSummary {
  const { user } = member;
  const state = user.disabledAt ? 'disabled' : user.passwordHash === null ? 'invited' : 'active';
  return { id: user.id, email: user.email, role: member.role, state, createdAt: user.createdAt };
}

/** The organisation's dashboard users with their roles (the operator, or a user who may manage users). */
export async function listUsers(
  ctx: DomainContext,
  organisationId: string,
  actor: DashboardActor,
): Promise<DashboardUserSummary[]> {
  if (actor.kind === 'user') requirePermission(actor.role, 'manage_users');
  await requireOrganisation(ctx, organisationId);
  return (await ctx.store.dashboard.membersOf(organisationId)).map(summarise);
}

/**
 * Operator only: disables an account (by e-mail or id) everywhere and ends its sessions at once; every request its
 * cookies make from then on is refused.
 */
export async function disableUser(ctx: DomainContext, who: string): Promise<{ id: string; email: string }> {
  const now = ctx.clock();
  return ctx.store.dashboard.transaction(async (tx) => {
    const user = isUuid(who) ? await tx.findUserById(who) : await tx.findUserByEmail(who.trim().toLowerCase());
    if (!user) throw notFound(`Dashboard user ${who} not found`);
    if (!user.disabledAt) await tx.disableUser(user.id, now);
    const ended = await tx.deleteSessionsOf(user.id);
    for (const membership of await tx.membershipsOf(user.id))
      await tx.audit({
        organisationId: membership.organisationId,
        userId: null,
        action: 'user.disabled',
        details: { email: user.email, sessions_ended: ended },
        address: null,
      });
    return { id: user.id, email: user.email };
  });
}

async function requireOrganisation(ctx: DomainContext, organisationId: string): Promise<void> {
  if (!isUuid(organisationId) || !(await ctx.store.organisations.findById(organisationId)))
    throw notFound(`Organisation ${organisationId} not found`);
}
