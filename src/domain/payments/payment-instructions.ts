import { isAssetTicker, type AssetTicker } from '../shared/assets.js';
import type { CheckoutSession, CryptoQuote, SessionNetwork } from '../sessions/checkout-session.js';
import { listPayableNetworks, type PayableAsset } from '../sessions/checkout-page.js';
import type { Network } from '../shared/networks.js';
import type { DomainContext } from '../context.js';
import { invalid } from '../shared/errors.js';
import { WIRE_DECIMALS, formatTokenAmount, toBaseUnitsCeil, type Decimal } from '../shared/money.js';
import { eip681Uri } from './payment-uri.js';
import { amountDue } from '../sessions/session-amounts.js';

/** How the payer pays a session now, in one asset on one network: exactly what to send, and the QR code's content. */
export interface PaymentInstructions {
  readonly network: string;
  readonly chainId: string;
  readonly ticker: AssetTicker;
  readonly native: boolean;
  /** The ERC-20 contract; null for the chain's own coin. */
  readonly contractAddress: string | null;
  readonly decimals: number;
  /** The merchant's wallet on that network (the session's snapshot). */
  readonly walletAddress: string;
  /** Exactly what to send, in the token's own units: never more decimals than the token has. */
  readonly amount: string;
  /** amount × 10^decimals. */
  readonly baseUnits: bigint;
  /** EIP-681 payment request. */
  readonly uri: string;
}

/**
 * Each network × quoted asset it carries, or only the selected asset and chain once there is one, for what is still
 * owed, in the token's own units (docs/payment-rules.md, rule 5).
 */
export function paymentOptions(ctx: Pick<DomainContext, 'networks'>, session: CheckoutSession): PaymentInstructions[] {
  return paymentChoices(ctx, session).map(instructionsFor);
}

/** One payment option before its texts are written: each of its fields is made from it on its own (see optionField). */
export interface PaymentChoice {
  readonly network: SessionNetwork;
  readonly quote: CryptoQuote;
  readonly asset: PayableAsset;
  /** What to send, exactly (see owedIn). */
  readonly owed: Decimal;
}

/** paymentOptions' options, unwritten: a reader asking only some of their fields makes only those. */
export function paymentChoices(ctx: Pick<DomainContext, 'networks'>, session: CheckoutSession): PaymentChoice[] {
  const choices: PaymentChoice[] = [];
  for (const sessionNetwork of session.networks) {
    if (session.chainId && sessionNetwork.chainId !== session.chainId) continue;
    const network = ctx.networks.find((n) => n.slug === sessionNetwork.network);
    if (!network) continue;
    const assets = assetsOf(network);
    for (const quote of session.quotes) {
      if (session.cryptoCurrency && quote.ticker !== session.cryptoCurrency) continue;
      const asset = assets.get(quote.ticker);
      if (asset) choices.push({ network: sessionNetwork, quote, asset, owed: owedIn(session, quote) });
    }
  }
  return choices;
}

/** A network's payable assets by ticker (listPayableNetworks' own), made once per network object. */
function assetsOf(network: Network): ReadonlyMap<AssetTicker, PayableAsset> {
  let assets = payableAssets.get(network);
  if (assets === undefined) {
    const payable = listPayableNetworks({ networks: [network] })[0]!.assets;
    payableAssets.set(network, (assets = new Map(payable.map((asset) => [asset.ticker, asset]))));
  }
  return assets;
}

const payableAssets = new WeakMap<Network, ReadonlyMap<AssetTicker, PayableAsset>>();

/**
 * formatTokenAmount's text. An amount of at most 8 decimals (a quote's) on a token of 8 or more is its 8-decimal text
 * as it stands (nothing to round up, nothing to trim), written without the rounding and trimming.
 */
export function tokenAmountText(owed: Decimal, decimals: number): string {
  return decimals >= WIRE_DECIMALS && owed.decimalPlaces() <= WIRE_DECIMALS
    ? owed.toFixed(WIRE_DECIMALS)
    : formatTokenAmount(owed, decimals);
}

function baseUnitsOf(choice: PaymentChoice): bigint {
  return toBaseUnitsCeil(choice.owed, choice.asset.decimals);
}

