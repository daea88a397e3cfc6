import 'reflect-metadata';
import { Field, ID, Int, ObjectType, registerEnumType } from 'type-graphql';
import { DateTimeScalar, DecimalScalar } from './scalars.js';
import type { AssetTicker } from '../domain/shared/assets.js';
import type { CheckoutSessionStatus as DomainStatus } from '../domain/sessions/checkout-session.js';
import type { Decimal } from '../domain/shared/money.js';
import { sameValues } from './same-values.js';

/**
 * The checkout session's GraphQL types, code-first; each field names its GraphQL type, so no emitted decorator metadata
 * is needed. Values are the domain's own; the enums and scalars turn them into GraphQL's convention.
 */

/** GraphQL names (PENDING) over the domain's values (pending). */
export enum CheckoutSessionStatus {
  PENDING = 'pending',
  WAITING_PAYMENT = 'waiting_payment',
  PARTIAL = 'partial',
  PAID = 'paid',
  EXPIRED = 'expired',
  FAILED = 'failed',
}
registerEnumType(CheckoutSessionStatus, {
  name: 'CheckoutSessionStatus',
  description: 'Where a checkout session is in its life (docs/payment-rules.md#statuses).',
});

export enum CryptoTicker {
  BTC = 'BTC',
  USDT = 'USDT',
  BNB = 'BNB',
  SOL = 'SOL',
  USDC = 'USDC',
  ETH = 'ETH',
}
registerEnumType(CryptoTicker, { name: 'CryptoTicker', description: 'The crypto assets Kassa quotes and accepts.' });

// The domain's lists are the source; the enums name them in GraphQL's case and order (schema.graphql).
sameValues<`${CheckoutSessionStatus}`, DomainStatus>(true);
sameValues<`${CryptoTicker}`, AssetTicker>(true);

@ObjectType({ description: 'One quoted asset: the price locked at creation and the amount to send.' })
export class CryptoPaymentOption {
  @Field(() => CryptoTicker)
  ticker!: CryptoTicker;

  @Field(() => String, { description: 'Common market-data id of the asset, e.g. "bitcoin".' })
  id!: string;

  @Field(() => DecimalScalar, { description: 'Price of one unit in the session currency.' })
  unitPriceFiat!: Decimal | string;

  @Field(() => DecimalScalar, { description: 'What the payer must send in this asset.' })
  amount!: Decimal | string;
}

@ObjectType({
  description: 'How to pay the session now in one asset on one network: exactly what to send, computed by the server.',
})
export class PaymentOption {
  @Field(() => String, { description: 'Network slug, as in supportedNetworks.' })
  network!: string;

  @Field(() => String, { description: 'EIP-155 chain id as a decimal string.' })
  chainId!: string;

  @Field(() => CryptoTicker)
  ticker!: CryptoTicker;

  @Field(() => Boolean, { description: "True for the chain's own coin (sent as value, no contract)." })
  native!: boolean;

  @Field(() => String, { nullable: true, description: 'ERC-20 contract address; null for the native coin.' })
  contractAddress!: string | null;

  @Field(() => Int, { description: 'Decimals of the coin or token on this network.' })
  decimals!: number;

  @Field(() => String, { description: "The merchant's receiving wallet on this network." })
  walletAddress!: string;

  @Field(() => String, {
    description:
      "Exactly what to send, in the token's own units: never more fractional digits than the token has " +
      '("39.972006" for a 6-decimal token). After a partial payment, the rest\'s unique amount (amountDue).',
  })
  amount!: string;

  @Field(() => String, { description: 'amount × 10^decimals, an integer as a decimal string.' })
  baseUnits!: string;

  @Field(() => String, { description: 'EIP-681 payment request for a wallet (the QR code holds the same).' })
  uri!: string;
}

@ObjectType({
  description: 'A transaction bound to the session: a hint, verified from the chain before anything is credited.',
})
export class BoundTransaction {
  @Field(() => String)
  txHash!: string;

  @Field(() => String, { description: 'EIP-155 chain id (decimal).' })
  chainId!: string;

  @Field(() => CryptoTicker)
  cryptoCurrency!: CryptoTicker;

  @Field(() => String, {
    description: 'UNVERIFIED (not judged yet), VERIFIED (it pays the session) or REJECTED (see reason).',
  })
  state!: string;

  @Field(() => String, { nullable: true, description: 'Why a rejected transaction does not pay the session.' })
  reason!: string | null;

  @Field(() => String, {
    nullable: true,
    description:
      'The stable code of `reason` (wrong_sender, bind_too_small, …; docs/api/rest.md#error-codes): branch on it, ' +
      'not on the text.',
  })
  reasonCode!: string | null;
}

