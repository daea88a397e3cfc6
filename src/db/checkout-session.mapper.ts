import type { Prisma } from '../generated/prisma/client.js';
import type { CheckoutSession } from '../domain/checkout-session.js';
import type { AssetTicker } from '../domain/assets.js';
import { toDecimal } from '../domain/money.js';

export const SESSION_INCLUDE = {
  organisation: { select: { name: true, deletedAt: true } },
  items: { orderBy: { position: 'asc' } },
  quotes: { orderBy: { position: 'asc' } },
  networks: { orderBy: { position: 'asc' } },
} as const satisfies Prisma.CheckoutSessionInclude;

export type SessionRow = Prisma.CheckoutSessionGetPayload<{ include: typeof SESSION_INCLUDE }>;

/** Prisma row → domain session. Prisma's Decimal is a different class: convert through strings. */
export function toCheckoutSession(row: SessionRow): CheckoutSession {
  return {
    id: row.id,
    organisationId: row.organisationId,
    organisationName: row.organisation.name,
    organisationDeleted: row.organisation.deletedAt !== null,
    ownerUserId: row.ownerUserId,
    status: row.status,
    source: row.source,
    fromPaymentLink: row.fromPaymentLink,
    anonymous: row.anonymous,
    requiresPayerIdentity: row.requiresPayerIdentity,
    identityOptions: row.identityOptions,
    productPaymentLinkId: row.productPaymentLinkId,
    fiatCurrency: row.fiatCurrency,
    totalAmountFiat: toDecimal(row.totalAmountFiat),
    cryptoCurrency: row.cryptoCurrency as AssetTicker | null,
    totalAmountCrypto: row.totalAmountCrypto === null ? null : toDecimal(row.totalAmountCrypto),
    networks: row.networks.map((n) => ({ network: n.network, chainId: n.chainId, walletAddress: n.walletAddress })),
    quotes: row.quotes.map((q) => ({
      ticker: q.ticker as AssetTicker,
      assetId: q.assetId,
      unitPriceFiat: toDecimal(q.unitPriceFiat),
      amount: toDecimal(q.amount),
      rateSource: q.rateSource,
      ratedAt: q.ratedAt,
      rounding: q.rounding,
    })),
    items: row.items.map((i) => ({
      name: i.name,
      quantity: i.quantity,
      unitPrice: toDecimal(i.unitPrice),
      totalPrice: toDecimal(i.totalPrice),
      productId: i.productId,
    })),
    expiresAt: row.expiresAt,
    overpaid: row.overpaid,
    boundTxHash: row.boundTxHash,
    boundAt: row.boundAt,
    payerWalletAddress: row.payerWalletAddress,
    chainId: row.chainId,
    failureReason: row.failureReason,
    user: { id: row.userId, email: row.userEmail, telegramId: row.userTelegramId, username: row.userUsername },
    metadata: (row.metadata ?? {}) as Record<string, unknown>,
    createdAt: row.createdAt,
    updatedAt: row.updatedAt,
  };
}

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