/** Each field of PaymentInstructions, made from a choice on its own (instructionsFor makes them all). */
export const optionField = {
  network: (choice: PaymentChoice): string => choice.network.network,
  chainId: (choice: PaymentChoice): string => choice.network.chainId,
  ticker: (choice: PaymentChoice): AssetTicker => choice.quote.ticker,
  native: (choice: PaymentChoice): boolean => choice.asset.native,
  contractAddress: (choice: PaymentChoice): string | null => choice.asset.contractAddress,
  decimals: (choice: PaymentChoice): number => choice.asset.decimals,
  walletAddress: (choice: PaymentChoice): string => choice.network.walletAddress,
  amount: (choice: PaymentChoice): string => tokenAmountText(choice.owed, choice.asset.decimals),
  baseUnits: baseUnitsOf,
  uri: (choice: PaymentChoice, baseUnits = baseUnitsOf(choice)): string =>
    eip681Uri(
      {
        chainId: choice.network.chainId,
        walletAddress: choice.network.walletAddress,
        contractAddress: choice.asset.contractAddress,
        decimals: choice.asset.decimals,
        amount: choice.owed,
      },
      baseUnits,
    ),
} satisfies { readonly [K in keyof PaymentInstructions]: (choice: PaymentChoice) => PaymentInstructions[K] };

/**
 * Checks a payer's choice of network and asset against the session (its networks, its
 * quotes, its selected asset) and the registry, and gives the instructions for it.
 */
export function paymentInstructions(
  ctx: Pick<DomainContext, 'networks'>,
  session: CheckoutSession,
  choice: { network: unknown; asset: unknown },
): PaymentInstructions {
  const problems: string[] = [];
  const sessionNetwork =
    typeof choice.network === 'string' ? session.networks.find((n) => n.network === choice.network) : undefined;
  if (!sessionNetwork)
    problems.push(
      `network must be one of the session's networks: ${session.networks.map((n) => n.network).join(', ')}`,
    );
  else if (session.chainId && sessionNetwork.chainId !== session.chainId) {
    problems.push(
      `network must be ${session.networks.find((n) => n.chainId === session.chainId)?.network}, the network this ` +
        `session is paid on`,
    );
  }
  const quote = isAssetTicker(choice.asset) ? session.quotes.find((q) => q.ticker === choice.asset) : undefined;
  if (!quote)
    problems.push(
      `asset must be one of the session's crypto options: ${session.quotes.map((q) => q.ticker).join(', ')}`,
    );
  else if (session.cryptoCurrency && session.cryptoCurrency !== quote.ticker)
    problems.push(`asset must be ${session.cryptoCurrency}, the session's selected crypto`);
  if (problems.length > 0 || !sessionNetwork || !quote) throw invalid(problems);

  const asset = listPayableNetworks(ctx)
    .find((n) => n.slug === sessionNetwork.network)
    ?.assets.find((a) => a.ticker === quote.ticker);
  if (!asset) throw invalid([`asset ${quote.ticker} is not available on network ${sessionNetwork.network}`]);
  return instructionsFor({ network: sessionNetwork, quote, asset, owed: owedIn(session, quote) });
}

/**
 * What to send in `quote`'s asset: once it is the selected one, what is still owed (after a partial payment, the
 * rest, exactly); else its quoted amount.
 */
function owedIn(session: CheckoutSession, quote: CryptoQuote): Decimal {
  const due = session.cryptoCurrency === quote.ticker ? amountDue(session) : null;
  return due && due.greaterThan(0)
    ? due
    : (session.cryptoCurrency === quote.ticker && session.totalAmountCrypto) || quote.amount;
}

function instructionsFor(choice: PaymentChoice): PaymentInstructions {
  const baseUnits = optionField.baseUnits(choice);
  return {
    network: optionField.network(choice),
    chainId: optionField.chainId(choice),
    ticker: optionField.ticker(choice),
    native: optionField.native(choice),
    contractAddress: optionField.contractAddress(choice),
    decimals: optionField.decimals(choice),
    walletAddress: optionField.walletAddress(choice),
    amount: optionField.amount(choice),
    baseUnits,
    uri: optionField.uri(choice, baseUnits),
  };
}
