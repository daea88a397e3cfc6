import 'reflect-metadata';
import { Field, ID, Int, ObjectType } from 'type-graphql';
import { Decimal } from '../../domain/shared/money.js';
import { DecimalScalar } from '../scalars.js';

@ObjectType('DepositBalance', { description: 'What waits of one asset at the deposit addresses on one network.' })
export class DepositBalance {
  @Field(() => String)
  asset!: string;

  @Field(() => DecimalScalar, { description: 'Rounded to 8 fractional digits; baseUnits is exact.' })
  amount!: Decimal;

  @Field(() => String, { description: "The exact amount in the asset's smallest unit." })
  baseUnits!: string;

  @Field(() => Int, { description: 'How many addresses hold some of it.' })
  addresses!: number;
}

@ObjectType('DepositNetwork', { description: "The organisation's deposit addresses on one network, read on chain." })
export class DepositNetwork {
  @Field(() => String)
  network!: string;

  @Field(() => Int)
  chainId!: number;

  @Field(() => Int, { description: "Its deposit-mode sessions' addresses there." })
  depositAddresses!: number;

  @Field(() => Int, { description: 'How many of them hold money.' })
  holdingAddresses!: number;

  @Field(() => [DepositBalance])
  balances!: DepositBalance[];

  @Field(() => Int, { description: 'How many collect transactions would move it.' })
  transactions!: number;

  @Field(() => String, { description: "The node's estimate of their gas, in all." })
  estimatedGas!: string;

  @Field(() => String, { nullable: true, description: 'Why the chain could not be read.' })
  problem!: string | null;
}

@ObjectType('Deposits', { description: 'The receiving mode and the money waiting at deposit addresses.' })
export class Deposits {
  @Field(() => String, { description: 'deposit_addresses or shared_wallet: for sessions created from now on.' })
  receivingMode!: string;

  @Field(() => [DepositNetwork])
  networks!: DepositNetwork[];
}

@ObjectType('UnsignedCollect', {
  description: 'A collect transaction for a wallet to sign and send; its money can only go to destination.',
})
export class UnsignedCollect {
  @Field(() => String)
  network!: string;

  @Field(() => Int)
  chainId!: number;

  @Field(() => String, { description: "The organisation's wallet the addresses lead to." })
  destination!: string;

  @Field(() => [ID])
  sessionIds!: string[];

  @Field(() => String, { description: 'The deposit factory.' })
  to!: string;

  @Field(() => String)
  data!: string;

  @Field(() => String, { description: 'Always 0x0: a collect sends no value.' })
  value!: string;

  @Field(() => String, { description: "Gas limit to send with, hex: the node's estimate and a fifth more." })
  gas!: string;
}

@ObjectType('CollectedAmount', { description: 'What a collect moved from one session in one asset.' })
export class CollectedAmount {
  @Field(() => ID)
  sessionId!: string;

  @Field(() => String)
  asset!: string;

  @Field(() => DecimalScalar)
  amount!: Decimal;
}

@ObjectType('CollectProgress', { description: 'Where a collect transaction stands.' })
export class CollectProgress {
  @Field(() => String)
  network!: string;

  @Field(() => String)
  txHash!: string;

  @Field(() => String, {
    description:
      'unknown (not seen by the node yet), pending, confirming, confirmed (recorded), reverted, or nothing ' +
      "(it moved nothing from the organisation's deposit addresses).",
  })
  state!: string;

  @Field(() => Int)
  confirmations!: number;

  @Field(() => Int)
  confirmationsRequired!: number;

  @Field(() => String, { nullable: true })
  blockNumber!: string | null;

  @Field(() => [CollectedAmount])
  collected!: CollectedAmount[];
}
