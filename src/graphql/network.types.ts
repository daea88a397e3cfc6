import 'reflect-metadata';
import { Field, Int, ObjectType } from 'type-graphql';
import { CryptoTicker } from './checkout-session.types.js';

/** The networks Kassa accepts payments on, as GraphQL types (src/graphql/checkout-session.types.ts says how). */

@ObjectType({ description: "How an asset is paid on a network: the chain's own coin or an ERC-20 token." })
export class NetworkAsset {
  @Field(() => CryptoTicker)
  ticker!: CryptoTicker;

  @Field(() => Boolean, { description: "True for the chain's own coin (sent as value, no contract)." })
  native!: boolean;

  @Field(() => String, { nullable: true, description: 'ERC-20 contract address; null for the native coin.' })
  contractAddress!: string | null;

  @Field(() => Int, { description: 'Decimals of the coin or token on this chain (base units = amount × 10^decimals).' })
  decimals!: number;
}

@ObjectType({ description: 'An EVM network this Kassa accepts payments on.' })
export class Network {
  @Field(() => String, { description: 'As in CheckoutSession.supportedNetworks, e.g. "bsc".' })
  slug!: string;

  @Field(() => String)
  name!: string;

  @Field(() => String, { description: 'EIP-155 chain id as a decimal string, as bindTransaction takes it.' })
  chainId!: string;

  @Field(() => Int, { description: 'Confirmations Kassa waits for before counting a payment.' })
  confirmations!: number;

  @Field(() => [NetworkAsset])
  assets!: NetworkAsset[];
}
