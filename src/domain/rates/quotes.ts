import { ASSET_IDS, type AssetTicker } from '../shared/assets.js';
import type { CryptoQuote, SessionNetwork } from '../sessions/checkout-session.js';
import { amountStep, ceilQuotient, stepPlaces, type Decimal } from '../shared/money.js';
import { NATIVE_COIN_DECIMALS, type Network } from '../shared/networks.js';
import type { AmountClaimRequest, AmountLane } from '../payments/payment-ports.js';
import type { TxStore } from '../ports.js';
import type { QuotedRate } from './rates-ports.js';

export const AMOUNT_ROUNDING =
  'amount = total_amount_fiat / unit_price_fiat, rounded up (ceiling) to the smallest unit every network of the ' +
  'session can carry, plus offset_steps of that unit to be unique on the wallet';

/**
 * Default of KASSA_UNIQUE_AMOUNT_STEPS (docs/payment-rules.md#4-unique-amounts-exact-transfers-need-no-bind): most
 * steps added to make an amount unique on a wallet (≤ 0.0001 USDT, 0.000001 BTC); a create finding all held is refused.
 */
export const UNIQUE_AMOUNT_MAX_STEPS = 100;

/**
 * Decimals of `ticker` on a network (the chain's own coin or its ERC-20 token); null when the network does not carry
 * it.
 */
export function decimalsOn(network: Network, ticker: AssetTicker): number | null {
  if (network.nativeAsset === ticker) return NATIVE_COIN_DECIMALS;
  return network.tokens.find((token) => token.ticker === ticker)?.decimals ?? null;
}

type Carrier = SessionNetwork & { readonly decimals: number };

/** The session's networks that carry `ticker`, with its decimals there. */
function carriers(registry: readonly Network[], networks: readonly SessionNetwork[], ticker: AssetTicker) {
  // One organisation's sessions share their networks array (src/domain/sessions/draft-session.ts): worked out once.
  let known = carriersOf.get(networks);
  if (known?.registry !== registry) carriersOf.set(networks, (known = { registry, byTicker: new Map() }));
  let found = known.byTicker.get(ticker);
  if (found === undefined) {
    found = networks.flatMap((sessionNetwork) => {
      const network = registry.find((n) => n.slug === sessionNetwork.network);
      const decimals = network ? decimalsOn(network, ticker) : null;
      return decimals === null ? [] : [{ ...sessionNetwork, decimals }];
    });
    known.byTicker.set(ticker, found);
  }
  return found;
}

const carriersOf = new WeakMap<
  readonly SessionNetwork[],
  { registry: readonly Network[]; byTicker: Map<AssetTicker, readonly Carrier[]> }
>();

/**
 * One quote per rate: the fiat total at the unit price, rounded up to whole steps of the asset on these networks, so a
 * wallet can send it exactly; made unique by {@link claimUniqueQuotes}.
 */
export function priceQuotes(
  totalFiat: Decimal,
  rates: readonly QuotedRate[],
  registry: readonly Network[],
  networks: readonly SessionNetwork[],
): CryptoQuote[] {
  return rates.map((rate) => {
    const decimals = carriers(registry, networks, rate.ticker).map((c) => c.decimals);
    const baseAmount = ceilQuotient(totalFiat, rate.unitPriceFiat, stepPlaces(decimals));
    const step = amountStep(decimals);
    return {
      ticker: rate.ticker,
      assetId: ASSET_IDS[rate.ticker],
      unitPriceFiat: rate.unitPriceFiat,
      amount: baseAmount,
      baseAmount,
      amountStep: step,
      offsetSteps: 0,
      rateSource: rate.source,
      ratedAt: rate.ratedAt,
      rounding: AMOUNT_ROUNDING,
    };
  });
}

/** Every step of a price: a merchant's API create may take any free amount. */
export const EVERY_STEP: AmountLane = { first: 0, stride: 1 };
/** The odd steps: anyone may open a payment link's sessions, so they never hold more than half of a price's amounts. */
const LINK_STEPS: AmountLane = { first: 1, stride: 2 };

/**
 * Link sessions take only odd steps (one step: that one), so a public link's visits never leave the merchant's own
 * creates without an amount (docs/payment-rules.md#4-unique-amounts-exact-transfers-need-no-bind).
 */
export function amountLane(fromPaymentLink: boolean, maxSteps: number): AmountLane {
  return fromPaymentLink && maxSteps >= 2 ? LINK_STEPS : EVERY_STEP;
}

/** How many steps below `maxSteps` the lane has. */
export function laneSize(lane: AmountLane, maxSteps: number): number {
  return Math.max(0, Math.ceil((maxSteps - lane.first) / lane.stride));
}

/** One claim per quote, at the quote's position: the asset's amount on the session's wallets that carry it. */
export function amountClaims(
  quotes: readonly CryptoQuote[],
  registry: readonly Network[],
  networks: readonly SessionNetwork[],
  lane: AmountLane = EVERY_STEP,
): Array<AmountClaimRequest & { readonly position: number }> {
  return quotes.map((quote, position) => ({
    position,
    ticker: quote.ticker,
    baseAmount: quote.baseAmount,
    step: quote.amountStep,
    // The carriers themselves (their network and wallet), shared by every session of the organisation.
    wallets: carriers(registry, networks, quote.ticker),
    lane,
  }));
}

/** The quotes with the claimed offsets applied; an asset with none (no wallet carries it) stays at step 0. */
export function withOffsets(
  quotes: readonly CryptoQuote[],
  offsetAt: (position: number) => number | null | undefined,
): CryptoQuote[] {
  return quotes.map((quote, position) => {
    const offset = offsetAt(position) ?? 0;
    return { ...quote, offsetSteps: offset, amount: quote.baseAmount.plus(quote.amountStep.times(offset)) };
  });
}

/**
 * Makes each quote's amount unique among open sessions sharing a wallet on a network with the asset, by claiming it, so
 * no two sessions or instances ask for one amount. Null when an asset's amounts are all taken: the caller gives up.
 */
export async function claimUniqueQuotes(
  tx: TxStore,
  sessionId: string,
  quotes: readonly CryptoQuote[],
  registry: readonly Network[],
  networks: readonly SessionNetwork[],
  maxSteps: number,
  at: Date,
  lane: AmountLane = EVERY_STEP,
): Promise<CryptoQuote[] | null> {
  const claims = amountClaims(quotes, registry, networks, lane);
  const offsets = await tx.claimUniqueAmounts(sessionId, claims, maxSteps, at);
  if ([...offsets.values()].some((offset) => offset === null)) return null;
  return withOffsets(quotes, (position) => offsets.get(quotes[position]!.ticker));
}
