import type { BindResult as DomainBindResult } from '../domain/payments/bind-transaction.js';
import type { CheckoutSession as DomainSession } from '../domain/sessions/checkout-session.js';
import { toBindResponse, toPublicView } from '../domain/sessions/checkout-session.views.js';
import { secondsUntilExpiry } from '../domain/sessions/checkout-page.js';
import { Decimal, formatAmount } from '../domain/shared/money.js';
import { amountDue, pendingCoversDue } from '../domain/sessions/session-amounts.js';
import { paymentOptions } from '../domain/payments/payment-instructions.js';
import type { DomainContext } from '../domain/context.js';
import type { BindResult } from './bind-transaction.types.js';
import type { BoundTransaction as DomainBoundTransaction } from '../domain/payments/chain-ports.js';
import type {
  BoundTransaction,
  CheckoutSession,
  CheckoutSessionStatus,
  CryptoTicker,
} from './checkout-session.types.js';

/**
 * Built from REST's public view (src/domain/sessions/checkout-session.views.ts), camelCased, so the two APIs cannot
 * disagree; the payer's identity is left out, as anyone with the session id can read this.
 */
export function toGraphqlSession(
  session: DomainSession,
  ctx: Pick<DomainContext, 'networks'>,
  now: Date,
): CheckoutSession {
  let view = graphqlViews.get(session);
  if (!view) graphqlViews.set(session, (view = timelessView(session, ctx)));
  return { ...view, secondsUntilExpiry: secondsUntilExpiry(session, now) };
}

/**
 * As toGraphqlSession, without keeping the view for the session object: for a session read once (a cold read,
 * src/graphql/cold-queries.ts), whose kept view would only hold memory.
 */
export function toGraphqlSessionOnce(
  session: DomainSession,
  ctx: Pick<DomainContext, 'networks'>,
  now: Date,
): CheckoutSession {
  const view = graphqlViews.get(session) ?? timelessView(session, ctx);
  return { ...view, secondsUntilExpiry: secondsUntilExpiry(session, now) };
}

/**
 * Everything but the time left, built once per session object: a session served from the
 * cache (src/db/read-cache.ts) is the same object until it changes.
 */
const graphqlViews = new WeakMap<DomainSession, Omit<CheckoutSession, 'secondsUntilExpiry'>>();

function timelessView(
  session: DomainSession,
  ctx: Pick<DomainContext, 'networks'>,
): Omit<CheckoutSession, 'secondsUntilExpiry'> {
  const view = toPublicView(session);
  return {
    sessionId: view.session_id,
    status: view.status as CheckoutSessionStatus,
    source: view.source,
    fromPaymentLink: view.from_payment_link,
    anonymous: view.anonymous,
    requiresPayerIdentity: view.requires_payer_identity,
    identityOptions: view.identity_options,
    productPaymentLinkId: view.product_payment_link_id,
    totalAmountCrypto: view.total_amount_crypto,
    cryptoCurrency: view.crypto_currency as CryptoTicker | null,
    cryptoOptions: view.crypto_options.map((option) => ({
      ticker: option.ticker as CryptoTicker,
      id: option.id,
      unitPriceFiat: option.unit_price_fiat,
      amount: option.amount,
    })),
    fiatCurrency: view.fiat_currency,
    totalAmountFiat: view.total_amount_fiat,
    walletAddress: view.wallet_address,
    supportedNetworks: view.supported_networks,
    expiresAt: view.expires_at,
    // Never claims more than arrived: the confirmed total rounds down, what is owed rounds up.
    amountReceived: formatAmount(session.amountReceived.toDecimalPlaces(8, Decimal.ROUND_DOWN)),
    amountDue: session.totalAmountCrypto
      ? formatAmount(amountDue(session)!.toDecimalPlaces(8, Decimal.ROUND_CEIL))
      : null,
    amountPending: formatAmount(session.amountPending.toDecimalPlaces(8, Decimal.ROUND_DOWN)),
    paymentDetected: session.amountPending.greaterThan(0),
    pendingCoversDue: pendingCoversDue(session),
    paymentOptions: paymentOptions(ctx, session).map((option) => ({
      ...option,
      ticker: option.ticker as CryptoTicker,
      baseUnits: option.baseUnits.toString(),
    })),
    overpaid: view.overpaid,
    boundTxHash: view.bound_tx_hash,
    chainId: view.chain_id,
    items: session.items.map((item) => ({
      name: item.name,
      quantity: item.quantity,
      unitPrice: formatAmount(item.unitPrice),
      totalPrice: formatAmount(item.totalPrice),
    })),
    organisationId: session.organisationId,
  };
}

/** A session's bound transactions as `CheckoutSession.transactions` answers them. */
export function toGraphqlTransactions(bound: readonly DomainBoundTransaction[]): BoundTransaction[] {
  return bound.map((t) => ({
    txHash: t.txHash,
    chainId: t.chainId,
    cryptoCurrency: t.cryptoCurrency as CryptoTicker,
    state: t.state.toUpperCase(),
    reason: t.reason,
    reasonCode: t.reasonCode,
  }));
}

/** The bind answer REST sends (docs/api/rest.md#bind-rules), in camelCase. */
export function toGraphqlBindResult(result: DomainBindResult): BindResult {
  const body = toBindResponse(result);
  return {
    sessionId: body.session_id,
    boundTxHash: body.bound_tx_hash,
    cryptoCurrency: body.crypto_currency as CryptoTicker,
    totalAmountCrypto: body.total_amount_crypto,
    status: body.status as CheckoutSessionStatus,
    idempotent: body.idempotent,
  };
}
