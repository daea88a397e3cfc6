import type { DomainContext } from '../context.js';
import { notFound } from '../shared/errors.js';
import type { Refund } from './refund.js';
import type { RefundStatusChange } from './refund-ports.js';

/** Reads of refunds for the merchant: another organisation's refund or session is not found (404), never shown. */

export async function getRefund(ctx: DomainContext, organisationId: string, refundId: string): Promise<Refund> {
  const refund = await ctx.store.refunds.findById(refundId);
  if (!refund || refund.organisationId !== organisationId) throw notFound(`Refund ${refundId} not found`);
  return refund;
}

export async function listSessionRefunds(
  ctx: DomainContext,
  organisationId: string,
  sessionId: string,
): Promise<Refund[]> {
  const session = await ctx.store.refunds.findSession(sessionId);
  if (!session || session.organisationId !== organisationId) throw notFound(`Checkout session ${sessionId} not found`);
  return ctx.store.refunds.listOfSession(sessionId);
}

export async function refundHistory(
  ctx: DomainContext,
  organisationId: string,
  refundId: string,
): Promise<RefundStatusChange[]> {
  await getRefund(ctx, organisationId, refundId);
  return ctx.store.refunds.historyOf(refundId);
}
