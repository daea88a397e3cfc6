import { randomUUID } from 'node:crypto';
import type { CheckoutLineItem, CheckoutSession, SessionNetwork } from './checkout-session.js';
import type { DomainContext } from '../context.js';
import { isIso4217 } from '../rates/currencies.js';
import { invalid, notFound, unavailable, unprocessable } from '../shared/errors.js';
import type { Merchant } from '../organisations/authenticate-merchant.js';
import { Decimal } from '../shared/money.js';
import { assetsOnAny, type Network } from '../shared/networks.js';
import type { Organisation } from '../organisations/organisation-ports.js';
import { priceQuotes } from '../rates/quotes.js';
import { DEFAULT_EXPIRES_IN_MINUTES, type CreateCheckoutInput, type SessionOrigin } from './checkout-request.js';
import {
  SHARED_WALLET_RECEIVING,
  sessionDepositAddress,
  type SessionReceiving,
} from '../organisations/deposit-addresses.js';

export interface SessionDraft {
  readonly session: CheckoutSession;
  readonly receiving: SessionReceiving;
}

/**
 * The new session as it would be written, its quotes at their base amounts; nothing is stored. In deposit mode its
 * wallet on each network is its own deposit address, derived from the organisation's wallet there.
 */
export async function draftSession(
  ctx: DomainContext,
  merchant: Merchant,
  input: CreateCheckoutInput,
  origin: SessionOrigin,
): Promise<SessionDraft> {
  const organisation = await ctx.store.organisations.findById(merchant.organisationId);
  if (!organisation) throw notFound(`Organisation ${merchant.organisationId} not found`);
  if (organisation.deleted) throw unprocessable('Organisation has been deleted', 'organisation_deleted');

  const currency = input.currency.trim().toUpperCase();
  if (!isIso4217(currency) || !ctx.rates.supportsCurrency(currency)) {
    throw invalid(`currency ${input.currency} is not supported: use an ISO 4217 code the rates source prices`);
  }
  const items = priceItems(input.items);
  const totalAmountFiat = items.reduce((sum, item) => sum.plus(item.totalPrice), new Decimal(0));
  if (totalAmountFiat.isZero()) throw invalid('total amount must be greater than 0');

  const { payableNetworks, networks: walletNetworks } = networksOf(ctx.networks, organisation);
  if (walletNetworks.length === 0) {
    throw unprocessable(
      `Organisation has no receiving wallet on any enabled network (${ctx.networks.map((n) => n.slug).join(', ')}); ` +
        `set one with \`kassa wallets set\``,
      'no_wallet',
    );
  }

  const now = ctx.clock();
  const rates = await ctx.rates.quoteRates(currency, assetsOnAny(payableNetworks), now);
  if (rates.length === 0)
    throw unavailable(
      `No usable exchange rate for ${currency} right now; no session was created, try again shortly`,
      'rates_unavailable',
    );

  const id = randomUUID();
  const deposit = organisation.receivingMode === 'deposit_addresses';
  const networks = deposit ? depositNetworks(walletNetworks, id) : walletNetworks;
  const receiving: SessionReceiving = deposit
    ? {
        mode: 'deposit_addresses',
        destinations: Object.fromEntries(walletNetworks.map((n) => [n.network, n.walletAddress])),
      }
    : SHARED_WALLET_RECEIVING;
  const session: CheckoutSession = {
    id,
    organisationId: organisation.id,
    organisationName: organisation.name,
    organisationDeleted: false,
    ownerUserId: null,
    status: 'waiting_payment',
    source: origin.source,
    fromPaymentLink: origin.fromPaymentLink,
    anonymous: origin.anonymous,
    requiresPayerIdentity: origin.requiresPayerIdentity,
    identityOptions: [...origin.identityOptions],
    productPaymentLinkId: origin.productPaymentLinkId,
    fiatCurrency: currency,
    totalAmountFiat,
    cryptoCurrency: null,
    totalAmountCrypto: null,
    networks,
    quotes: priceQuotes(totalAmountFiat, rates, ctx.networks, networks),
    items,
    expiresAt: new Date(now.getTime() + (input.expiresInMinutes ?? DEFAULT_EXPIRES_IN_MINUTES) * 60_000),
    overpaid: false,
    boundTxHash: null,
    boundAt: null,
    boundTxCheckedAt: null,
    payerWalletAddress: null,
    chainId: null,
    failureReason: null,
    amountReceived: new Decimal(0),
    amountReceivedLate: new Decimal(0),
    restAmount: null,
    amountPending: new Decimal(0),
    quotedAt: now,
    paymentPolicy: {
      underpaymentTolerancePercent: organisation.underpaymentTolerancePercent,
      latePaymentWindowMinutes: organisation.latePaymentWindowMinutes,
    },
    user: {
      id: input.user.id,
      email: input.user.email ?? null,
      telegramId: input.user.telegramId ?? null,
      username: input.user.username ?? null,
    },
    metadata: input.metadata ?? {},
    createdAt: now,
    updatedAt: now,
  };
  return { session, receiving };
}

/** The session's deposit address on each network: the same wherever the organisation's wallet is the same. */
function depositNetworks(walletNetworks: readonly SessionNetwork[], sessionId: string): SessionNetwork[] {
  const byWallet = new Map<string, string>();
  return walletNetworks.map((network) => {
    let address = byWallet.get(network.walletAddress);
    if (address === undefined) {
      address = sessionDepositAddress(network.walletAddress, sessionId);
      byWallet.set(network.walletAddress, address);
    }
    return { network: network.network, chainId: network.chainId, walletAddress: address };
  });
}

function priceItems(items: CreateCheckoutInput['items']): CheckoutLineItem[] {
  return items.map((item) => {
    const unitPrice = new Decimal(item.unitPrice);
    return {
      name: item.name,
      quantity: item.quantity,
      unitPrice,
      totalPrice: unitPrice.times(item.quantity),
      productId: item.productId ?? null,
    };
  });
}

/**
 * Made once per organisation record, as a cached record is the same object until the organisation changes; sessions
 * share the array, so nobody changes it.
 */
function networksOf(
  registry: readonly Network[],
  organisation: Organisation,
): { payableNetworks: readonly Network[]; networks: readonly SessionNetwork[] } {
  const known = networksByOrganisation.get(organisation);
  if (known?.registry === registry) return known;
  const payableNetworks = registry.filter((network) => organisation.wallets[network.slug]);
  const networks: SessionNetwork[] = payableNetworks.map((network) => ({
    network: network.slug,
    chainId: String(network.chainId),
    walletAddress: organisation.wallets[network.slug]!,
  }));
  const made = { registry, payableNetworks, networks };
  networksByOrganisation.set(organisation, made);
  return made;
}

const networksByOrganisation = new WeakMap<
  Organisation,
  { registry: readonly Network[]; payableNetworks: readonly Network[]; networks: readonly SessionNetwork[] }
>();
