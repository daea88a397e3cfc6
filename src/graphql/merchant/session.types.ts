import 'reflect-metadata';
import { Field, ID, InputType, Int, ObjectType, registerEnumType } from 'type-graphql';
import type { Decimal } from '../../domain/shared/money.js';
import { CheckoutSessionStatus, CryptoTicker } from '../checkout-session.types.js';
import { DateTimeScalar, DecimalScalar } from '../scalars.js';

/**
 * The merchant schema's session types (docs/dashboard.md#merchant-graphql): what an organisation's own staff see of
 * its sessions, which the payer's schema never shows (payer, metadata, webhook attempts).
 */

export enum TimelineKind {
  CREATED = 'created',
  STATUS_CHANGED = 'status_changed',
  QUOTE_CHANGED = 'quote_changed',
  BIND = 'bind',
  TRANSFER = 'transfer',
  WEBHOOK_ATTEMPT = 'webhook_attempt',
  REFUND = 'refund',
}
registerEnumType(TimelineKind, { name: 'TimelineKind', description: 'What happened at one moment of a session.' });

@InputType({ description: 'Filters of the sessions list; every one optional, all of them must match.' })
export class SessionFilterInput {
  @Field(() => [CheckoutSessionStatus], { nullable: true, description: 'Any of these statuses, as reads show them.' })
  statuses?: CheckoutSessionStatus[];

  @Field(() => CryptoTicker, { nullable: true, description: 'The asset the payer chose.' })
  asset?: CryptoTicker;

  @Field(() => String, { nullable: true, description: 'A network slug a payment or a bind of the session is on.' })
  network?: string;

  @Field(() => DateTimeScalar, { nullable: true, description: 'Created at or after.' })
  createdFrom?: Date;

  @Field(() => DateTimeScalar, { nullable: true, description: 'Created before (exclusive).' })
  createdBefore?: Date;

  @Field(() => String, { nullable: true, description: 'ISO 4217 code of the sessions priced in it.' })
  fiatCurrency?: string;

  @Field(() => DecimalScalar, { nullable: true, description: 'Total in fiat at least.' })
  fiatMin?: Decimal;

  @Field(() => DecimalScalar, { nullable: true, description: 'Total in fiat at most.' })
  fiatMax?: Decimal;

  @Field(() => String, { nullable: true, description: "The payer's e-mail address, or your user id for them." })
  payer?: string;

  @Field(() => String, { nullable: true, description: 'A transaction bound to the session or paying it.' })
  txHash?: string;

  @Field(() => ID, { nullable: true, description: 'Sessions started from this payment link.' })
  paymentLinkId?: string;

  @Field(() => String, {
    nullable: true,
    description: 'A wallet that paid the session, bound a transaction to it or was named by the payer (any case).',
  })
  payerWallet?: string;

  @Field(() => String, {
    nullable: true,
    description: '`key=value`: the metadata holds that top-level value; other text: found anywhere in it (any case).',
  })
  metadata?: string;
}

@ObjectType('MerchantSession', { description: "A session as the organisation's staff see it." })
export class MerchantSession {
  @Field(() => ID)
  id!: string;

  @Field(() => CheckoutSessionStatus)
  status!: CheckoutSessionStatus;

  @Field(() => String)
  fiatCurrency!: string;

  @Field(() => DecimalScalar)
  totalAmountFiat!: Decimal;

  @Field(() => CryptoTicker, { nullable: true })
  cryptoCurrency!: CryptoTicker | null;

  @Field(() => DecimalScalar, { nullable: true })
  totalAmountCrypto!: Decimal | null;

  @Field(() => DecimalScalar, { description: 'Confirmed amount received in the chosen asset.' })
  amountReceived!: Decimal;

  @Field(() => String, { nullable: true })
  payerEmail!: string | null;

  @Field(() => String, { description: 'Your user id for the payer (user.id at create).' })
  payerId!: string;

  @Field(() => ID, { nullable: true })
  paymentLinkId!: string | null;

  @Field(() => String, { nullable: true })
  boundTxHash!: string | null;

  @Field(() => DateTimeScalar)
  createdAt!: Date;

  @Field(() => DateTimeScalar)
  expiresAt!: Date;
}

@ObjectType('MerchantSessionPage', { description: 'One page of the sessions list, newest first.' })
export class MerchantSessionPage {
  @Field(() => [MerchantSession])
  nodes!: MerchantSession[];

  @Field(() => String, { nullable: true, description: 'Pass as `after` for the next page; null on the last.' })
  nextCursor!: string | null;
}

