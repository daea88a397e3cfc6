import 'reflect-metadata';
import { ArgsType, Field, ID, InputType, ObjectType } from 'type-graphql';
import { CheckoutSessionStatus, CryptoTicker } from './checkout-session.types.js';
import { DecimalScalar } from './scalars.js';
import type { Decimal } from '../domain/shared/money.js';

/** bindTransaction's input and result, as GraphQL types (src/graphql/checkout-session.types.ts says how). */

@InputType({
  description: "The payer's broadcast transaction. Patterns are checked by the same rules as REST.",
})
export class BindTransactionInput {
  @Field(() => String, { description: '0x and 64 hex characters.' })
  txHash!: string;

  @Field(() => String, { description: 'EIP-155 chain id, decimal ("56") or hex ("0x38").' })
  chainId!: string;

  @Field(() => CryptoTicker, {
    nullable: true,
    description: 'Required unless the session already has a crypto currency selected.',
  })
  cryptoCurrency?: CryptoTicker | null;

  @Field(() => String, { nullable: true, description: '0x and 40 hex characters.' })
  payerWalletAddress?: string | null;
}

/** bindTransaction's arguments, declared as a class so the schema lists them in this order. */
@ArgsType()
export class BindTransactionArgs {
  @Field(() => ID)
  sessionId!: string;

  @Field(() => BindTransactionInput)
  input!: BindTransactionInput;
}

@ObjectType({ description: 'The outcome of bindTransaction.' })
export class BindResult {
  @Field(() => ID)
  sessionId!: string;

  @Field(() => String)
  boundTxHash!: string;

  @Field(() => CryptoTicker)
  cryptoCurrency!: CryptoTicker;

  @Field(() => DecimalScalar)
  totalAmountCrypto!: Decimal | string;

  @Field(() => CheckoutSessionStatus)
  status!: CheckoutSessionStatus;

  @Field(() => Boolean, { description: 'True when this exact transaction was already bound to this session.' })
  idempotent!: boolean;
}
