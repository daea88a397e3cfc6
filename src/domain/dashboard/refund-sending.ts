import type { DomainContext } from '../context.js';
import { createRefund, type CreateRefundInput } from '../refunds/create-refund.js';
import type { Refund } from '../refunds/refund.js';
import {
  payoutOf,
  refundUri,
  unsignedRefundTransaction,
  type UnsignedRefundTransaction,
} from '../refunds/refund-transfer.js';
import { recordSent } from '../refunds/refund-transitions.js';
import { conflict, notFound } from '../shared/errors.js';
import { requirePermission, type DashboardPermission } from './roles.js';
import { roleIn, type Principal } from './sign-in.js';

/**
 * The session page's "Refund" button (docs/refund-claims.md#the-dashboard): create, read the transfer Kassa built for
 * the merchant's browser wallet, report the hash it sent. Role checked here, every change audited.
 */

/** Who asks, for which organisation, from which client address (the audit log's). */
export interface Actor {
  readonly principal: Principal;
  readonly organisationId: string;
  readonly address: string;
}

function allow(principal: Principal, organisationId: string, permission: DashboardPermission): void {
  requirePermission(roleIn(principal, organisationId), permission);
}

async function audit(ctx: DomainContext, by: Actor, action: string, refund: Refund): Promise<void> {
  const details = { refund_id: refund.id, session_id: refund.sessionId, status: refund.status };
  const { organisationId, principal, address } = by;
  await ctx.store.dashboard.audit({ organisationId, userId: principal.userId, action, details, address });
}

async function ownRefund(ctx: DomainContext, organisationId: string, refundId: string): Promise<Refund> {
  const refund = await ctx.store.refunds.findById(refundId);
  if (!refund || refund.organisationId !== organisationId) throw notFound(`Refund ${refundId} not found`);
  return refund;
}

export async function refundsOfSessionForDashboard(
  ctx: DomainContext,
  principal: Principal,
  organisationId: string,
  sessionId: string,
): Promise<Refund[]> {
  allow(principal, organisationId, 'read');
  const session = await ctx.store.refunds.findSession(sessionId);
  if (!session || session.organisationId !== organisationId) throw notFound(`Checkout session ${sessionId} not found`);
  return ctx.store.refunds.listOfSession(sessionId);
}

export async function createRefundFromDashboard(
  ctx: DomainContext,
  by: Actor,
  sessionId: string,
  input: CreateRefundInput,
): Promise<Refund> {
  allow(by.principal, by.organisationId, 'manage_refunds');
  const { refund } = await createRefund(ctx, by.organisationId, sessionId, input);
  await audit(ctx, by, 'refund.created', refund);
  return refund;
}

/** What the browser wallet is asked to send (EIP-1193 eth_sendTransaction), built by Kassa, never by the page. */
export interface RefundTransferForWallet {
  readonly refund: Refund;
  readonly uri: string;
  readonly transaction: UnsignedRefundTransaction;
}

export async function refundTransferForDashboard(
  ctx: DomainContext,
  principal: Principal,
  organisationId: string,
  refundId: string,
): Promise<RefundTransferForWallet> {
  allow(principal, organisationId, 'manage_refunds');
  const refund = await ownRefund(ctx, organisationId, refundId);
  if (refund.status !== 'ready')
    throw conflict(`Refund ${refund.id} is ${refund.status}: only a ready refund is sent`, 'refund_state');
  const payout = payoutOf(refund);
  return { refund, uri: refundUri(payout), transaction: unsignedRefundTransaction(payout) };
}

export async function reportRefundSentFromDashboard(
  ctx: DomainContext,
  by: Actor,
  refundId: string,
  sent: { txHash: string; from: string | null },
): Promise<Refund> {
  allow(by.principal, by.organisationId, 'manage_refunds');
  await ownRefund(ctx, by.organisationId, refundId);
  const refund = await recordSent(ctx, refundId, { txHash: sent.txHash, sentFrom: sent.from });
  await audit(ctx, by, 'refund.sent', refund);
  return refund;
}
