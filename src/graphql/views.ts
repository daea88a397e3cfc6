import type { BindResult as DomainBindResult } from '../domain/bind-transaction.js';
import { toBindResponse } from '../domain/bind-transaction.js';
import type { CheckoutSession as DomainSession } from '../domain/checkout-session.js';
import { toPublicView } from '../domain/checkout-session.views.js';
import { secondsUntilExpiry } from '../domain/checkout-page.js';
import { Decimal, formatAmount } from '../domain/money.js';
import { amountDue } from '../domain/payments.js';
import type { BindResult, CheckoutSession, CheckoutSessionStatus, CryptoTicker } from './types.js';

/**
 * Built from the same public view REST returns (src/domain/checkout-session.views.ts),
 * renamed to camelCase, so the two APIs cannot disagree on a value. Only the
 * line items (without product ids), the time left and the amounts received and still due
 * are added (DESIGN.md §4 "Get").
 */
export function toGraphqlSession(session: DomainSession, now: Date): CheckoutSession {
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
    secondsUntilExpiry: secondsUntilExpiry(session, now),
    // Never claims more than arrived: the confirmed total rounds down, what is owed rounds up.
    amountReceived: formatAmount(session.amountReceived.toDecimalPlaces(8, Decimal.ROUND_DOWN)),
    amountDue: session.totalAmountCrypto ? formatAmount(amountDue(session)!) : null,
    overpaid: view.overpaid,
    boundTxHash: view.bound_tx_hash,
    payerWalletAddress: view.payer_wallet_address,
    chainId: view.chain_id,
    user: {
      id: view.user.id,
      email: view.user.email,
      telegramId: view.user.telegram_id,
      username: view.user.username,
    },
    items: session.items.map((item) => ({
      name: item.name,
      quantity: item.quantity,
      unitPrice: formatAmount(item.unitPrice),
      totalPrice: formatAmount(item.totalPrice),
    })),
  };
}

/** The spec §2.6 body REST sends, in camelCase. */
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
