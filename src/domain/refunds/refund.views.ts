import { randomUUID } from 'node:crypto';
import { z } from 'zod';
import { formatAmount } from '../shared/money.js';
import { amount, dateTime, uuid } from '../shared/view-fields.js';
import type { RefundEventType } from '../shared/event-types.js';
import { DESTINATION_SOURCES, REFUND_BASES, REFUND_KINDS, REFUND_STATUSES, claimUrl, type Refund } from './refund.js';
import type { RefundEvent } from './refund-ports.js';

/** The refund as REST, the CLI's --json, webhooks and the events feed show it (docs/api/refunds.md#the-refund). */
export const refundViewSchema = z
  .strictObject({
    id: uuid,
    session_id: uuid,
    organisation_id: uuid,
    kind: z.enum(REFUND_KINDS).describe('full: all received; excess: the overpaid part; part: an amount given'),
    basis: z.enum(REFUND_BASES).describe('token: the amount was given in the asset; fiat: converted at the rate'),
    status: z.enum(REFUND_STATUSES),
    network: z.string(),
    chain_id: z.string(),
    crypto_currency: z.string().describe('The asset the money came in and goes back in'),
    token_address: z.string().nullable().describe('Null for the native coin'),
    amount: amount.describe('What is sent back, in crypto_currency'),
    base_units: z.string().regex(/^\d+$/).describe("The same in the asset's smallest unit: what the transfer carries"),
    fiat_currency: z.string().nullable().describe('Fiat basis only'),
    amount_fiat: amount.nullable().describe('Fiat basis only: the amount asked in fiat_currency'),
    unit_price_fiat: amount.nullable().describe('Fiat basis only: the rate it was converted at'),
    rate_source: z.string().nullable(),
    rated_at: dateTime.nullable(),
    destination: z.string().nullable().describe('Lower-case; null while awaiting_destination'),
    destination_source: z.enum(DESTINATION_SOURCES).nullable().describe('Who gave the destination'),
    destination_submitted_at: dateTime.nullable(),
    proof_address: z.string().nullable().describe('claim_signed: the paying wallet that signed the destination'),
    claim_url: z.string().nullable().describe('The payer claim page; null when the merchant gave the destination'),
    claim_expires_at: dateTime.nullable(),
    tx_hash: z.string().nullable(),
    sent_at: dateTime.nullable(),
    block_number: z.string().regex(/^\d+$/).nullable(),
    confirmations: z.number().int(),
    confirmed_at: dateTime.nullable(),
    failure_reason: z.string().nullable(),
    note: z.string().nullable(),
    created_at: dateTime,
    updated_at: dateTime,
  })
  .meta({ title: 'Refund' });

export type RefundView = z.infer<typeof refundViewSchema>;

/** A session's refunds (GET /checkout-sessions/:id/refunds). */
export const refundListSchema = z.strictObject({ data: z.array(refundViewSchema) }).meta({ title: 'RefundList' });

const iso = (value: Date | null) => value?.toISOString() ?? null;

export function toRefundView(refund: Refund, checkoutBaseUrl: string): RefundView {
  const { fiat, transfer } = refund;
  return {
    id: refund.id,
    session_id: refund.sessionId,
    organisation_id: refund.organisationId,
    kind: refund.kind,
    basis: refund.basis,
    status: refund.status,
    network: refund.network,
    chain_id: refund.chainId,
    crypto_currency: refund.asset,
    token_address: refund.tokenAddress,
    amount: formatAmount(refund.amount),
    base_units: refund.baseUnits.toString(),
    fiat_currency: fiat?.currency ?? null,
    amount_fiat: fiat ? formatAmount(fiat.amountFiat) : null,
    unit_price_fiat: fiat ? formatAmount(fiat.unitPriceFiat) : null,
    rate_source: fiat?.rateSource ?? null,
    rated_at: iso(fiat?.ratedAt ?? null),
    destination: refund.destination,
    destination_source: refund.destinationSource,
    destination_submitted_at: iso(refund.destinationAt),
    proof_address: refund.proof?.address ?? null,
    claim_url: claimUrl(refund, checkoutBaseUrl),
    claim_expires_at: iso(refund.claimExpiresAt),
    tx_hash: transfer.txHash,
    sent_at: iso(transfer.sentAt),
    block_number: transfer.blockNumber?.toString() ?? null,
    confirmations: transfer.confirmations,
    confirmed_at: iso(transfer.confirmedAt),
    failure_reason: refund.failureReason,
    note: refund.note,
    created_at: refund.createdAt.toISOString(),
    updated_at: refund.updatedAt.toISOString(),
  };
}

/** The outbox row of a refund event: the refund's view as it is after the change. */
export function refundEvent(refund: Refund, type: RefundEventType, at: Date, checkoutBaseUrl: string): RefundEvent {
  return {
    id: randomUUID(),
    organisationId: refund.organisationId,
    sessionId: refund.sessionId,
    type,
    payload: toRefundView(refund, checkoutBaseUrl),
    createdAt: at,
  };
}
