import { Ctx, Query, Resolver } from 'type-graphql';
import { listPayableNetworks } from '../domain/sessions/checkout-page.js';
import type { GraphqlContext } from './context.js';
import type { CryptoTicker } from './checkout-session.types.js';
import { Network } from './network.types.js';

@Resolver(() => Network)
export class NetworkResolver {
  @Query(() => [Network], {
    description: 'The networks this Kassa accepts payments on, with what the page needs to build a payment.',
  })
  networks(@Ctx() { domain }: GraphqlContext): Network[] {
    return listPayableNetworks(domain).map((network) => ({
      ...network,
      assets: network.assets.map((asset) => ({ ...asset, ticker: asset.ticker as CryptoTicker })),
    }));
  }
}
