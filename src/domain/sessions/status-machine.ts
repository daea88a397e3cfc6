import type { CheckoutSessionStatus } from './checkout-session.js';
import { isTerminal } from './checkout-session.js';
import type { CheckoutEventType } from '../shared/event-types.js';
import { Decimal } from '../shared/money.js';

/** What the status rules need to know about a session. */
export interface SessionState {
  readonly status: CheckoutSessionStatus;
  readonly overpaid: boolean;
  readonly expiresAt: Date;
}

/**
 * What keeps a session open after `expires_at` (docs/payment-rules.md, rule 6:
 * on time means sent on time). Both hold it for at most the in-flight grace.
 */
export interface ExpiryHolds {
  /**
   * A credited transfer mined before expires_at is not confirmed yet, or a transaction bound to the session was known
   * to the chain before expires_at and is not judged yet.
   */
  readonly paymentInFlight: boolean;
  /** A network of the session that is being watched has not been scanned past expires_at yet. */
  readonly chainBehind: boolean;
}

export const NO_HOLDS: ExpiryHolds = Object.freeze({ paymentInFlight: false, chainBehind: false });

/** Confirmed money in the session's asset, split by whether its block came before expires_at. */
export interface ReceivedTotals {
  readonly onTime: Decimal;
  readonly late: Decimal;
}

export type SessionEvent =
  /** Time passed: settles expiry. */
  | { readonly kind: 'clock'; readonly holds: ExpiryHolds }
  /** The confirmed totals in the selected asset changed (a payment confirmed, or a reorganisation removed one). */
  | {
      readonly kind: 'payments_changed';
      readonly received: ReceivedTotals;
      readonly previous: ReceivedTotals;
      readonly required: Decimal;
      /** Underpayment (and overpayment) tolerance in percent (0–100). */
      readonly tolerancePercent: Decimal;
      /** The asset's smallest quoted unit: an excess below it is rounding dust, never an overpayment. */
      readonly dust: Decimal;
      readonly holds: ExpiryHolds;
    };

export interface StatusPolicy {
  readonly inflightGraceMinutes: number;
}

export interface Transition {
  readonly from: CheckoutSessionStatus;
  readonly to: CheckoutSessionStatus;
  readonly overpaid: boolean;
  /** Why, for the history row. */
  readonly cause: string;
  readonly events: readonly CheckoutEventType[];
}

/**
 * The one place where statuses change (docs/decisions/0012-status-machine.md). Pure: callers persist the transition,
 * its history row and its events in one transaction; null when nothing changes.
 */
export function transition(
  state: SessionState,
  event: SessionEvent,
  now: Date,
  policy: StatusPolicy,
): Transition | null {
  switch (event.kind) {
    case 'clock':
      return expiryTransition(state, now, policy, event.holds);
    case 'payments_changed':
      return paymentTransition(state, event, now, policy);
  }
}

/** Whether an open session's time may be up: the cheap check before the holds are looked up. */
export function expiryMayBeDue(state: Pick<SessionState, 'status' | 'expiresAt'>, now: Date): boolean {
  return !isTerminal(state.status) && now.getTime() >= state.expiresAt.getTime();
}

/** Whether the session's time is up and nothing holds it open (or the grace has ended). */
export function isExpiredAt(
  state: Pick<SessionState, 'expiresAt'>,
  now: Date,
  policy: StatusPolicy,
  holds: ExpiryHolds,
): boolean {
  if (now.getTime() < state.expiresAt.getTime()) return false;
  if (!isHeld(holds)) return true;
  return now.getTime() >= graceEndsAt(state, policy).getTime();
}

/** When the in-flight grace after `expires_at` ends. */
export function graceEndsAt(state: Pick<SessionState, 'expiresAt'>, policy: StatusPolicy): Date {
  return new Date(state.expiresAt.getTime() + policy.inflightGraceMinutes * 60_000);
}

function isHeld(holds: ExpiryHolds): boolean {
  return holds.paymentInFlight || holds.chainBehind;
}

function expiryTransition(state: SessionState, now: Date, policy: StatusPolicy, holds: ExpiryHolds): Transition | null {
  if (isTerminal(state.status) || !isExpiredAt(state, now, policy, holds)) return null;
  return {
    from: state.status,
    to: 'expired',
    overpaid: state.overpaid,
    cause: holds.paymentInFlight
      ? 'the payment in flight did not confirm within the in-flight grace'
      : 'session expired',
    events: ['checkout_session.expired'],
  };
}

type PaymentsChanged = Extract<SessionEvent, { kind: 'payments_changed' }>;

