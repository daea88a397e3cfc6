import { receivingWallet, type CheckoutSession } from './checkout-session.js';
import { formatAmount } from './money.js';

/** Spec §2.1: what anyone holding the session id may see. */
export interface PublicSessionView {
  session_id: string;
  status: string;
  source: string;
  from_payment_link: boolean;
  anonymous: boolean;
  requires_payer_identity: boolean;
  identity_options: string[];
  product_payment_link_id: string | null;
  total_amount_crypto: string | null;
  crypto_currency: string | null;
  crypto_options: Array<{ ticker: string; id: string; unit_price_fiat: string; amount: string }>;
  fiat_currency: string;
  total_amount_fiat: string;
  wallet_address: string;
  supported_networks: string[];
  expires_at: string;
  overpaid: boolean;
  bound_tx_hash: string | null;
  payer_wallet_address: string | null;
  chain_id: string | null;
  user: { id: string; email: string | null; telegram_id: string | null; username: string | null };
}

/** Spec §2.2: the public view plus what only the merchant sees. */
export interface MerchantSessionView extends PublicSessionView {
  organisation_id: string;
  organisation_name: string | null;
  organisation_deleted: boolean;
  owner_user_id: string | null;
  checkout_url: string;
  items: Array<{ name: string; quantity: number; unit_price: string; total_price: string; product_id: string | null }>;
  metadata: Record<string, unknown>;
  created_at: string;
}

export function toPublicView(session: CheckoutSession): PublicSessionView {
  return {
    session_id: session.id,
    status: session.status,
    source: session.source,
    from_payment_link: session.fromPaymentLink,
    anonymous: session.anonymous,
    requires_payer_identity: session.requiresPayerIdentity,
    identity_options: [...session.identityOptions],
    product_payment_link_id: session.productPaymentLinkId,
    total_amount_crypto: session.totalAmountCrypto ? formatAmount(session.totalAmountCrypto) : null,
    crypto_currency: session.cryptoCurrency,
    crypto_options: session.quotes.map((quote) => ({
      ticker: quote.ticker,
      id: quote.assetId,
      unit_price_fiat: formatAmount(quote.unitPriceFiat),
      amount: formatAmount(quote.amount),
    })),
    fiat_currency: session.fiatCurrency,
    total_amount_fiat: formatAmount(session.totalAmountFiat),
    wallet_address: receivingWallet(session),
    supported_networks: session.networks.map((network) => network.network),
    expires_at: session.expiresAt.toISOString(),
    overpaid: session.overpaid,
    bound_tx_hash: session.boundTxHash,
    payer_wallet_address: session.payerWalletAddress,
    chain_id: session.chainId,
    user: {
      id: session.user.id,
      email: session.user.email,
      telegram_id: session.user.telegramId,
      username: session.user.username,
    },
  };
}

/** Where quote `position`'s amount sits in the merchant view (create sets it there once the amount is made unique). */
export function merchantViewAmountPath(position: number): readonly string[] {
  return ['crypto_options', String(position), 'amount'];
}

export function toMerchantView(session: CheckoutSession, checkoutBaseUrl: string): MerchantSessionView {
  return {
    ...toPublicView(session),
    organisation_id: session.organisationId,
    organisation_name: session.organisationName,
    organisation_deleted: session.organisationDeleted,
    owner_user_id: session.ownerUserId,
    checkout_url: `${checkoutBaseUrl}/pay/${session.id}`,
    items: session.items.map((item) => ({
      name: item.name,
      quantity: item.quantity,
      unit_price: formatAmount(item.unitPrice),
      total_price: formatAmount(item.totalPrice),
      product_id: item.productId,
    })),
    metadata: { ...session.metadata },
    created_at: session.createdAt.toISOString(),
  };
}