@ObjectType({ description: 'A line of the basket being paid for.' })
export class CheckoutLineItem {
  @Field(() => String)
  name!: string;

  @Field(() => Int)
  quantity!: number;

  @Field(() => DecimalScalar, { description: 'In the session currency.' })
  unitPrice!: Decimal | string;

  @Field(() => DecimalScalar, { description: 'quantity × unitPrice, in the session currency.' })
  totalPrice!: Decimal | string;
}

@ObjectType({
  description: 'A checkout session as the payer sees it: the public view of REST, its line items and the time left.',
})
export class CheckoutSession {
  @Field(() => ID)
  sessionId!: string;

  @Field(() => CheckoutSessionStatus)
  status!: CheckoutSessionStatus;

  @Field(() => String)
  source!: string;

  @Field(() => Boolean)
  fromPaymentLink!: boolean;

  @Field(() => Boolean)
  anonymous!: boolean;

  @Field(() => Boolean)
  requiresPayerIdentity!: boolean;

  @Field(() => [String])
  identityOptions!: string[];

  @Field(() => ID, { nullable: true })
  productPaymentLinkId!: string | null;

  @Field(() => DecimalScalar, {
    nullable: true,
    description: 'Amount in the selected crypto; null until one is selected.',
  })
  totalAmountCrypto!: Decimal | string | null;

  @Field(() => CryptoTicker, {
    nullable: true,
    description: 'The selected crypto; null until one is selected (bind selects).',
  })
  cryptoCurrency!: CryptoTicker | null;

  @Field(() => [CryptoPaymentOption])
  cryptoOptions!: CryptoPaymentOption[];

  @Field(() => String, { description: 'ISO 4217 code of the quote currency.' })
  fiatCurrency!: string;

  @Field(() => DecimalScalar)
  totalAmountFiat!: Decimal | string;

  @Field(() => String, {
    description: "The merchant's receiving wallet: on the bound chain once bound, else on the first supported network.",
  })
  walletAddress!: string;

  @Field(() => [String], { description: 'Slugs of the networks this session can be paid on (see `networks`).' })
  supportedNetworks!: string[];

  @Field(() => DateTimeScalar)
  expiresAt!: Date | string;

  @Field(() => Int, {
    description: 'Whole seconds left before expiresAt by the server clock; 0 once expired or settled.',
  })
  secondsUntilExpiry!: number;

  @Field(() => DecimalScalar, {
    description:
      'Confirmed amount received so far in the selected crypto on the bound chain (rounded down); 0 until a ' +
      'payment confirms.',
  })
  amountReceived!: string;

  @Field(() => DecimalScalar, {
    nullable: true,
    description:
      'What is still to be sent in the selected crypto (totalAmountCrypto − amountReceived, rounded up to 8 ' +
      'digits, never below 0; paymentOptions gives it exactly); null until one is selected. After a partial ' +
      "payment it is the rest's unique amount: what is owed raised by a few of the asset's smallest units to an " +
      'amount no other checkout holds on the wallet, so a transfer of exactly it pays this checkout without a bind.',
  })
  amountDue!: string | null;

  @Field(() => DecimalScalar, {
    description:
      'Credited to this session on chain and not yet confirmed (rounded down); 0 when nothing is waiting for ' +
      'confirmations.',
  })
  amountPending!: string;

  @Field(() => Boolean, {
    description: 'A payment to this session is on chain and waiting for confirmations: the session stays open for it.',
  })
  paymentDetected!: boolean;

  @Field(() => Boolean, {
    description:
      'The payments waiting for confirmations cover amountDue: nothing more needs to be sent (the hosted page ' +
      'stops asking).',
  })
  pendingCoversDue!: boolean;

  @Field(() => [PaymentOption], {
    description: 'How to pay now, per network and asset (only the selected ones once an asset is selected).',
  })
  paymentOptions!: PaymentOption[];

  @Field(() => Boolean)
  overpaid!: boolean;

  @Field(() => String, {
    nullable: true,
    description: 'The first bound transaction found to pay this session; null until one is verified.',
  })
  boundTxHash!: string | null;

  @Field(() => String, {
    nullable: true,
    description: 'EIP-155 chain id (decimal) the session is paid on, once an asset is selected.',
  })
  chainId!: string | null;

  @Field(() => [CheckoutLineItem])
  items!: CheckoutLineItem[];

  /** Not in the schema (organisation ids are never shown): lets the `merchant` field find the branding. */
  organisationId?: string;
}
