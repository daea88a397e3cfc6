import { z } from 'zod';
import { ASSET_TICKERS } from '../shared/assets.js';
import type { BindResult } from '../payments/bind-result.js';
import { CHECKOUT_SESSION_STATUSES, receivingWallet, type CheckoutSession } from './checkout-session.js';
import { formatAmount, sharedText } from '../shared/money.js';
import { amount, dateTime, freeForm, uuid } from '../shared/view-fields.js';

export const checkoutStatusSchema = z.enum(CHECKOUT_SESSION_STATUSES);
export const cryptoTickerSchema = z.enum(ASSET_TICKERS).describe('A crypto ticker Kassa quotes and binds');

/** A crypto option (docs/api/rest.md#crypto-options). */
export const cryptoPaymentOptionSchema = z
  .strictObject({
    ticker: cryptoTickerSchema,
    id: z.string().describe('Asset identifier, e.g. "ethereum"'),
    unit_price_fiat: amount.describe('Price of 1 unit in the session quote currency'),
    amount: amount.describe('What the payer must send'),
  })
  .describe('One quoted asset (docs/api/rest.md#crypto-options)');

/** The payer as the merchant described them on create (`user` of docs/api/rest.md#the-public-view). */
export const checkoutUserSchema = z.strictObject({
  id: z.string(),
  email: z.string().nullable(),
  telegram_id: z.string().nullable(),
  username: z.string().nullable(),
});

/** A line item as the merchant view (`items` of docs/api/rest.md#the-merchant-view) and a payment link show it. */
export const lineItemSchema = z.strictObject({
  name: z.string(),
  quantity: z.int().min(1),
  unit_price: amount.describe('In the quote currency'),
  total_price: amount,
  product_id: z.string().nullable(),
});

/** docs/api/rest.md#the-public-view: what anyone holding the session id may see. */
export const publicSessionViewSchema = z
  .strictObject({
    session_id: uuid,
    status: checkoutStatusSchema,
    source: z.string().describe('Origin of the session'),
    from_payment_link: z.boolean(),
    anonymous: z.boolean(),
    requires_payer_identity: z.boolean(),
    identity_options: z.array(z.string()),
    product_payment_link_id: uuid.nullable(),
    total_amount_crypto: amount.nullable(),
    crypto_currency: cryptoTickerSchema.nullable().describe('Ticker of the selected crypto'),
    crypto_options: z.array(cryptoPaymentOptionSchema),
    fiat_currency: z.string(),
    total_amount_fiat: amount,
    wallet_address: z.string().describe('Merchant receiving wallet'),
    supported_networks: z.array(z.string()),
    expires_at: dateTime,
    overpaid: z.boolean(),
    bound_tx_hash: z.string().nullable(),
    payer_wallet_address: z.string().nullable(),
    chain_id: z.string().nullable().describe('Decimal EIP-155 id'),
    user: checkoutUserSchema,
  })
  .describe('The public view, exactly these fields (docs/api/rest.md#the-public-view)');

const checkoutUrl = z.url().describe('{checkout_base_url}/pay/<session_id>: send the payer here');

/** docs/api/rest.md#the-merchant-view: the public view plus what only the merchant sees. */
export const merchantSessionViewSchema = publicSessionViewSchema
  .extend({
    organisation_id: uuid,
    organisation_name: z.string().nullable(),
    organisation_deleted: z.boolean(),
    owner_user_id: uuid.nullable(),
    checkout_url: checkoutUrl,
    items: z.array(lineItemSchema),
    metadata: freeForm.describe('Free-form, as sent on create'),
    created_at: dateTime,
  })
  .describe(
    'The merchant view: every field of the public view plus the merchant fields (docs/api/rest.md#the-merchant-view)',
  );

/** A session started from a payment link: the public view and where to pay it. */
export const linkSessionViewSchema = publicSessionViewSchema
  .extend({ checkout_url: checkoutUrl })
  .describe('The public view of a session started from a payment link, and where to pay it');

/** The bind answer (docs/api/rest.md#bind-rules). */
export const bindResponseSchema = z
  .strictObject({
    session_id: uuid,
    bound_tx_hash: z.string().regex(/^0x[a-fA-F0-9]{64}$/),
    crypto_currency: cryptoTickerSchema,
    total_amount_crypto: amount,
    status: checkoutStatusSchema,
    idempotent: z.boolean().describe('true when this transaction was bound before'),
  })
  .describe('The answer to a bind (docs/api/rest.md#bind-rules)');

export type PublicSessionView = z.infer<typeof publicSessionViewSchema>;
export type MerchantSessionView = z.infer<typeof merchantSessionViewSchema>;
export type LinkSessionView = z.infer<typeof linkSessionViewSchema>;
export type BindResponse = z.infer<typeof bindResponseSchema>;

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
      unit_price_fiat: sharedText(quote.unitPriceFiat).wire,
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

export function toLinkSessionView(session: CheckoutSession, checkoutBaseUrl: string): LinkSessionView {
  return { ...toPublicView(session), checkout_url: `${checkoutBaseUrl}/pay/${session.id}` };
}

/** The bind answer (docs/api/rest.md#bind-rules). */
export function toBindResponse(result: BindResult): BindResponse {
  return {
    session_id: result.session.id,
    bound_tx_hash: result.txHash,
    crypto_currency: result.cryptoCurrency,
    total_amount_crypto: formatAmount(result.totalAmountCrypto),
    status: result.session.status,
    idempotent: result.idempotent,
  };
}
