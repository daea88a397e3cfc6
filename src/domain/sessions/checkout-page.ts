import type { AssetTicker } from '../shared/assets.js';
import type { CheckoutSession } from './checkout-session.js';
import { isTerminal } from './checkout-session.js';
import type { DomainContext } from '../context.js';
import { assetsOn, NATIVE_COIN_DECIMALS } from '../shared/networks.js';

/**
 * What the hosted checkout page needs beyond the public view (docs/decisions/0019):
 * the time left to pay and how to pay on each enabled network.
 */

/** Whole seconds left before `expires_at` by the domain clock; 0 once expired or settled. */
export function secondsUntilExpiry(session: Pick<CheckoutSession, 'expiresAt' | 'status'>, now: Date): number {
  if (isTerminal(session.status)) return 0;
  return Math.max(0, Math.floor((session.expiresAt.getTime() - now.getTime()) / 1000));
}

/** How one asset is paid on a network: the chain's own coin (no contract) or an ERC-20 token. */
export interface PayableAsset {
  readonly ticker: AssetTicker;
  readonly native: boolean;
  /** Checksummed ERC-20 contract; null for the chain's own coin. */
  readonly contractAddress: string | null;
  readonly decimals: number;
}

/** An enabled network as the payer's page sees it. RPC URLs stay private (they may carry API keys). */
export interface PayableNetwork {
  readonly slug: string;
  readonly name: string;
  /** EIP-155 chain id as a decimal string, the form bind takes and sessions show. */
  readonly chainId: string;
  readonly confirmations: number;
  readonly assets: readonly PayableAsset[];
}

/** The enabled networks in registry order, each with its assets in Kassa's asset order. */
export function listPayableNetworks(ctx: Pick<DomainContext, 'networks'>): PayableNetwork[] {
  return ctx.networks.map((network) => ({
    slug: network.slug,
    name: network.name,
    chainId: String(network.chainId),
    confirmations: network.confirmations,
    assets: assetsOn(network).map((ticker): PayableAsset => {
      if (network.nativeAsset === ticker)
        return { ticker, native: true, contractAddress: null, decimals: NATIVE_COIN_DECIMALS };
      const token = network.tokens.find((t) => t.ticker === ticker)!;
      return { ticker, native: false, contractAddress: token.address, decimals: token.decimals };
    }),
  }));
}

/** The session receives at a deposit address of its own (it keeps its mode): the page asks for no bind. */
export function paysAtOwnAddress(ctx: Pick<DomainContext, 'store'>, sessionId: string): Promise<boolean> {
  return ctx.store.sessions.receivesAtDepositAddress(sessionId);
}
