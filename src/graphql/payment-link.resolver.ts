import { Arg, Ctx, FieldResolver, ID, Query, Resolver, Root } from 'type-graphql';
import { brandingOf, logoPath, type Branding } from '../domain/branding.js';
import { paymentLinkState, requiresPayerIdentity } from '../domain/payment-link.js';
import { findPaymentLink } from '../domain/payment-links.js';
import { formatAmount } from '../domain/money.js';
import type { GraphqlContext } from './context.js';
import { mapDomainErrors } from './errors.js';
import { CheckoutSession } from './types.js';
import { Merchant, PaymentLink, type PaymentLinkState } from './payment-link.types.js';

const toMerchant = (branding: Branding): Merchant => ({
  name: branding.organisationName,
  logoUrl: branding.logoSha256 ? logoPath(branding.logoSha256) : null,
  brandColor: branding.brandColor,
});

/** The payer's view of a payment link (issue 12): the same domain function the link page uses. */
@Resolver(() => PaymentLink)
export class PaymentLinkResolver {
  @Query(() => PaymentLink, {
    nullable: true,
    description: 'A payment link by its id, as its payers see it. Errors: BAD_USER_INPUT for a malformed id, NOT_FOUND for an unknown one. An inactive, expired or used-up link is returned with its state.',
  })
  async paymentLink(@Arg('id', () => ID) id: string, @Ctx() { domain }: GraphqlContext): Promise<PaymentLink> {
    const link = await mapDomainErrors(() => findPaymentLink(domain, id));
    const branding = await brandingOf(domain, link.organisationId);
    return {
      id: link.id,
      name: link.name,
      currency: link.currency,
      items: link.items.map((item) => ({ name: item.name, quantity: item.quantity, unitPrice: formatAmount(item.unitPrice), totalPrice: formatAmount(item.unitPrice.times(item.quantity)) })),
      totalAmountFiat: link.items.length > 0 ? formatAmount(link.items.reduce((sum, item) => sum.plus(item.unitPrice.times(item.quantity)), link.items[0]!.unitPrice.times(0))) : null,
      amountMin: link.amountMin ? formatAmount(link.amountMin) : null,
      amountMax: link.amountMax ? formatAmount(link.amountMax) : null,
      identityOptions: [...link.identityOptions],
      anonymous: link.anonymous,
      requiresPayerIdentity: requiresPayerIdentity(link),
      state: paymentLinkState(link, domain.clock()) as PaymentLinkState,
      merchant: toMerchant(branding ?? { organisationName: '', brandColor: null, logoSha256: null }),
    };
  }
}

/** The merchant on a checkout session: name, logo and colour for the page's header. */
@Resolver(() => CheckoutSession)
export class CheckoutSessionMerchantResolver {
  @FieldResolver(() => Merchant, { nullable: true, description: 'The merchant as the hosted page shows it (name, logo, brand colour).' })
  async merchant(@Root() session: CheckoutSession, @Ctx() { domain }: GraphqlContext): Promise<Merchant | null> {
    if (!session.organisationId) return null;
    const branding = await brandingOf(domain, session.organisationId);
    return branding ? toMerchant(branding) : null;
  }
}
