import { isAssetTicker, type AssetTicker } from '../shared/assets.js';
import type { CheckoutSession, CryptoQuote, SessionNetwork } from '../sessions/checkout-session.js';
import { listPayableNetworks, type PayableAsset } from '../sessions/checkout-page.js';
import type { DomainContext } from '../context.js';
import { invalid } from '../shared/errors.js';
import { formatTokenAmount, toBaseUnitsCeil } from '../shared/money.js';
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
  const payable = listPayableNetworks(ctx);
  return session.networks.flatMap((sessionNetwork) => {
    if (session.chainId && sessionNetwork.chainId !== session.chainId) return [];
    const network = payable.find((n) => n.slug === sessionNetwork.network);
    if (!network) return [];
    return session.quotes.flatMap((quote) => {
      if (session.cryptoCurrency && quote.ticker !== session.cryptoCurrency) return [];
      const asset = network.assets.find((a) => a.ticker === quote.ticker);
      return asset ? [instructions(session, sessionNetwork, quote, asset)] : [];
    });
  });
}

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
  return instructions(session, sessionNetwork, quote, asset);
}

function instructions(
  session: CheckoutSession,
  network: SessionNetwork,
  quote: CryptoQuote,
  asset: PayableAsset,
): PaymentInstructions {
  // Once an asset is selected: what is still owed (after a partial payment, the rest, exactly).
  const due = session.cryptoCurrency === quote.ticker ? amountDue(session) : null;
  const owed =
    due && due.greaterThan(0)
      ? due
      : (session.cryptoCurrency === quote.ticker && session.totalAmountCrypto) || quote.amount;
  const baseUnits = toBaseUnitsCeil(owed, asset.decimals);
  const request = {
    chainId: network.chainId,
    walletAddress: network.walletAddress,
    contractAddress: asset.contractAddress,
    decimals: asset.decimals,
    amount: owed,
  };
  return {
    network: network.network,
    chainId: network.chainId,
    ticker: quote.ticker,
    native: asset.native,
    contractAddress: asset.contractAddress,
    decimals: asset.decimals,
    walletAddress: network.walletAddress,
    amount: formatTokenAmount(owed, asset.decimals),
    baseUnits,
    uri: eip681Uri(request),
  };
}
