import { createHash, randomUUID } from 'node:crypto';
import type { CheckoutLineItem, CheckoutSession, SessionNetwork } from './checkout-session.js';
import type { DomainContext } from './context.js';
import { isIso4217 } from './currencies.js';
import { conflict, invalid, notFound, unauthorised, unavailable, unprocessable } from './errors.js';
import {
  authenticateMerchantDeferringReplayCheck,
  countingAuthFailures,
  recordSignature,
  REPLAYED_MESSAGE,
  type Merchant,
  type SignedRequest,
  type UnusedSignature,
} from './authenticate-merchant.js';
import { rateLimit } from './throttle.js';
import { Decimal } from './money.js';
import { assetsOnAny } from './networks.js';
import { outboxEvent } from './session-events.js';
import { merchantViewAmountPath } from './checkout-session.views.js';
import { getCheckoutSession } from './get-checkout-session.js';
import { amountClaims, priceQuotes, UNIQUE_AMOUNT_MAX_STEPS, withOffsets } from './quotes.js';

/**
 * The create request after the transport checked its shape (docs/api/rest.md#create-rules-and-limits). Prices are
 * exact decimal strings.
 */
export interface CreateCheckoutInput {
  /** The merchant's customer; a payment link's payer may give a Telegram id instead of an email. */
  readonly user: {
    readonly id: string;
    readonly email?: string | null;
    readonly username?: string;
    readonly telegramId?: string | null;
  };
  readonly items: ReadonlyArray<{
    readonly name: string;
    readonly quantity: number;
    readonly unitPrice: string;
    readonly productId?: string;
  }>;
  readonly currency: string;
  readonly metadata?: Readonly<Record<string, unknown>>;
  readonly expiresInMinutes?: number;
}

/**
 * Where a session comes from. Merchant API sessions take the defaults (source "api", no link);
 * a payment link passes its own (src/domain/payment-links.ts).
 */
export interface SessionOrigin {
  readonly source: string;
  readonly fromPaymentLink: boolean;
  readonly productPaymentLinkId: string | null;
  readonly anonymous: boolean;
  readonly requiresPayerIdentity: boolean;
  readonly identityOptions: readonly string[];
  /** The history row's cause of the first status. */
  readonly cause: string;
  /**
   * What is stored with an Idempotency-Key to tell a retry from another request. By default the
   * hash of the create input; a payment link's visit gives the hash of what the payer sent, since
   * the rest of the input comes from the link, whose merchant may rename it or change its metadata
   * between a visit and its retry.
   */
  readonly requestHash?: string;
}

export const MERCHANT_API_ORIGIN: SessionOrigin = Object.freeze({
  source: 'api',
  fromPaymentLink: false,
  productPaymentLinkId: null,
  anonymous: false,
  requiresPayerIdentity: false,
  identityOptions: [],
  cause: 'created by merchant API',
});

export interface CreateCheckoutResult {
  readonly session: CheckoutSession;
  /** True when an Idempotency-Key replay returned an existing session. */
  readonly replayed: boolean;
}

export const DEFAULT_EXPIRES_IN_MINUTES = 60;

/** Thrown when the session's payment link took no more payers at the moment of writing (nothing was written). */
export class PaymentLinkUnavailable extends Error {
  constructor(readonly linkId: string) {
    super(`Payment link ${linkId} takes no more payers`);
  }
}

/**
 * Creates a checkout session for a merchant (docs/api/rest.md#create-rules-and-limits): prices the basket,
 * quotes every asset available on the organisation's networks, and stores the
 * session, its unique amounts, its history row and its `checkout_session.created`
 * event in one atomic write. With an Idempotency-Key, a replay returns the first
 * session. A payment link's session counts one use of the link in the same write, a
 * merchant's `signature` (authenticateMerchantDeferringReplayCheck) is recorded as used
 * in it, and a replayed one is refused (`unauthorised`) with nothing written.
 */
