import type { CheckoutSession } from './checkout-session.js';
import type { DomainContext } from '../context.js';
import { conflict, unauthorised } from '../shared/errors.js';
import {
  authenticateMerchantDeferringReplayCheck,
  countingAuthFailures,
  recordSignature,
  rememberSignature,
  REPLAYED_MESSAGE,
  type Merchant,
  type SignedRequest,
  type UnusedSignature,
} from '../organisations/authenticate-merchant.js';
import { rateLimit } from '../organisations/throttle.js';
import { outboxEvent } from './session-events.js';
import { merchantViewAmountPath, type MerchantSessionView } from './checkout-session.views.js';
import { getCheckoutSession } from './get-checkout-session.js';
import type { AmountLane } from '../payments/payment-ports.js';
import { amountClaims, amountLane, laneSize, withOffsets } from '../rates/quotes.js';
import {
  DEFAULT_EXPIRES_IN_MINUTES,
  hashRequest,
  MERCHANT_API_ORIGIN,
  type CreateCheckoutInput,
  type SessionOrigin,
} from './checkout-request.js';
import { draftSession } from './draft-session.js';
import type { SessionReceiving } from '../organisations/deposit-addresses.js';

export { DEFAULT_EXPIRES_IN_MINUTES, MERCHANT_API_ORIGIN, type CreateCheckoutInput, type SessionOrigin };

export interface CreateCheckoutResult {
  readonly session: CheckoutSession;
  /** True when an Idempotency-Key replay returned an existing session. */
  readonly replayed: boolean;
  /** The session's merchant view when the created event showed the very same (the answer need not build it again). */
  readonly merchantView?: MerchantSessionView;
}

/** Thrown when the session's payment link took no more payers at the moment of writing (nothing was written). */
export class PaymentLinkUnavailable extends Error {
  constructor(readonly linkId: string) {
    super(`Payment link ${linkId} takes no more payers`);
  }
}

/**
 * The session, its amounts, history row, event, a link's use and the signature's use go in one atomic write
 * (docs/api/rest.md#create-rules-and-limits), so a replayed signature is refused with nothing written.
 */
export async function createCheckoutSession(
  ctx: DomainContext,
  merchant: Merchant,
  input: CreateCheckoutInput,
  idempotencyKey?: string,
  origin: SessionOrigin = MERCHANT_API_ORIGIN,
  signature: UnusedSignature | null = null,
): Promise<CreateCheckoutResult> {
  // Only an Idempotency-Key needs the request's hash (it tells a retry from another request).
  const requestHash = () => origin.requestHash ?? hashRequest(input);
  let draft: CheckoutSession;
  let receiving: SessionReceiving;
  try {
    ({ session: draft, receiving } = await draftSession(ctx, merchant, input, origin));
  } catch (error) {
    // A retry of a request that made its session is answered with it even when a new one could not be made now (a
    // rates outage is when clients retry).
    const existing =
      idempotencyKey === undefined
        ? null
        : await ctx.store.sessions.findIdempotencyKey(merchant.organisationId, idempotencyKey);
    // Refused or not, the signature is used now: sent again verbatim, it is a replay, answered with the session it
    // was answered with (signatureReplay).
    if (signature && !(await rememberSignature(ctx, signature, existing?.sessionId ?? null)))
      return signatureReplay(ctx, merchant, signature, idempotencyKey, requestHash());
    if (!existing) throw error;
    return replay(ctx, existing.sessionId, existing.requestHash, requestHash());
  }

  // An asset whose every amount is held on the wallet is left out and the rest written again, so one busy total
  // never blocks a create the other assets can serve (docs/payment-rules.md, rule 4).
  let quotes = draft.quotes;
  const lane = amountLane(origin.fromPaymentLink, ctx.uniqueAmountSteps);
  let signatureToRecord = signature ?? null;
  // A deposit address is the session's own: its quotes need no unique amount, so nothing is claimed.
  const claimsAmounts = receiving.mode === 'shared_wallet';
  for (;;) {
    const claims = claimsAmounts ? amountClaims(quotes, ctx.networks, draft.networks, lane) : [];
    const tries = ctx.store.offsetsToTry(claims, ctx.uniqueAmountSteps);
    const session: CheckoutSession = { ...draft, quotes: withOffsets(quotes, (position) => tries[position]) };
    const event = outboxEvent(ctx, session, 'checkout_session.created', session.createdAt);
    const outcome = await ctx.store.createSession({
      session,
      claims,
      maxSteps: ctx.uniqueAmountSteps,
      cause: origin.cause,
      event,
      amountPath: merchantViewAmountPath,
      signature: signatureToRecord,
      idempotency: idempotencyKey === undefined ? null : { key: idempotencyKey, requestHash: requestHash() },
      linkUse: origin.productPaymentLinkId ? { linkId: origin.productPaymentLinkId, at: session.createdAt } : null,
      receiving,
    });
    switch (outcome.kind) {
      case 'replayed_signature':
        return signatureReplay(ctx, merchant, signature!, idempotencyKey, requestHash());
      case 'replay':
        return replay(ctx, outcome.record.sessionId, outcome.record.requestHash, requestHash());
      case 'link_unavailable':
        throw new PaymentLinkUnavailable(origin.productPaymentLinkId!);
      case 'amounts_taken': {
        const left = quotes.filter((quote) => quote.ticker !== outcome.ticker);
        if (left.length === 0 || left.length === quotes.length)
          throw amountsTaken(outcome.ticker, ctx.uniqueAmountSteps, lane);
        // Nothing of the refused write stayed but the signature's use: written again without it.
        quotes = left;
        signatureToRecord = null;
        continue;
      }
      case 'created': {
        const taken = (position: number) => outcome.offsets.get(position) ?? 0;
        const asTried = session.quotes.every((quote, position) => quote.offsetSteps === taken(position));
        if (!asTried) return { session: { ...session, quotes: withOffsets(quotes, taken) }, replayed: false };
        return { session, replayed: false, merchantView: event.payload as MerchantSessionView };
      }
    }
  }
}

