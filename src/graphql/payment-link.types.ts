import 'reflect-metadata';
import { Field, ID, Int, ObjectType, registerEnumType } from 'type-graphql';
import type { PaymentLinkState as DomainLinkState } from '../domain/payment-links/payment-link.js';
import { sameValues } from './same-values.js';
import { DecimalScalar } from './scalars.js';

/** GraphQL names (USED_UP) over the domain's values (used_up). */
export enum PaymentLinkState {
  ACTIVE = 'active',
  INACTIVE = 'inactive',
  EXPIRED = 'expired',
  USED_UP = 'used_up',
}
registerEnumType(PaymentLinkState, {
  name: 'PaymentLinkState',
  description: 'Whether a payment link takes payers now, and if not, why.',
});
sameValues<`${PaymentLinkState}`, DomainLinkState>(true);

@ObjectType({ description: 'The merchant as the hosted pages show it: name, logo (served by Kassa) and brand colour.' })
export class Merchant {
  @Field(() => String)
  name!: string;

  @Field(() => String, {
    nullable: true,
    description: 'Path of the logo on this Kassa (/brand/logo/<sha256>); null without a logo.',
  })
  logoUrl!: string | null;

  @Field(() => String, { nullable: true, description: "Brand colour #rrggbb; null for Kassa's own." })
  brandColor!: string | null;
}

@ObjectType({ description: "A line of a payment link's fixed basket." })
export class PaymentLinkItem {
  @Field(() => String)
  name!: string;

  @Field(() => Int)
  quantity!: number;

  @Field(() => DecimalScalar)
  unitPrice!: string;

  @Field(() => DecimalScalar)
  totalPrice!: string;
}

@ObjectType({
  description:
    'A payment link as its payers see it (docs/hosted-pages.md#payment-links): what is sold, what is asked, ' +
    'whether it takes payers. ' +
    'A link that takes no payers (state other than ACTIVE) shows only its id and state; every other field is then ' +
    'null.',
})
export class PaymentLink {
  @Field(() => ID)
  id!: string;

  @Field(() => String, { nullable: true, description: 'Null unless the link is ACTIVE.' })
  name!: string | null;

  @Field(() => String, { nullable: true, description: 'Quote currency (ISO 4217). Null unless the link is ACTIVE.' })
  currency!: string | null;

  @Field(() => [PaymentLinkItem], {
    nullable: true,
    description: 'The fixed basket; empty for an open amount. Null unless the link is ACTIVE.',
  })
  items!: PaymentLinkItem[] | null;

  @Field(() => DecimalScalar, {
    nullable: true,
    description: 'Total of the fixed basket; null for an open amount, or unless the link is ACTIVE.',
  })
  totalAmountFiat!: string | null;

  @Field(() => DecimalScalar, { nullable: true, description: 'Open amount: the least the payer may choose.' })
  amountMin!: string | null;

  @Field(() => DecimalScalar, { nullable: true, description: 'Open amount: the most the payer may choose.' })
  amountMax!: string | null;

  @Field(() => [String], {
    nullable: true,
    description: 'What the payer is asked for: email, telegram, username. Null unless the link is ACTIVE.',
  })
  identityOptions!: string[] | null;

  @Field(() => Boolean, { nullable: true, description: 'Null unless the link is ACTIVE.' })
  anonymous!: boolean | null;

  @Field(() => Boolean, { nullable: true, description: 'Null unless the link is ACTIVE.' })
  requiresPayerIdentity!: boolean | null;

  @Field(() => PaymentLinkState)
  state!: PaymentLinkState;

  @Field(() => Merchant, { nullable: true, description: 'Null unless the link is ACTIVE.' })
  merchant!: Merchant | null;
}
