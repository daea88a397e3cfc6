import { isTerminal, type CheckoutSession, type CryptoQuote } from '../sessions/checkout-session.js';
import { amountOwed, pendingCoversDue } from '../sessions/session-amounts.js';
import type { DomainContext } from '../context.js';
import { Decimal, formatAmount } from '../shared/money.js';
import type { Attribution, AttributionCandidates } from './payment-ports.js';
import type { TxStore } from '../ports.js';
import { applySessionEvent } from '../sessions/session-events.js';

export { PAYMENT_CLOCK_SKEW_MS } from './amount-facts.js';

/**
 * Rule 2 reduced to its owner (the property tests' model): the session whose unique amount the transfer is, else
 * nobody; the sending address attributes nothing. The scan itself is judged by decide() (decide.ts).
 */
export function attributeTransfer(
  candidates: AttributionCandidates,
): { sessionId: string; attribution: Attribution } | null {
  if (candidates.exactAmountSessionId)
    return { sessionId: candidates.exactAmountSessionId, attribution: 'exact_amount' };
  return null;
}

/**
 * Runs inside the transaction holding the session's row lock, so the totals, the status machine's verdict, its
 * history row and its events are written together.
 */
export async function settleSessionPayments(
  ctx: DomainContext,
  tx: TxStore,
  session: CheckoutSession,
  now: Date,
): Promise<CheckoutSession> {
  const asset = session.cryptoCurrency;
  const quote = asset ? session.quotes.find((q) => q.ticker === asset) : undefined;
  if (!asset || !session.chainId || !session.totalAmountCrypto || !quote) {
    await tx.updateSession(session.id, { paymentsChangedAt: null, updatedAt: session.updatedAt });
    return session;
  }
  const totals = await tx.paymentTotals(session, asset, session.chainId);
  const previous = {
    onTime: session.amountReceived.minus(session.amountReceivedLate),
    late: session.amountReceivedLate,
  };
  const received = totals.onTime.plus(totals.late);
  // A partial session with nothing received any more: an exact payment in another asset superseded its bound parts
  // (docs/decisions/0024), and the store counted its money afresh in the new asset. The status machine judges that.
  const superseded = session.status === 'partial' && received.isZero() && session.amountReceived.isZero();
  const confirmedChanged =
    superseded || !received.equals(session.amountReceived) || !totals.late.equals(session.amountReceivedLate);
  if (!confirmedChanged && totals.pending.equals(session.amountPending)) {
    await tx.updateSession(session.id, { paymentsChangedAt: null, updatedAt: session.updatedAt });
    return session;
  }
  // Stored first, so the events below carry the new totals.
  const counted: CheckoutSession = {
    ...session,
    amountReceived: received,
    amountReceivedLate: totals.late,
    amountPending: totals.pending,
    updatedAt: now,
  };
  await tx.updateSession(session.id, {
    amountReceived: received,
    amountReceivedLate: totals.late,
    amountPending: totals.pending,
    paymentsChangedAt: null,
    updatedAt: now,
  });
  // Only the pending total moved: nothing to judge, but a rest may be due now (askForRest: a total not held).
  if (!confirmedChanged) return askForRest(ctx, tx, counted, amountOwed(session), quote, now);
  const event = {
    kind: 'payments_changed',
    received: { onTime: totals.onTime, late: totals.late },
    previous,
    required: session.totalAmountCrypto,
    tolerancePercent: session.paymentPolicy.underpaymentTolerancePercent,
    // What the payer was asked for the rest above what was owed (restAmount) is no overpayment.
    dust: quote.amountStep.plus(restRaise(session)),
    holds: await tx.expiryHolds(counted, ctx.inflightGraceMinutes),
  } as const;
  const judged = (await applySessionEvent(ctx, tx, counted, event, now)).session;
  return askForRest(ctx, tx, judged, amountOwed(session), quote, now);
}

/** How much the rest asked for (restAmount) is above what the session owed when it was asked. */
function restRaise(session: CheckoutSession): Decimal {
  const owed = amountOwed(session);
  if (!session.restAmount || owed === null || !session.restAmount.greaterThan(owed)) return new Decimal(0);
  return session.restAmount.minus(owed);
}

/**
 * A session paid in part asks for the rest as a unique amount of its own, so the top-up pays it by amount and is
 * never another session's exact payment; asked again whenever what it owes changes (docs/payment-rules.md, rule 4).
 */
async function askForRest(
  ctx: DomainContext,
  tx: TxStore,
  session: CheckoutSession,
  owedBefore: Decimal | null,
  quote: CryptoQuote,
  now: Date,
): Promise<CheckoutSession> {
  const step = quote.amountStep;
  const owed = amountOwed(session);
  const network = session.networks.find((n) => n.chainId === session.chainId);
  const asset = session.cryptoCurrency;
  // Also before anything is received when its total is not the amount it holds (a bind locked it at an old quote whose
  // amount another session may hold now); not while what is on its way covers what is owed.
  const totalNotHeld =
    session.totalAmountCrypto !== null && !session.totalAmountCrypto.equals(quote.amount) && !pendingCoversDue(session);
  const wanted =
    !isTerminal(session.status) &&
    (session.amountReceived.greaterThan(0) || totalNotHeld) &&
    owed !== null &&
    owed.greaterThan(0);
  if (!network || !asset || (!wanted && !session.restAmount)) return session;
  // What it owes did not change (only the split between on-time and late money did): the payer keeps the same amount.
  if (wanted && session.restAmount && owedBefore !== null && owed.equals(owedBefore)) return session;
  const previous = session.restAmount ? { asset, network: network.network, amount: session.restAmount } : null;
  const rest = wanted
    ? {
        asset,
        network: network.network,
        wallet: network.walletAddress,
        base: owed.dividedBy(step).toDecimalPlaces(0, Decimal.ROUND_CEIL).times(step),
        step,
      }
    : null;
  // At a deposit address the rest is what is owed: the address tells payments apart, no amount needs to be unique.
  const restAmount = (await tx.receivesAtDepositAddress(session.id))
    ? (rest?.base ?? null)
    : await tx.claimRestAmount(session.id, previous, rest, ctx.uniqueAmountSteps, now);
  await tx.updateSession(session.id, { restAmount, updatedAt: session.updatedAt });
  return { ...session, restAmount };
}

/** A line for operators: what a payment row says, amounts on the wire format. */
export function describeAmount(amount: Decimal): string {
  return formatAmount(amount.toDecimalPlaces(8, Decimal.ROUND_DOWN));
}
