import { createHash, randomUUID } from 'node:crypto';
import { ASSET_IDS } from './assets.js';
import type { CheckoutLineItem, CheckoutSession, CryptoQuote, SessionNetwork } from './checkout-session.js';
import type { DomainContext } from './context.js';
import { isIso4217 } from './currencies.js';
import { conflict, invalid, notFound, unavailable, unprocessable } from './errors.js';
import type { Merchant } from './authenticate-merchant.js';
import { Decimal, roundUpTo8 } from './money.js';
import { assetsOnAny } from './networks.js';
import { emitEvent } from './session-events.js';
import { getCheckoutSession } from './get-checkout-session.js';

/** The create request after the transport checked its shape (spec §2.4). Prices are exact decimal strings. */
export interface CreateCheckoutInput {
  readonly user: { readonly id: string; readonly email: string; readonly username?: string };
  readonly items: ReadonlyArray<{ readonly name: string; readonly quantity: number; readonly unitPrice: string; readonly productId?: string }>;
  readonly currency: string;
  readonly metadata?: Readonly<Record<string, unknown>>;
  readonly expiresInMinutes?: number;
}

export interface CreateCheckoutResult {
  readonly session: CheckoutSession;
  /** True when an Idempotency-Key replay returned an existing session. */
  readonly replayed: boolean;
}

export const DEFAULT_EXPIRES_IN_MINUTES = 60;
export const AMOUNT_ROUNDING = 'amount = total_amount_fiat / unit_price_fiat, rounded up (ceiling) to 8 decimals';

/**
 * Creates a checkout session for a merchant (spec §4.1): prices the basket,
 * quotes every asset available on the organisation's networks, and stores the
 * session, its history row and its `checkout_session.created` event in one
 * transaction. With an Idempotency-Key, a replay returns the first session.
 */
export async function createCheckoutSession(
  ctx: DomainContext,
  merchant: Merchant,
  input: CreateCheckoutInput,
  idempotencyKey?: string,
): Promise<CreateCheckoutResult> {
  const requestHash = hashRequest(input);
  if (idempotencyKey !== undefined) {
    const existing = await ctx.store.sessions.findIdempotencyKey(merchant.organisationId, idempotencyKey);
    if (existing) return replay(ctx, existing.sessionId, existing.requestHash, requestHash);
  }

  const organisation = await ctx.store.organisations.findById(merchant.organisationId);
  if (!organisation) throw notFound(`Organisation ${merchant.organisationId} not found`);
  if (organisation.deleted) throw unprocessable('Organisation has been deleted');

  const currency = input.currency.trim().toUpperCase();
  if (!isIso4217(currency) || !ctx.rates.supportsCurrency(currency)) {
    throw invalid(`currency ${input.currency} is not supported: use an ISO 4217 code the rates source prices`);
  }
  const items = priceItems(input.items);
  const totalAmountFiat = items.reduce((sum, item) => sum.plus(item.totalPrice), new Decimal(0));
  if (totalAmountFiat.isZero()) throw invalid('total amount must be greater than 0');

  const payableNetworks = ctx.networks.filter((network) => organisation.wallets[network.slug]);
  const networks: SessionNetwork[] = payableNetworks.map((network) => ({
    network: network.slug,
    chainId: String(network.chainId),
    walletAddress: organisation.wallets[network.slug]!,
  }));
  if (networks.length === 0) {
    throw unprocessable(
      `Organisation has no receiving wallet on any enabled network (${ctx.networks.map((n) => n.slug).join(', ')}); set one with \`kassa wallets set\``,
    );
  }

  const now = ctx.clock();
  const rates = await ctx.rates.quoteRates(currency, assetsOnAny(payableNetworks), now);
  if (rates.length === 0) throw unavailable(`No usable exchange rate for ${currency} right now; no session was created, try again shortly`);
  const quotes: CryptoQuote[] = rates.map((rate) => ({
    ticker: rate.ticker,
    assetId: ASSET_IDS[rate.ticker],
    unitPriceFiat: rate.unitPriceFiat,
    amount: roundUpTo8(totalAmountFiat.dividedBy(rate.unitPriceFiat)),
    rateSource: rate.source,
    ratedAt: rate.ratedAt,
    rounding: AMOUNT_ROUNDING,
  }));

  const session: CheckoutSession = {
    id: randomUUID(),
    organisationId: organisation.id,
    organisationName: organisation.name,
    organisationDeleted: false,
    ownerUserId: null,
    status: 'waiting_payment',
    source: 'api',
    fromPaymentLink: false,
    anonymous: false,
    requiresPayerIdentity: false,
    identityOptions: [],
    productPaymentLinkId: null,
    fiatCurrency: currency,
    totalAmountFiat,
    cryptoCurrency: null,
    totalAmountCrypto: null,
    networks,
    quotes,
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
    paymentPolicy: {
      underpaymentTolerancePercent: organisation.underpaymentTolerancePercent,
      latePaymentWindowMinutes: organisation.latePaymentWindowMinutes,
    },
    user: { id: input.user.id, email: input.user.email, telegramId: null, username: input.user.username ?? null },
    metadata: input.metadata ?? {},
    createdAt: now,
    updatedAt: now,
  };

  const raced = await ctx.store.transaction(async (tx) => {
    if (idempotencyKey !== undefined && !(await tx.claimIdempotencyKey(organisation.id, idempotencyKey, requestHash, session.id))) {
      // A concurrent request with the same key won; answer with its session.
      return tx.findIdempotencyKey(organisation.id, idempotencyKey);
    }
    await tx.insertSession(session);
    await tx.recordStatusChange({ sessionId: session.id, from: null, to: session.status, cause: 'created by merchant API', at: now });
    await emitEvent(ctx, tx, session, 'checkout_session.created', now);
    return null;
  });
  if (raced) return replay(ctx, raced.sessionId, raced.requestHash, requestHash);
  return { session, replayed: false };
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

async function replay(ctx: DomainContext, sessionId: string, storedHash: string, requestHash: string): Promise<CreateCheckoutResult> {
  if (storedHash !== requestHash) {
    throw conflict('Idempotency-Key was already used with a different request body');
  }
  // Through getCheckoutSession so a replay after expiry shows the settled status.
  return { session: await getCheckoutSession(ctx, sessionId), replayed: true };
}

/** A stable hash of the request's meaning: key order and number spelling do not matter. */
function hashRequest(input: CreateCheckoutInput): string {
  const canonical = {
    user: { id: input.user.id, email: input.user.email, username: input.user.username ?? null },
    items: input.items.map((item) => [item.name, item.quantity, new Decimal(item.unitPrice).toFixed(), item.productId ?? null]),
    currency: input.currency.trim().toUpperCase(),
    metadata: sortKeys(input.metadata ?? {}),
    expiresInMinutes: input.expiresInMinutes ?? DEFAULT_EXPIRES_IN_MINUTES,
  };
  return createHash('sha256').update(JSON.stringify(canonical)).digest('hex');
}

function sortKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortKeys);
  if (value && typeof value === 'object') {
    return Object.fromEntries(Object.keys(value).sort().map((key) => [key, sortKeys((value as Record<string, unknown>)[key])]));
  }
  return value;
}
