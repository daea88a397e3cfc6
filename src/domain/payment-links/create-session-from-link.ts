import { createHash, randomUUID } from 'node:crypto';
import type { CheckoutSession } from '../sessions/checkout-session.js';
import type { DomainContext } from '../context.js';
import {
  createCheckoutSession,
  PaymentLinkUnavailable,
  type CreateCheckoutInput,
  type SessionOrigin,
} from '../sessions/create-checkout-session.js';
import { conflict, gone, invalid } from '../shared/errors.js';
import { Decimal } from '../shared/money.js';
import { getCheckoutSession } from '../sessions/get-checkout-session.js';
import {
  checkPayerIdentity,
  payerId,
  type PayerIdentity,
  type PayerIdentityInput,
} from '../sessions/payer-identity.js';
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

/** Where a link session comes from: the spec's fields, from the link; `requestHash` is what the payer asked. */
export function linkOrigin(link: PaymentLink, requestHash: string): SessionOrigin {
  return {
    source: 'payment_link',
    fromPaymentLink: true,
    productPaymentLinkId: link.id,
    anonymous: link.anonymous,
    requiresPayerIdentity: requiresPayerIdentity(link),
    identityOptions: [...link.identityOptions],
    cause: `created from payment link ${link.id}`,
    requestHash,
  };
}

/**
 * On an anonymous fixed-price link the payer's Idempotency-Key is all that tells two visits apart, so a short one
 * could be guessed and answer another payer's session (docs/hosted-pages.md#payment-links).
 */
export const PAYER_IDEMPOTENCY_KEY_MIN_LENGTH = 16;

/**
 * A use is counted atomically with the session's write, so racing visits never pass max_uses. The Idempotency-Key is
 * scoped to the link and the payer's details, so a key never answers or reveals another payer's session.
 */
export async function createSessionFromLink(
  ctx: DomainContext,
  linkId: string,
  input: LinkSessionInput,
  idempotencyKey?: string,
): Promise<LinkSessionResult> {
  const link = await findPaymentLink(ctx, linkId);
  if (idempotencyKey !== undefined && idempotencyKey.length < PAYER_IDEMPOTENCY_KEY_MIN_LENGTH) {
    throw invalid([
      `Idempotency-Key must be at least ${PAYER_IDEMPOTENCY_KEY_MIN_LENGTH} characters on this public route`,
    ]);
  }
  const visit = readVisit(link, input);
  const requestHash = sha256(JSON.stringify(visit.asked));
  // Payers' keys live beside the merchant's own keys of the organisation: scope them to the link and the visit.
  const scopedKey =
    idempotencyKey === undefined
      ? undefined
      : `link:${link.id}:${sha256(JSON.stringify([idempotencyKey, requestHash]))}`;
  if (scopedKey !== undefined) {
    const existing = await ctx.store.sessions.findIdempotencyKey(link.organisationId, scopedKey);
    // A retry of a visit that already made its session: no new use, even if the link is used up since.
    if (existing) return { session: await getCheckoutSession(ctx, existing.sessionId), replayed: true };
  }
  refuseUnavailable(link, ctx.clock());
  const merchant = { organisationId: link.organisationId, apiKeyId: LINK_SESSIONS_HAVE_NO_API_KEY };
  const payerKey = await ctx.store.paymentLinks.payerIdKey();
  const checkout = checkoutInput(
    link,
    visit,
    payerId(payerKey, link.organisationId, visit.identity, scopedKey ?? randomUUID()),
  );
  try {
    // The use is counted in the session's own write: never beyond max_uses, never for a replay or a failed create.
    return await createCheckoutSession(ctx, merchant, checkout, scopedKey, linkOrigin(link, requestHash));
  } catch (error) {
    if (!(error instanceof PaymentLinkUnavailable)) throw error;
    // Someone else took the last use, or the link changed meanwhile: say which.
    refuseUnavailable(await findPaymentLink(ctx, link.id), ctx.clock());
    throw usedUp(link);
  }
}

const sha256 = (text: string) => createHash('sha256').update(text, 'utf8').digest('hex');

/**
 * createCheckoutSession takes the calling merchant's key; a link session is made by the
 * link's organisation without one (nothing in create reads the key id).
 */
const LINK_SESSIONS_HAVE_NO_API_KEY = '';

function refuseUnavailable(link: PaymentLink, now: Date): void {
  switch (paymentLinkState(link, now)) {
    case 'inactive':
      throw gone(`Payment link ${link.id} is no longer active`, 'link_inactive');
    case 'expired':
      throw gone(`Payment link ${link.id} expired at ${link.expiresAt!.toISOString()}`, 'link_expired');
    case 'used_up':
      throw usedUp(link);
    default:
  }
}

// Without max_uses: the link's page hides its counts, and so does the API payers use; the code tells this 409 apart.
const usedUp = (link: PaymentLink) =>
  conflict(`Payment link ${link.id} has been used the most times allowed`, 'link_used_up');

const AMOUNT = /^\d{1,13}(\.\d{1,8})?$/;

/** A visit's details as checked: the payer's identity, the open amount, and what the payer asked (for idempotency). */
interface Visit {
  readonly identity: PayerIdentity;
  /** The payer's amount as an exact decimal; null for a fixed basket. */
  readonly amount: string | null;
  readonly asked: readonly [
    email: string | null,
    telegramId: string | null,
    username: string | null,
    amount: string | null,
  ];
}

/** Checks the identity and the amount against the link; every problem at once (400). */
function readVisit(link: PaymentLink, input: LinkSessionInput): Visit {
  const { identity, problems } = checkPayerIdentity(input, link.identityOptions, requiresPayerIdentity(link));
  let amount: string | null = null;
  if (link.amountMin && link.amountMax) {
    const typed = input.amount?.trim();
    if (typed === undefined || typed === '') problems.push('amount is required');
    else if (!AMOUNT.test(typed)) problems.push('amount must be a decimal number with at most 8 decimal places');
    else if (new Decimal(typed).lt(link.amountMin) || new Decimal(typed).gt(link.amountMax)) {
      problems.push(`amount must be from ${link.amountMin.toFixed()} to ${link.amountMax.toFixed()} ${link.currency}`);
    } else amount = new Decimal(typed).toFixed();
  } else if (input.amount !== undefined)
    problems.push('amount is not asked for by this payment link (it has a fixed price)');
  if (problems.length > 0) throw invalid(problems);
  return { identity, amount, asked: [identity.email, identity.telegramId, identity.username, amount] };
}

/** The create input of the link's session: the fixed basket, or one line at the payer's amount. */
function checkoutInput(link: PaymentLink, visit: Visit, userId: string): CreateCheckoutInput {
  const items: CreateCheckoutInput['items'] =
    visit.amount !== null
      ? [{ name: link.name, quantity: 1, unitPrice: visit.amount }]
      : link.items.map((item) => ({
          name: item.name,
          quantity: item.quantity,
          unitPrice: item.unitPrice.toFixed(),
          ...(item.productId ? { productId: item.productId } : {}),
        }));
  return {
    user: {
      id: userId,
      email: visit.identity.email,
      telegramId: visit.identity.telegramId,
      ...(visit.identity.username ? { username: visit.identity.username } : {}),
    },
    items,
    currency: link.currency,
    metadata: link.metadata,
    expiresInMinutes: link.expiresInMinutes,
  };
}