function paymentTransition(
  state: SessionState,
  event: PaymentsChanged,
  now: Date,
  policy: StatusPolicy,
): Transition | null {
  const total = event.received.onTime.plus(event.received.late);
  const previousTotal = event.previous.onTime.plus(event.previous.late);
  if (isTerminal(state.status)) return terminalPaymentTransition(state, event, total, previousTotal);
  // Partial with nothing received: the parts it had no longer count (an exact payment in another asset superseded
  // them, docs/decisions/0024); it waits for its payment again.
  if (
    state.status === 'partial' &&
    total.isZero() &&
    previousTotal.isZero() &&
    !isExpiredAt(state, now, policy, event.holds)
  )
    return {
      from: 'partial',
      to: 'waiting_payment',
      overpaid: false,
      cause: 'superseded: the parts received no longer count; an exact payment in another asset is on its way',
      events: ['checkout_session.payment_reversed'],
    };

  const lateEvents: CheckoutEventType[] = event.received.late.greaterThan(event.previous.late)
    ? ['checkout_session.late_payment']
    : [];
  if (event.received.onTime.lessThan(event.previous.onTime)) {
    const to = coversRequired(event.received.onTime, event)
      ? 'paid'
      : event.received.onTime.greaterThan(0)
        ? 'partial'
        : 'waiting_payment';
    return {
      from: state.status,
      to,
      overpaid: to === 'paid' && isOverpaid(event.received.onTime, event),
      cause: 'payment reversed by a chain reorganisation',
      events: ['checkout_session.payment_reversed', ...lateEvents],
    };
  }
  // Money mined before expires_at counts whenever it confirms: it was sent on time.
  if (event.received.onTime.greaterThan(event.previous.onTime) && coversRequired(event.received.onTime, event)) {
    const overpaid = isOverpaid(event.received.onTime, event);
    const cause = overpaid
      ? 'paid in full (overpaid)'
      : event.received.onTime.lessThan(event.required)
        ? 'paid within the underpayment tolerance'
        : 'paid in full';
    return { from: state.status, to: 'paid', overpaid, cause, events: ['checkout_session.paid', ...lateEvents] };
  }
  if (isExpiredAt(state, now, policy, event.holds)) {
    const expired = expiryTransition(state, now, policy, event.holds)!;
    return { ...expired, events: [...expired.events, ...lateEvents] };
  }
  if (event.received.onTime.greaterThan(event.previous.onTime) && state.status !== 'partial') {
    return {
      from: state.status,
      to: 'partial',
      overpaid: false,
      cause: 'partially paid',
      events: ['checkout_session.partially_paid', ...lateEvents],
    };
  }
  if (lateEvents.length > 0)
    return {
      from: state.status,
      to: state.status,
      overpaid: state.overpaid,
      cause: 'late payment',
      events: lateEvents,
    };
  return null;
}

/** paid, expired and failed never change: money arriving or leaving afterwards is reported, not judged. */
function terminalPaymentTransition(
  state: SessionState,
  event: PaymentsChanged,
  total: Decimal,
  previousTotal: Decimal,
): Transition | null {
  // A paid session whose on-time money fell is judged on what is left on time, even when the total did not move: a
  // reorganisation may re-include an on-time payment after expires_at, and late money never pays a session.
  if (
    state.status === 'paid' &&
    event.received.onTime.lessThan(event.previous.onTime) &&
    !total.lessThan(previousTotal)
  )
    return {
      ...paidReversed(state, event),
      events: [
        'checkout_session.payment_reversed',
        ...(event.received.late.greaterThan(event.previous.late) ? ['checkout_session.late_payment' as const] : []),
      ],
    };
  if (total.greaterThan(previousTotal)) {
    const overpaid = state.status === 'paid' ? state.overpaid || isOverpaid(total, event) : state.overpaid;
    return {
      from: state.status,
      to: state.status,
      overpaid,
      cause: 'late payment',
      events: ['checkout_session.late_payment'],
    };
  }
  if (total.lessThan(previousTotal)) {
    const cause = 'payment reversed by a chain reorganisation';
    if (state.status !== 'paid')
      return {
        from: state.status,
        to: state.status,
        overpaid: state.overpaid,
        cause,
        events: ['checkout_session.payment_reversed'],
      };
    return { ...paidReversed(state, event), events: ['checkout_session.payment_reversed'] };
  }
  return null;
}

/** A paid session whose money left the chain is paid no more: it shows what the on-time rest supports. */
function paidReversed(state: SessionState, event: PaymentsChanged): Omit<Transition, 'events'> {
  const onTime = event.received.onTime;
  const to = coversRequired(onTime, event) ? 'paid' : onTime.greaterThan(0) ? 'partial' : 'waiting_payment';
  return {
    from: state.status,
    to,
    overpaid: to === 'paid' && isOverpaid(onTime, event),
    cause: 'payment reversed by a chain reorganisation',
  };
}

/** Whether the received total pays the session, allowing the organisation's underpayment tolerance. */
export function coversRequired(received: Decimal, rule: { required: Decimal; tolerancePercent: Decimal }): boolean {
  const threshold = rule.required.times(new Decimal(1).minus(rule.tolerancePercent.dividedBy(100)));
  return received.greaterThanOrEqualTo(threshold) && received.greaterThan(0);
}

/**
 * Overpaid only beyond the organisation's tolerance (the same percentage that forgives an
 * underpayment), and never by rounding dust below the asset's smallest quoted unit.
 */
export function isOverpaid(
  received: Decimal,
  rule: { required: Decimal; tolerancePercent: Decimal; dust: Decimal },
): boolean {
  const excess = received.minus(rule.required);
  const allowance = rule.required.times(rule.tolerancePercent.dividedBy(100));
  return excess.greaterThan(allowance) && excess.greaterThanOrEqualTo(rule.dust) && excess.greaterThan(0);
}
