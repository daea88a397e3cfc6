import { z } from 'zod';
import { lineItemSchema } from '../sessions/checkout-session.views.js';
import { formatAmount, type Decimal } from '../shared/money.js';
import {
  fixedTotal,
  IDENTITY_OPTIONS,
  PAYMENT_LINK_STATES,
  paymentLinkState,
  requiresPayerIdentity,
  type PaymentLink,
} from './payment-link.js';
import { amount, dateTime, freeForm, uuid } from '../shared/view-fields.js';

/** The merchant's view of a link (REST, CLI --json): the one source of its shape. */
export const paymentLinkViewSchema = z
  .strictObject({
    payment_link_id: uuid,
    organisation_id: uuid,
    url: z.url().describe('{checkout_base_url}/l/<payment_link_id>'),
    name: z.string(),
    currency: z.string(),
    items: z.array(lineItemSchema).nullable().describe('The fixed basket; null for an open amount'),
    amount_fiat: z
      .strictObject({ min: amount, max: amount })
      .nullable()
      .describe('The open amount; null for a fixed basket'),
    total_amount_fiat: amount.nullable(),
    expires_in_minutes: z.int(),
    identity_options: z.array(z.enum(IDENTITY_OPTIONS)),
    anonymous: z.boolean(),
    requires_payer_identity: z.boolean(),
    max_uses: z.int().nullable(),
    uses: z.int().describe('Sessions of the link paid or still open (an open one holds its use until it expires)'),
    active: z.boolean(),
    state: z.enum(PAYMENT_LINK_STATES),
    expires_at: dateTime.nullable(),
    metadata: freeForm.describe('Free-form'),
    created_at: dateTime,
    updated_at: dateTime,
  })
  .describe('A payment link as its merchant sees it (docs/hosted-pages.md#payment-links)');

export type PaymentLinkView = z.infer<typeof paymentLinkViewSchema>;

const openAmount = (min: Decimal, max: Decimal) => ({ min: formatAmount(min), max: formatAmount(max) });

export const paymentLinkUrl = (checkoutBaseUrl: string, id: string) => `${checkoutBaseUrl}/l/${id}`;

/** `url` is `{checkout_base_url}/l/<payment_link_id>`. */
export function toPaymentLinkView(link: PaymentLink, checkoutBaseUrl: string, now: Date): PaymentLinkView {
  const total = fixedTotal(link);
  return {
    payment_link_id: link.id,
    organisation_id: link.organisationId,
    url: paymentLinkUrl(checkoutBaseUrl, link.id),
    name: link.name,
    currency: link.currency,
    items:
      link.items.length === 0
        ? null
        : link.items.map((item) => ({
            name: item.name,
            quantity: item.quantity,
            unit_price: formatAmount(item.unitPrice),
            total_price: formatAmount(item.unitPrice.times(item.quantity)),
            product_id: item.productId,
          })),
    amount_fiat: link.amountMin && link.amountMax ? openAmount(link.amountMin, link.amountMax) : null,
    total_amount_fiat: total ? formatAmount(total) : null,
    expires_in_minutes: link.expiresInMinutes,
    identity_options: [...link.identityOptions],
    anonymous: link.anonymous,
    requires_payer_identity: requiresPayerIdentity(link),
    max_uses: link.maxUses,
    uses: link.uses,
    active: link.active,
    state: paymentLinkState(link, now),
    expires_at: link.expiresAt?.toISOString() ?? null,
    metadata: { ...link.metadata },
    created_at: link.createdAt.toISOString(),
    updated_at: link.updatedAt.toISOString(),
  };
}

/**
 * What a payer sees of a link that takes payers (the /l page's data, GraphQL's paymentLink): never the organisation
 * id, the metadata or the counts.
 */
export function toPayerLinkView(link: PaymentLink) {
  const total = fixedTotal(link);
  return {
    id: link.id,
    name: link.name,
    currency: link.currency,
    items: link.items.map((item) => ({
      name: item.name,
      quantity: item.quantity,
      unitPrice: formatAmount(item.unitPrice),
      totalPrice: formatAmount(item.unitPrice.times(item.quantity)),
    })),
    totalAmountFiat: total ? formatAmount(total) : null,
    amountMin: link.amountMin ? formatAmount(link.amountMin) : null,
    amountMax: link.amountMax ? formatAmount(link.amountMax) : null,
    identityOptions: [...link.identityOptions],
    requiresPayerIdentity: requiresPayerIdentity(link),
  };
}
