import type { DomainContext } from '../context.js';
import { notFound } from '../shared/errors.js';
import {
  createApiKey,
  listApiKeys,
  revokeApiKey,
  type ApiKeySummary,
  type IssuedApiKey,
} from '../organisations/api-keys.js';
import { brandingOf, setBranding } from '../organisations/branding.js';
import { setPaymentPolicy } from '../organisations/organisations.js';
import type { PaymentLink, PaymentLinkPatch } from '../payment-links/payment-link.js';
import {
  createPaymentLink,
  getPaymentLink,
  listPaymentLinks,
  updatePaymentLink,
  type CreatePaymentLinkInput,
} from '../payment-links/payment-links.js';
import { createRefund, type CreateRefundInput } from '../refunds/create-refund.js';
import { cancelRefund } from '../refunds/refund-transitions.js';
import { getRefund, listSessionRefunds } from '../refunds/refunds.js';
import type { Refund } from '../refunds/refund.js';
import type { DashboardPermission } from './roles.js';
import { requirePermission } from './roles.js';
import { roleIn, type Principal } from './sign-in.js';

/**
 * Payment links, API keys, settings and refunds in the dashboard (docs/dashboard.md#links-keys-and-settings): the role
 * is checked here, the rules are the use-cases the REST API and the CLI call, and every change is audited once made.
 */

type Details = Readonly<Record<string, string | number | boolean | null>>;

/** Who is asking, checked against the permission; the audit line once the change is made. */
function actor(ctx: DomainContext, principal: Principal, organisationId: string, address: string) {
  return {
    check(permission: DashboardPermission) {
      requirePermission(roleIn(principal, organisationId), permission);
    },
    audit: (action: string, details: Details) =>
      ctx.store.dashboard.audit({ organisationId, userId: principal.userId, action, details, address }),
  };
}

export function listLinksForDashboard(
  ctx: DomainContext,
  principal: Principal,
  organisationId: string,
): Promise<PaymentLink[]> {
  requirePermission(roleIn(principal, organisationId), 'read');
  return listPaymentLinks(ctx, organisationId);
}

export async function readLinkForDashboard(
  ctx: DomainContext,
  principal: Principal,
  organisationId: string,
  id: string,
): Promise<PaymentLink> {
  requirePermission(roleIn(principal, organisationId), 'read');
  return getPaymentLink(ctx, organisationId, id);
}

/** A new link (role `manage_links`), with the rules of `POST /payment-links`. */
export async function createLinkFromDashboard(
  ctx: DomainContext,
  principal: Principal,
  organisationId: string,
  input: CreatePaymentLinkInput,
  address: string,
): Promise<PaymentLink> {
  const by = actor(ctx, principal, organisationId, address);
  by.check('manage_links');
  const link = await createPaymentLink(ctx, organisationId, input);
  await by.audit('payment_link.created', { payment_link_id: link.id, name: link.name });
  return link;
}

/** Rename, deactivate or reactivate, change limits (role `manage_links`), with the rules of `PATCH /payment-links`. */
export async function updateLinkFromDashboard(
  ctx: DomainContext,
  principal: Principal,
  organisationId: string,
  id: string,
  patch: PaymentLinkPatch,
  address: string,
): Promise<PaymentLink> {
  const by = actor(ctx, principal, organisationId, address);
  by.check('manage_links');
  const link = await updatePaymentLink(ctx, organisationId, id, patch);
  const action =
    patch.active === false
      ? 'payment_link.deactivated'
      : patch.active
        ? 'payment_link.activated'
        : 'payment_link.updated';
  await by.audit(action, { payment_link_id: link.id, fields: Object.keys(patch).sort().join(',') });
  return link;
}

export function listKeysForDashboard(
  ctx: DomainContext,
  principal: Principal,
  organisationId: string,
): Promise<ApiKeySummary[]> {
  requirePermission(roleIn(principal, organisationId), 'read');
  return listApiKeys(ctx, organisationId);
}

/** A new API key (role `manage_keys`); its secret is in this answer only. */
export async function createKeyFromDashboard(
  ctx: DomainContext,
  principal: Principal,
  organisationId: string,
  address: string,
): Promise<IssuedApiKey> {
  const by = actor(ctx, principal, organisationId, address);
  by.check('manage_keys');
  const issued = await createApiKey(ctx, organisationId);
  await by.audit('api_key.created', { api_key_id: issued.id, api_key: issued.apiKey });
  return issued;
}

/** Revokes one of the organisation's keys at once (role `manage_keys`); another organisation's is not found. */
export async function revokeKeyFromDashboard(
  ctx: DomainContext,
  principal: Principal,
  organisationId: string,
  keyId: string,
  address: string,
): Promise<ApiKeySummary> {
  const by = actor(ctx, principal, organisationId, address);
  by.check('manage_keys');
  const key = (await listApiKeys(ctx, organisationId)).find((candidate) => candidate.id === keyId);
  if (!key) throw notFound(`API key ${keyId} not found`);
  await revokeApiKey(ctx, key.apiKey);
  await by.audit('api_key.revoked', { api_key_id: key.id, api_key: key.apiKey });
  return (await listApiKeys(ctx, organisationId)).find((candidate) => candidate.id === keyId)!;
}