/**
 * The signature's use is recorded in create's own write (one round trip); a request refused before it records it on
 * its own, so the same request sent again is a replay either way (docs/api/rest.md#signing-a-merchant-call).
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

/**
 * A used signature answers the same 201 only with the Idempotency-Key of its session; create's headers are not
 * signed, so a key added to a captured request proves nothing (docs/api/rest.md#signing-a-merchant-call).
 */
async function signatureReplay(
  ctx: DomainContext,
  merchant: Merchant,
  signature: UnusedSignature,
  idempotencyKey: string | undefined,
  requestHash: string,
): Promise<CreateCheckoutResult> {
  if (idempotencyKey !== undefined) {
    const [made, existing] = await Promise.all([
      ctx.requestGuard.signatures.sessionMadeWith(signature.apiKeyId, signature.signature),
      ctx.store.sessions.findIdempotencyKey(merchant.organisationId, idempotencyKey),
    ]);
    if (made !== null && existing?.sessionId === made) return replay(ctx, made, existing.requestHash, requestHash);
  }
  throw unauthorised(REPLAYED_MESSAGE, 'signature_replayed');
}

async function replay(
  ctx: DomainContext,
  sessionId: string,
  storedHash: string,
  requestHash: string,
): Promise<CreateCheckoutResult> {
  if (storedHash !== requestHash) {
    throw conflict('Idempotency-Key was already used with a different request body', 'idempotency_conflict');
  }
  // Through getCheckoutSession so a replay after expiry shows the settled status.
  return { session: await getCheckoutSession(ctx, sessionId), replayed: true };
}

/**
 * docs/payment-rules.md, rule 4: every unique amount of the price, in the session's lane, is held. Says what frees
 * one (a holder paid, or its time and then its late-payment window up) and what raises the capacity.
 */
function amountsTaken(ticker: string, maxSteps: number, lane: AmountLane) {
  const lanes =
    lane.stride === 1
      ? `${maxSteps} amounts a price`
      : `${laneSize(lane, maxSteps)} of the ${maxSteps} amounts a price for payment links`;
  return conflict(
    `Every unique amount of this total in ${ticker} is held by another open checkout session on the same wallet, ` +
      `or by one that closed unpaid within its late-payment window (${lanes}, KASSA_UNIQUE_AMOUNT_STEPS), and so ` +
      `in every other asset it could be paid in: retry once one of them is paid or its time is up, or ask the ` +
      `operator to raise KASSA_UNIQUE_AMOUNT_STEPS`,
    'amounts_exhausted',
  );
}
