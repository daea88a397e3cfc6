import { createHash, randomUUID } from 'node:crypto';
import type { CheckoutSession } from './checkout-session.js';
import type { DomainContext } from './context.js';
import { createCheckoutSession, PaymentLinkUnavailable, type CreateCheckoutInput, type SessionOrigin } from './create-checkout-session.js';
import { conflict, gone, invalid } from './errors.js';
import { Decimal } from './money.js';
import { checkPayerIdentity, payerId, type PayerIdentityInput } from './payer-identity.js';
import { paymentLinkState, requiresPayerIdentity, type PaymentLink } from './payment-link.js';
import { findPaymentLink } from './payment-links.js';

/** What the payer sends on the link's page: their identity (as the link asks) and, for an open amount, the amount. */
export interface LinkSessionInput extends PayerIdentityInput {
  /** Exact decimal string in the link's currency; only for an open amount. */
  readonly amount?: string;
}

export interface LinkSessionResult {
  readonly session: CheckoutSession;
  readonly replayed: boolean;
}

/** Where a link session comes from: the spec's fields, from the link. */
export function linkOrigin(link: PaymentLink): SessionOrigin {
  return {
    source: 'payment_link',
    fromPaymentLink: true,
    productPaymentLinkId: link.id,
    anonymous: link.anonymous,
    requiresPayerIdentity: requiresPayerIdentity(link),
    identityOptions: [...link.identityOptions],
    cause: `created from payment link ${link.id}`,
  };
}

/**
 * A payer visits a payment link: checks the link takes payers (410 inactive or expired,
 * 409 used up), the payer's identity and amount (400), counts one use atomically (never
 * beyond max_uses, however many visits race), and creates the checkout session exactly as
 * the merchant API would, with the link's origin fields. A replayed Idempotency-Key answers
 * the first session and counts no use.
 */
export async function createSessionFromLink(ctx: DomainContext, linkId: string, input: LinkSessionInput, idempotencyKey?: string): Promise<LinkSessionResult> {
  const link = await findPaymentLink(ctx, linkId);
  // Payers' keys live beside the merchant's own keys of the organisation: scope them to the link.
  const scopedKey = idempotencyKey === undefined ? undefined : `link:${link.id}:${createHash('sha256').update(idempotencyKey).digest('hex')}`;
  const merchant = { organisationId: link.organisationId, apiKeyId: LINK_SESSIONS_HAVE_NO_API_KEY };
  const payerKey = await ctx.store.paymentLinks.payerIdKey();
  if (scopedKey !== undefined && (await ctx.store.sessions.findIdempotencyKey(link.organisationId, scopedKey))) {
    // A retry of a visit that already made its session: no new use, even if the link is used up since.
    return createCheckoutSession(ctx, merchant, checkoutInput(link, input, payerKey, scopedKey), scopedKey, linkOrigin(link));
  }
  refuseUnavailable(link, ctx.clock());
  try {
    // The use is counted in the session's own write: never beyond max_uses, never for a replay or a failed create.
    return await createCheckoutSession(ctx, merchant, checkoutInput(link, input, payerKey, scopedKey ?? randomUUID()), scopedKey, linkOrigin(link));
  } catch (error) {
    if (!(error instanceof PaymentLinkUnavailable)) throw error;
    // Someone else took the last use, or the link changed meanwhile: say which.
    refuseUnavailable(await findPaymentLink(ctx, link.id), ctx.clock());
    throw usedUp(link);
  }
}

/**
 * createCheckoutSession takes the calling merchant's key; a link session is made by the
 * link's organisation without one (nothing in create reads the key id).
 */
const LINK_SESSIONS_HAVE_NO_API_KEY = '';

function refuseUnavailable(link: PaymentLink, now: Date): void {
  switch (paymentLinkState(link, now)) {
    case 'inactive':
      throw gone(`Payment link ${link.id} is no longer active`);
    case 'expired':
      throw gone(`Payment link ${link.id} expired at ${link.expiresAt!.toISOString()}`);
    case 'used_up':
      throw usedUp(link);
    default:
  }
}

const usedUp = (link: PaymentLink) => conflict(`Payment link ${link.id} has been used the most times allowed (${link.maxUses})`);

const AMOUNT = /^\d{1,13}(\.\d{1,8})?$/;

/** The create input of the link's session: the fixed basket, or one line at the payer's amount. */
function checkoutInput(link: PaymentLink, input: LinkSessionInput, payerKey: Uint8Array, anonymousSeed: string): CreateCheckoutInput {
  const { identity, problems } = checkPayerIdentity(input, link.identityOptions, requiresPayerIdentity(link));
  let items: CreateCheckoutInput['items'];
  if (link.amountMin && link.amountMax) {
    const amount = input.amount?.trim();
    if (amount === undefined || amount === '') problems.push('amount is required');
    else if (!AMOUNT.test(amount)) problems.push('amount must be a decimal number with at most 8 decimal places');
    else if (new Decimal(amount).lt(link.amountMin) || new Decimal(amount).gt(link.amountMax)) {
      problems.push(`amount must be from ${link.amountMin.toFixed()} to ${link.amountMax.toFixed()} ${link.currency}`);
    }
    items = [{ name: link.name, quantity: 1, unitPrice: new Decimal(amount && AMOUNT.test(amount) ? amount : '0').toFixed() }];
  } else {
    if (input.amount !== undefined) problems.push('amount is not asked for by this payment link (it has a fixed price)');
    items = link.items.map((item) => ({ name: item.name, quantity: item.quantity, unitPrice: item.unitPrice.toFixed(), ...(item.productId ? { productId: item.productId } : {}) }));
  }
  if (problems.length > 0) throw invalid(problems);
  return {
    user: {
      id: payerId(payerKey, link.organisationId, identity, anonymousSeed),
      email: identity.email,
      telegramId: identity.telegramId,
      ...(identity.username ? { username: identity.username } : {}),
    },
    items,
    currency: link.currency,
    metadata: link.metadata,
    expiresInMinutes: link.expiresInMinutes,
  };
}
