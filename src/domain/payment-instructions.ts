import { isAssetTicker } from './assets.js';
import type { CheckoutSession } from './checkout-session.js';
import { listPayableNetworks } from './checkout-page.js';
import type { DomainContext } from './context.js';
import { invalid } from './errors.js';
import { eip681Uri, type PaymentRequest } from './payment-uri.js';
import { amountDue } from './payments.js';

/** How the payer pays a session in one asset on one network: the QR code's content. */
export interface PaymentInstructions extends PaymentRequest {
  readonly network: string;
  readonly ticker: string;
  readonly uri: string;
}

/**
 * Checks a payer's choice of network and asset against the session (its networks,
 * its quotes, its locked asset) and the registry, and builds the payment request.
 * The wallet is the session's snapshot for that network, so it is right even when
 * the organisation uses different wallets on different chains.
 */
export function paymentInstructions(
  ctx: Pick<DomainContext, 'networks'>,
  session: CheckoutSession,
  choice: { network: unknown; asset: unknown },
): PaymentInstructions {
  const problems: string[] = [];
  const sessionNetwork = typeof choice.network === 'string' ? session.networks.find((n) => n.network === choice.network) : undefined;
  if (!sessionNetwork) problems.push(`network must be one of the session's networks: ${session.networks.map((n) => n.network).join(', ')}`);
  const quote = isAssetTicker(choice.asset) ? session.quotes.find((q) => q.ticker === choice.asset) : undefined;
  if (!quote) problems.push(`asset must be one of the session's crypto options: ${session.quotes.map((q) => q.ticker).join(', ')}`);
  else if (session.cryptoCurrency && session.cryptoCurrency !== quote.ticker) problems.push(`asset must be ${session.cryptoCurrency}, the session's selected crypto`);
  if (problems.length > 0 || !sessionNetwork || !quote) throw invalid(problems);

  const payable = listPayableNetworks(ctx)
    .find((n) => n.slug === sessionNetwork.network)
    ?.assets.find((a) => a.ticker === quote.ticker);
  if (!payable) throw invalid([`asset ${quote.ticker} is not available on network ${sessionNetwork.network}`]);

  const request: PaymentRequest = {
    chainId: sessionNetwork.chainId,
    walletAddress: sessionNetwork.walletAddress,
    contractAddress: payable.contractAddress,
    decimals: payable.decimals,
    // Once an asset is locked: what is still owed (after a partial payment, the rest).
    amount: session.cryptoCurrency === quote.ticker && session.totalAmountCrypto ? remaining(session) : quote.amount,
  };
  return { ...request, network: sessionNetwork.network, ticker: quote.ticker, uri: eip681Uri(request) };
}

function remaining(session: CheckoutSession) {
  const due = amountDue(session)!;
  return due.greaterThan(0) ? due : session.totalAmountCrypto!;
}
