import { Arg, Ctx, FieldResolver, ID, Query, Resolver, Root } from 'type-graphql';
import { brandingOf, logoPath } from '../domain/organisations/branding.js';
import type { Branding } from '../domain/organisations/branding-ports.js';
import { paymentLinkForPayer } from '../domain/payment-links/payment-links.js';
import { toPayerLinkView } from '../domain/payment-links/payment-link.views.js';
import type { GraphqlContext } from './context.js';
import { CheckoutSession } from './checkout-session.types.js';
import { Merchant, PaymentLink, PaymentLinkState } from './payment-link.types.js';

const toMerchant = (branding: Branding): Merchant => ({
  name: branding.organisationName,
  logoUrl: branding.logoSha256 ? logoPath(branding.logoSha256) : null,
  brandColor: branding.brandColor,
});

/** The payer's view of a payment link (docs/api/graphql.md#schema-overview): the same rules as the link page. */
@Resolver(() => PaymentLink)
export class PaymentLinkResolver {
  @Query(() => PaymentLink, {
    nullable: true,
    description:
      'A payment link by its id, as its payers see it. Errors: BAD_USER_INPUT for a malformed id, NOT_FOUND for an ' +
      'unknown one. ' +
      'An inactive, expired or used-up link is only its id and state: every other field is null.',
  })
  async paymentLink(@Arg('id', () => ID) id: string, @Ctx() { domain }: GraphqlContext): Promise<PaymentLink> {
    const found = await paymentLinkForPayer(domain, id);
    if (found.state !== 'active') return unavailableLink(found.id, found.state as PaymentLinkState);
    const { link, branding } = found;
    return {
      ...toPayerLinkView(link),
      anonymous: link.anonymous,
      state: PaymentLinkState.ACTIVE,
      merchant: toMerchant(branding ?? { organisationName: '', brandColor: null, logoSha256: null }),
    };
  }
}

const unavailableLink = (id: string, state: PaymentLinkState): PaymentLink => ({
  id,
  state,
  name: null,
  currency: null,
  items: null,
  totalAmountFiat: null,
  amountMin: null,
  amountMax: null,
  identityOptions: null,
  anonymous: null,
  requiresPayerIdentity: null,
  merchant: null,
});

/** The merchant on a checkout session: name, logo and colour for the page's header. */
@Resolver(() => CheckoutSession)
export class CheckoutSessionMerchantResolver {
  @FieldResolver(() => Merchant, {
    nullable: true,
    description: 'The merchant as the hosted page shows it (name, logo, brand colour).',
  })
  async merchant(@Root() session: CheckoutSession, @Ctx() { domain }: GraphqlContext): Promise<Merchant | null> {
    if (!session.organisationId) return null;
    const branding = await brandingOf(domain, session.organisationId);
    return branding ? toMerchant(branding) : null;
  }
}