export async function createCheckoutSession(
  ctx: DomainContext,
  merchant: Merchant,
  input: CreateCheckoutInput,
  idempotencyKey?: string,
  origin: SessionOrigin = MERCHANT_API_ORIGIN,
  signature: UnusedSignature | null = null,
): Promise<CreateCheckoutResult> {
  const requestHash = origin.requestHash ?? hashRequest(input);
  let draft: CheckoutSession;
  try {
    draft = await draftSession(ctx, merchant, input, origin);
  } catch (error) {
    // Refused or not, the signature is used now: sent again, it is a replay.
    if (signature) await recordSignature(ctx, signature);
    // A retry of a request that made its session is answered with it even when a new one could not be made now.
    const existing =
      idempotencyKey === undefined
        ? null
        : await ctx.store.sessions.findIdempotencyKey(merchant.organisationId, idempotencyKey);
    if (!existing) throw error;
    return replay(ctx, existing.sessionId, existing.requestHash, requestHash);
  }

  const outcome = await ctx.store.createSession({
    session: draft,
    claims: amountClaims(draft.quotes, ctx.networks, draft.networks),
    maxSteps: UNIQUE_AMOUNT_MAX_STEPS,
    cause: origin.cause,
    event: outboxEvent(ctx, draft, 'checkout_session.created', draft.createdAt),
    amountPath: merchantViewAmountPath,
    signature,
    idempotency: idempotencyKey === undefined ? null : { key: idempotencyKey, requestHash },
    linkUse: origin.productPaymentLinkId ? { linkId: origin.productPaymentLinkId, at: draft.createdAt } : null,
  });
  switch (outcome.kind) {
    case 'replayed_signature':
      throw unauthorised(REPLAYED_MESSAGE);
    case 'replay':
      return replay(ctx, outcome.record.sessionId, outcome.record.requestHash, requestHash);
    case 'link_unavailable':
      throw new PaymentLinkUnavailable(origin.productPaymentLinkId!);
    case 'created':
      return {
        session: { ...draft, quotes: withOffsets(draft.quotes, (position) => outcome.offsets.get(position)) },
        replayed: false,
      };
  }
}

/**
 * POST /checkout-sessions from authentication to the write: checks the signature, counts the
 * key's `create` limit, reads the request (`read` throws the transport's 400s), creates. The
 * signature's single use is recorded in create's own write (one round trip); a request refused
 * before that records it on its own, so the same request sent again is a replay either way
 * (docs/api/rest.md#signing-a-merchant-call).
 */
export async function createSignedCheckoutSession(
  ctx: DomainContext,
  request: SignedRequest,
  read: () => { input: CreateCheckoutInput; idempotencyKey: string | undefined },
): Promise<CreateCheckoutResult> {
  const { merchant, signature } = await authenticateMerchantDeferringReplayCheck(ctx, request);
  return countingAuthFailures(ctx, request, async () => {
    let asked: ReturnType<typeof read>;
    try {
      await rateLimit(ctx, ['create', merchant.apiKeyId]);
      asked = read();
    } catch (error) {
      await recordSignature(ctx, signature);
      throw error;
    }
    return createCheckoutSession(ctx, merchant, asked.input, asked.idempotencyKey, MERCHANT_API_ORIGIN, signature);
  });
}

/** The new session as it would be written, its quotes at their base amounts; nothing is stored. */
async function draftSession(
  ctx: DomainContext,
  merchant: Merchant,
  input: CreateCheckoutInput,
  origin: SessionOrigin,
): Promise<CheckoutSession> {
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
      `Organisation has no receiving wallet on any enabled network (${ctx.networks.map((n) => n.slug).join(', ')}); ` +
        `set one with \`kassa wallets set\``,
    );
  }

  const now = ctx.clock();
  const rates = await ctx.rates.quoteRates(currency, assetsOnAny(payableNetworks), now);
  if (rates.length === 0)
    throw unavailable(`No usable exchange rate for ${currency} right now; no session was created, try again shortly`);

  return {
    id: randomUUID(),
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

async function replay(
  ctx: DomainContext,
  sessionId: string,
  storedHash: string,
  requestHash: string,
): Promise<CreateCheckoutResult> {
  if (storedHash !== requestHash) {
    throw conflict('Idempotency-Key was already used with a different request body');
  }
  // Through getCheckoutSession so a replay after expiry shows the settled status.
  return { session: await getCheckoutSession(ctx, sessionId), replayed: true };
}

/** A stable hash of the request's meaning: key order and number spelling do not matter. */
function hashRequest(input: CreateCheckoutInput): string {
  const canonical = {
    // Written as before payment links existed, so stored hashes of merchant requests stay valid.
    user: {
      id: input.user.id,
      email: input.user.email ?? null,
      username: input.user.username ?? null,
      ...(input.user.telegramId ? { telegramId: input.user.telegramId } : {}),
    },
    items: input.items.map((item) => [
      item.name,
      item.quantity,
      new Decimal(item.unitPrice).toFixed(),
      item.productId ?? null,
    ]),
    currency: input.currency.trim().toUpperCase(),
    metadata: sortKeys(input.metadata ?? {}),
    expiresInMinutes: input.expiresInMinutes ?? DEFAULT_EXPIRES_IN_MINUTES,
  };
  return createHash('sha256').update(JSON.stringify(canonical)).digest('hex');
}

function sortKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortKeys);
  if (value && typeof value === 'object') {
    return Object.fromEntries(
      Object.keys(value)
        .sort()
        .map((key) => [key, sortKeys((value as Record<string, unknown>)[key])]),
    );
  }
  return value;
}
