import type { DomainContext } from '../context.js';
import { notFound } from '../shared/errors.js';
import type { AuditRecord } from './dashboard-ports.js';
import { requirePermission } from './roles.js';
import { roleIn, type Principal } from './sign-in.js';

export const AUDIT_PAGE_SIZE = 100;

/** The organisation's audit log, newest first (owner only), a page at a time: `before` is the last id seen. */
export async function readAuditLog(
  ctx: DomainContext,
  principal: Principal,
  organisationId: string,
  before?: string,
): Promise<AuditRecord[]> {
  requirePermission(roleIn(principal, organisationId), 'read_audit_log');
  const cursor = before !== undefined && /^\d{1,18}$/.test(before) ? before : undefined;
  return ctx.store.dashboard.auditLog(organisationId, AUDIT_PAGE_SIZE, cursor);
}

export interface OrganisationOverview {
  readonly id: string;
  readonly name: string;
  readonly role: string;
  readonly wallets: Readonly<Record<string, string>>;
  readonly underpaymentTolerancePercent: string;
  readonly createdAt: Date;
}

/** What any member may read of the organisation itself. */
export async function readOrganisation(
  ctx: DomainContext,
  principal: Principal,
  organisationId: string,
): Promise<OrganisationOverview> {
  const role = roleIn(principal, organisationId);
  requirePermission(role, 'read');
  const organisation = await ctx.store.organisations.findById(organisationId);
  if (!organisation || organisation.deleted) throw notFound(`Organisation ${organisationId} not found`);
  return {
    id: organisation.id,
    name: organisation.name,
    role,
    wallets: organisation.wallets,
    underpaymentTolerancePercent: organisation.underpaymentTolerancePercent.toFixed(2),
    createdAt: organisation.createdAt,
  };
}