@ObjectType('MerchantSessionItem')
export class MerchantSessionItem {
  @Field(() => String)
  name!: string;

  @Field(() => Int)
  quantity!: number;

  @Field(() => DecimalScalar)
  unitPrice!: Decimal;

  @Field(() => DecimalScalar)
  totalPrice!: Decimal;
}

@ObjectType('MerchantSessionQuote')
export class MerchantSessionQuote {
  @Field(() => String)
  ticker!: string;

  @Field(() => DecimalScalar)
  unitPriceFiat!: Decimal;

  @Field(() => DecimalScalar)
  amount!: Decimal;

  @Field(() => String)
  rateSource!: string;

  @Field(() => DateTimeScalar)
  ratedAt!: Date;
}

@ObjectType('TimelineEntry', { description: "One moment of a session's story; fields that do not apply are null." })
export class TimelineEntry {
  @Field(() => DateTimeScalar)
  at!: Date;

  @Field(() => TimelineKind)
  kind!: TimelineKind;

  @Field(() => String, { nullable: true })
  fromStatus!: string | null;

  @Field(() => String, { nullable: true })
  toStatus!: string | null;

  @Field(() => String, { nullable: true, description: "A status change's cause; a quote change's rate source." })
  cause!: string | null;

  @Field(() => String, { nullable: true })
  txHash!: string | null;

  @Field(() => String, { nullable: true })
  network!: string | null;

  @Field(() => String, { nullable: true })
  asset!: string | null;

  @Field(() => DecimalScalar, { nullable: true })
  amount!: Decimal | null;

  @Field(() => DecimalScalar, { nullable: true })
  oldAmount!: Decimal | null;

  @Field(() => String, {
    nullable: true,
    description:
      "A bind's state (unverified, verified, rejected); a transfer's (seen, confirmed, reversed); a " +
      "webhook delivery's (pending, succeeded, failed).",
  })
  outcome!: string | null;

  @Field(() => String, { nullable: true, description: "Why a bind was rejected; a webhook attempt's error." })
  reason!: string | null;

  @Field(() => String, { nullable: true })
  blockNumber!: string | null;

  @Field(() => Int, { nullable: true })
  confirmations!: number | null;

  @Field(() => Boolean, { nullable: true, description: 'A transfer mined at or after the session expired.' })
  late!: boolean | null;

  @Field(() => String, {
    nullable: true,
    description:
      'Why a transfer counts for this session: deposit_address, bound_tx, payer_wallet or exact_amount ' +
      '(docs/payment-rules.md).',
  })
  attribution!: string | null;

  @Field(() => String, { nullable: true })
  eventType!: string | null;

  @Field(() => String, { nullable: true })
  endpointUrl!: string | null;

  @Field(() => Int, { nullable: true })
  attempt!: number | null;

  @Field(() => Int, { nullable: true })
  httpStatus!: number | null;

  @Field(() => ID, { nullable: true, description: "A webhook attempt's delivery (redeliverWebhook sends it again)." })
  deliveryId!: string | null;

  @Field(() => ID, { nullable: true, description: "A refund's status change: the refund (docs/api/refunds.md)." })
  refundId!: string | null;
}

@ObjectType('WebhookRedelivery', { description: 'A delivery queued again, due at once.' })
export class WebhookRedelivery {
  @Field(() => ID)
  deliveryId!: string;

  @Field(() => String)
  eventType!: string;
}

@ObjectType('MerchantSessionDetail', { description: 'A session with its items, quotes and timeline.' })
export class MerchantSessionDetail extends MerchantSession {
  @Field(() => [MerchantSessionItem])
  items!: MerchantSessionItem[];

  @Field(() => [MerchantSessionQuote])
  quotes!: MerchantSessionQuote[];

  @Field(() => String, { description: 'Your metadata, as JSON text.' })
  metadata!: string;

  @Field(() => [TimelineEntry], { description: 'Oldest first.' })
  timeline!: TimelineEntry[];
}

@ObjectType('DashboardOrganisation')
export class DashboardOrganisation {
  @Field(() => ID)
  id!: string;

  @Field(() => String)
  name!: string;

  @Field(() => String, { description: 'Your role in it.' })
  role!: string;
}

@ObjectType('DashboardViewer', { description: 'The signed-in person.' })
export class DashboardViewer {
  @Field(() => ID)
  id!: string;

  @Field(() => String)
  email!: string;

  @Field(() => [DashboardOrganisation])
  organisations!: DashboardOrganisation[];
}
