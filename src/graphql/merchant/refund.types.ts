import 'reflect-metadata';
import { Field, ID, InputType, Int, ObjectType, registerEnumType } from 'type-graphql';
import type { Decimal } from '../../domain/shared/money.js';
import { CryptoTicker } from '../checkout-session.types.js';
import { DateTimeScalar, DecimalScalar } from '../scalars.js';

/** The merchant schema's refunds (docs/api/refunds.md#graphql): the REST refund's fields in camelCase. */

export enum RefundKind {
  FULL = 'full',
  EXCESS = 'excess',
  PART = 'part',
}
registerEnumType(RefundKind, {
  name: 'RefundKind',
  description: 'full: all received; excess: the overpaid part; part: an amount given.',
});

export enum RefundBasis {
  TOKEN = 'token',
  FIAT = 'fiat',
}
registerEnumType(RefundBasis, { name: 'RefundBasis', description: "The amount's unit: the asset, or the fiat." });

export enum RefundStatus {
  AWAITING_DESTINATION = 'awaiting_destination',
  READY = 'ready',
  SENT = 'sent',
  CONFIRMED = 'confirmed',
  CANCELLED = 'cancelled',
  EXPIRED = 'expired',
  FAILED = 'failed',
}
registerEnumType(RefundStatus, { name: 'RefundStatus', description: 'docs/api/refunds.md#states' });

export enum RefundDestinationSource {
  MERCHANT = 'merchant',
  CLAIM = 'claim',
  CLAIM_SIGNED = 'claim_signed',
}
registerEnumType(RefundDestinationSource, {
  name: 'RefundDestinationSource',
  description: 'Who gave the destination: the merchant, the payer on the claim page, or the paying wallet signing.',
});

@ObjectType('MerchantRefund', { description: 'A refund of a session (docs/api/refunds.md#the-refund).' })
export class MerchantRefund {
  @Field(() => ID)
  id!: string;

  @Field(() => ID)
  sessionId!: string;

  @Field(() => RefundKind)
  kind!: RefundKind;

  @Field(() => RefundBasis)
  basis!: RefundBasis;

  @Field(() => RefundStatus)
  status!: RefundStatus;

  @Field(() => String)
  network!: string;

  @Field(() => String)
  chainId!: string;

  @Field(() => CryptoTicker)
  cryptoCurrency!: CryptoTicker;

  @Field(() => String, { nullable: true, description: 'Null for the native coin.' })
  tokenAddress!: string | null;

  @Field(() => DecimalScalar)
  amount!: Decimal;

  @Field(() => String, { description: "The amount in the asset's smallest unit: what the transfer carries." })
  baseUnits!: string;

  @Field(() => String, { nullable: true })
  fiatCurrency!: string | null;

  @Field(() => DecimalScalar, { nullable: true })
  amountFiat!: Decimal | null;

  @Field(() => DecimalScalar, { nullable: true })
  unitPriceFiat!: Decimal | null;

  @Field(() => String, { nullable: true })
  destination!: string | null;

  @Field(() => RefundDestinationSource, { nullable: true })
  destinationSource!: RefundDestinationSource | null;

  @Field(() => String, { nullable: true, description: 'claim_signed: the paying wallet that signed.' })
  proofAddress!: string | null;

  @Field(() => String, { nullable: true, description: 'The claim page; null when the merchant gave the destination.' })
  claimUrl!: string | null;

  @Field(() => DateTimeScalar, { nullable: true })
  claimExpiresAt!: Date | null;

  @Field(() => String, { nullable: true })
  txHash!: string | null;

  @Field(() => String, { nullable: true })
  blockNumber!: string | null;

  @Field(() => Int)
  confirmations!: number;

  @Field(() => String, { nullable: true })
  failureReason!: string | null;

  @Field(() => String, { nullable: true })
  note!: string | null;

  @Field(() => DateTimeScalar)
  createdAt!: Date;

  @Field(() => DateTimeScalar)
  updatedAt!: Date;
}

@InputType({ description: 'What POST /checkout-sessions/:id/refunds takes (docs/api/refunds.md#create).' })
export class CreateRefundInput {
  @Field(() => RefundKind)
  kind!: RefundKind;

  @Field(() => RefundBasis, { nullable: true, description: 'Default TOKEN.' })
  basis?: RefundBasis;

  @Field(() => DecimalScalar, { nullable: true, description: 'kind PART, basis TOKEN: the amount in the asset.' })
  amount?: Decimal;

  @Field(() => DecimalScalar, { nullable: true, description: "basis FIAT: the amount in the session's currency." })
  amountFiat?: Decimal;

  @Field(() => CryptoTicker, { nullable: true })
  cryptoCurrency?: CryptoTicker;

  @Field(() => String, { nullable: true })
  network?: string;

  @Field(() => String, { nullable: true, description: 'Given: ready. Absent: a claim link for the payer.' })
  destination?: string;

  @Field(() => Int, { nullable: true, description: 'The claim link’s life in minutes (5–43200, default 10080).' })
  claimExpiresInMinutes?: number;

  @Field(() => String, { nullable: true })
  note?: string;
}
