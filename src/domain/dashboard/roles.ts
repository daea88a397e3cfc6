import { forbidden } from '../shared/errors.js';

/** The roles a person may hold in an organisation, least to most (docs/dashboard.md#roles). */
export const DASHBOARD_ROLES = ['viewer', 'support', 'developer', 'admin', 'owner'] as const;
export type DashboardRole = (typeof DASHBOARD_ROLES)[number];

/**
 * What the dashboard lets a person do; each permission belongs to the least role that has it, and every role
 * has what the roles below it have. docs/dashboard.md#roles prints this table; the server checks it on every call.
 */
export const PERMISSIONS = {
  /** Read the organisation, its sessions, payments, webhooks, links and keys (never a secret). */
  read: 'viewer',
  /** Send a webhook delivery again. */
  redeliver_webhooks: 'support',
  /** Add, disable and rotate webhook endpoints; create and revoke API keys. */
  manage_webhooks: 'developer',
  manage_keys: 'developer',
  /** Payment links, settings (branding, tolerance) and the organisation's dashboard users. */
  manage_links: 'admin',
  manage_settings: 'admin',
  manage_users: 'admin',
  /** Collect deposit addresses' money: it can only ever move to the organisation's wallet (docs/decisions/0035). */
  collect_deposits: 'admin',
  /** Create and cancel refunds (docs/api/refunds.md). */
  manage_refunds: 'admin',
  /** The wallet and the receiving mode; the audit log. */
  manage_wallet: 'owner',
  read_audit_log: 'owner',
} as const satisfies Record<string, DashboardRole>;
export type DashboardPermission = keyof typeof PERMISSIONS;

export function isDashboardRole(value: string): value is DashboardRole {
  return (DASHBOARD_ROLES as readonly string[]).includes(value);
}

export function roleRank(role: DashboardRole): number {
  return DASHBOARD_ROLES.indexOf(role);
}

export function roleAllows(role: DashboardRole, permission: DashboardPermission): boolean {
  return roleRank(role) >= roleRank(PERMISSIONS[permission]);
}

/** Throws `forbidden` unless `role` has `permission`. */
export function requirePermission(role: DashboardRole, permission: DashboardPermission): void {
  if (!roleAllows(role, permission))
    throw forbidden(
      `The ${role} role may not ${permission.replace(/_/g, ' ')}; ask an organisation ${PERMISSIONS[permission]}`,
    );
}