export interface DashboardSettings {
  readonly brandColor: string | null;
  readonly logoSha256: string | null;
  /** A percentage with 2 decimals, as `kassa orgs policy` takes it. */
  readonly underpaymentTolerancePercent: string;
  readonly latePaymentWindowMinutes: number;
}

export async function readSettingsForDashboard(
  ctx: DomainContext,
  principal: Principal,
  organisationId: string,
): Promise<DashboardSettings> {
  requirePermission(roleIn(principal, organisationId), 'read');
  const [organisation, branding] = await Promise.all([
    ctx.store.organisations.findById(organisationId),
    brandingOf(ctx, organisationId),
  ]);
  if (!organisation || organisation.deleted || !branding) throw notFound(`Organisation ${organisationId} not found`);
  return {
    brandColor: branding.brandColor,
    logoSha256: branding.logoSha256,
    underpaymentTolerancePercent: organisation.underpaymentTolerancePercent.toFixed(2),
    latePaymentWindowMinutes: organisation.latePaymentWindowMinutes,
  };
}

export interface DashboardSettingsChange {
  /** `#rrggbb`; empty clears it. */
  readonly brandColor?: string;
  readonly underpaymentTolerancePercent?: string;
  readonly latePaymentWindowMinutes?: string;
}

/** Branding and the payment policy (role `manage_settings`), with the rules of `kassa orgs update` and `policy`. */
export async function updateSettingsFromDashboard(
  ctx: DomainContext,
  principal: Principal,
  organisationId: string,
  change: DashboardSettingsChange,
  address: string,
): Promise<DashboardSettings> {
  const by = actor(ctx, principal, organisationId, address);
  by.check('manage_settings');
  const policy = {
    ...(change.underpaymentTolerancePercent !== undefined
      ? { underpaymentTolerancePercent: change.underpaymentTolerancePercent }
      : {}),
    ...(change.latePaymentWindowMinutes !== undefined
      ? { latePaymentWindowMinutes: change.latePaymentWindowMinutes }
      : {}),
  };
  if (Object.keys(policy).length > 0) await setPaymentPolicy(ctx, organisationId, policy);
  if (change.brandColor !== undefined) await setBranding(ctx, organisationId, { brandColor: change.brandColor });
  const after = await readSettingsForDashboard(ctx, principal, organisationId);
  const details: Record<string, string | number | null> = {};
  if (change.brandColor !== undefined) details.brand_color = after.brandColor;
  if (policy.underpaymentTolerancePercent !== undefined)
    details.underpayment_tolerance_percent = after.underpaymentTolerancePercent;
  if (policy.latePaymentWindowMinutes !== undefined)
    details.late_payment_window_minutes = after.latePaymentWindowMinutes;
  await by.audit('settings.updated', details);
  return after;
}

/**
 * Uploads (bytes) or removes (null) the logo (role `manage_settings`), with the rules of `kassa orgs update --logo`:
 * PNG or WebP told by their bytes, at most 100 KB (docs/decisions/0017-logos-served-by-kassa.md).
 */
export async function setLogoFromDashboard(
  ctx: DomainContext,
  principal: Principal,
  organisationId: string,
  logo: Buffer | null,
  address: string,
): Promise<DashboardSettings> {
  const by = actor(ctx, principal, organisationId, address);
  by.check('manage_settings');
  await setBranding(ctx, organisationId, { logo });
  const after = await readSettingsForDashboard(ctx, principal, organisationId);
  await by.audit('settings.updated', { logo_sha256: after.logoSha256 });
  return after;
}

/** A session's refunds (role `read`), oldest first. */
export function listRefundsForDashboard(
  ctx: DomainContext,
  principal: Principal,
  organisationId: string,
  sessionId: string,
): Promise<Refund[]> {
  requirePermission(roleIn(principal, organisationId), 'read');
  return listSessionRefunds(ctx, organisationId, sessionId);
}

export function readRefundForDashboard(
  ctx: DomainContext,
  principal: Principal,
  organisationId: string,
  id: string,
): Promise<Refund> {
  requirePermission(roleIn(principal, organisationId), 'read');
  return getRefund(ctx, organisationId, id);
}

/** A refund of a session (role `manage_refunds`), with the rules of `POST /checkout-sessions/:id/refunds`. */
export async function createRefundFromDashboard(
  ctx: DomainContext,
  principal: Principal,
  organisationId: string,
  sessionId: string,
  input: CreateRefundInput,
  address: string,
): Promise<Refund> {
  const by = actor(ctx, principal, organisationId, address);
  by.check('manage_refunds');
  const { refund } = await createRefund(ctx, organisationId, sessionId, input);
  await by.audit('refund.created', {
    refund_id: refund.id,
    session_id: sessionId,
    kind: refund.kind,
    amount: refund.amount.toFixed(),
    crypto_currency: refund.asset,
  });
  return refund;
}

/** Cancels a refund not yet sent (role `manage_refunds`). */
export async function cancelRefundFromDashboard(
  ctx: DomainContext,
  principal: Principal,
  organisationId: string,
  id: string,
  address: string,
): Promise<Refund> {
  const by = actor(ctx, principal, organisationId, address);
  by.check('manage_refunds');
  const refund = await cancelRefund(ctx, organisationId, id);
  await by.audit('refund.cancelled', { refund_id: refund.id, session_id: refund.sessionId });
  return refund;
}
