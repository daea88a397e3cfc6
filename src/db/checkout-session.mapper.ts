import type { Prisma } from '../generated/prisma/client.js';
import type { CheckoutSession } from '../domain/checkout-session.js';

/** Domain session → the nested create Prisma needs. */
export function toSessionCreate(session: CheckoutSession): Prisma.CheckoutSessionUncheckedCreateInput {
  return {
    id: session.id,
    organisationId: session.organisationId,
    ownerUserId: session.ownerUserId,
    status: session.status,
    source: session.source,
    fromPaymentLink: session.fromPaymentLink,
    anonymous: session.anonymous,
    requiresPayerIdentity: session.requiresPayerIdentity,
    identityOptions: [...session.identityOptions],
    productPaymentLinkId: session.productPaymentLinkId,
    fiatCurrency: session.fiatCurrency,
    totalAmountFiat: session.totalAmountFiat.toFixed(),
    cryptoCurrency: session.cryptoCurrency,
    totalAmountCrypto: session.totalAmountCrypto?.toFixed() ?? null,
    supportedNetworks: session.networks.map((n) => n.network),
    expiresAt: session.expiresAt,
    overpaid: session.overpaid,
    userId: session.user.id,
    userEmail: session.user.email,
    userTelegramId: session.user.telegramId,
    userUsername: session.user.username,
    metadata: session.metadata as Prisma.InputJsonObject,
    createdAt: session.createdAt,
    updatedAt: session.updatedAt,
    items: {
      create: session.items.map((item, position) => ({
        position,
        name: item.name,
        quantity: item.quantity,
        unitPrice: item.unitPrice.toFixed(),
        totalPrice: item.totalPrice.toFixed(),
        productId: item.productId,
      })),
    },
    quotes: {
      create: session.quotes.map((quote, position) => ({
        position,
        ticker: quote.ticker,
        assetId: quote.assetId,
        unitPriceFiat: quote.unitPriceFiat.toFixed(),
        amount: quote.amount.toFixed(),
        rateSource: quote.rateSource,
        ratedAt: quote.ratedAt,
        rounding: quote.rounding,
      })),
    },
    networks: {
      create: session.networks.map((network, position) => ({
        position,
        network: network.network,
        chainId: network.chainId,
        walletAddress: network.walletAddress,
      })),
    },
  };
}
