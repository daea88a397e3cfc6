import type { CheckoutSessionStatus } from './checkout-session.js';
import { isTerminal } from './checkout-session.js';
import { Decimal } from './money.js';

/** Event types written to the outbox (DESIGN.md §4 "Events and webhooks"). */
export type CheckoutEventType =
  | 'checkout_session.created'
  | 'checkout_session.tx_bound'
  | 'checkout_session.partially_paid'
  | 'checkout_session.paid'
  | 'checkout_session.expired'
  | 'checkout_session.failed'
  | 'checkout_session.late_payment'
  /** A chain reorganisation removed payments the session had been credited with. */
  | 'checkout_session.payment_reversed';

/** What the status rules need to know about a session. */
export interface SessionState {
  readonly status: CheckoutSessionStatus;
  readonly overpaid: boolean;
  readonly expiresAt: Date;
  /** When a payer's transaction was bound, if one was. */
  readonly boundAt: Date | null;
  /**
   * When the bound transaction was found on chain and valid (confirmed): it is
   * then no longer in flight, so it stops holding the session open.
   */
  readonly boundTxCheckedAt?: Date | null;
}

export type SessionEvent =
  /** Time passed: settles expiry. */
  | { readonly kind: 'clock' }
  /** The confirmed total received in the selected asset changed. */
  | {
      readonly kind: 'payments_confirmed';
      readonly received: Decimal;
      readonly required: Decimal;
      /** Underpayment tolerance in percent (0–100). */
      readonly tolerancePercent: Decimal;
    }
  /**
   * The confirmed total went down: a chain reorganisation removed a payment.
   * Rolls paid/partial back to what the remaining total supports.
   */
  | {
      readonly kind: 'payments_reversed';
      readonly received: Decimal;
      readonly required: Decimal;
      readonly tolerancePercent: Decimal;
    }
  /** The bound transaction reverted, was dropped or paid the wrong wallet, asset or chain. */
  | { readonly kind: 'bound_tx_failed'; readonly reason: string };

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
 * The one place where statuses change. Pure: returns the transition the event
 * causes at `now`, or null when nothing changes. Callers persist the result,
 * its history row and its events in one transaction.
 */
export function transition(state: SessionState, event: SessionEvent, now: Date, policy: StatusPolicy): Transition | null {
  switch (event.kind) {
    case 'clock':
      return expiryTransition(state, now, policy);
    case 'payments_confirmed':
      return paymentTransition(state, event, now, policy);
    case 'payments_reversed':
      return reversalTransition(state, event);
    case 'bound_tx_failed':
      if (isTerminal(state.status)) return null;
      return { from: state.status, to: 'failed', overpaid: state.overpaid, cause: event.reason, events: ['checkout_session.failed'] };
  }
}

/** Whether the session's own lifetime is over and no bound transaction keeps it open. */
export function isExpiredAt(state: SessionState, now: Date, policy: StatusPolicy): boolean {
  if (now.getTime() < state.expiresAt.getTime()) return false;
  if (!isInFlight(state)) return true;
  return pastGrace(state, now, policy);
}

/** A transaction bound before expires_at that has not confirmed yet. */
function isInFlight(state: SessionState): boolean {
  return boundInTime(state) && !state.boundTxCheckedAt;
}

function boundInTime(state: SessionState): boolean {
  return state.boundAt !== null && state.boundAt.getTime() < state.expiresAt.getTime();
}

function pastGrace(state: SessionState, now: Date, policy: StatusPolicy): boolean {
  const graceEnds = state.expiresAt.getTime() + policy.inflightGraceMinutes * 60_000;
  return now.getTime() >= graceEnds;
}

function expiryTransition(state: SessionState, now: Date, policy: StatusPolicy): Transition | null {
  if (isTerminal(state.status) || !isExpiredAt(state, now, policy)) return null;
  const inflight = isInFlight(state);
  return {
    from: state.status,
    to: 'expired',
    overpaid: state.overpaid,
    cause: inflight ? 'bound transaction did not confirm within the in-flight grace' : 'session expired',
    events: ['checkout_session.expired'],
  };
}

function paymentTransition(
  state: SessionState,
  event: Extract<SessionEvent, { kind: 'payments_confirmed' }>,
  now: Date,
  policy: StatusPolicy,
): Transition | null {
  const overpaid = event.received.greaterThan(event.required);
  if (isTerminal(state.status)) {
    // Terminal statuses never change; the money is still reported.
    const nowOverpaid = state.status === 'paid' ? state.overpaid || overpaid : state.overpaid;
    return { from: state.status, to: state.status, overpaid: nowOverpaid, cause: 'late payment', events: ['checkout_session.late_payment'] };
  }
  // Money from a transaction bound in time counts until the grace ends, even when it
  // confirmed a moment before it was credited.
  if (isExpiredAt({ ...state, boundTxCheckedAt: null }, now, policy)) {
    const expired = expiryTransition({ ...state, boundTxCheckedAt: null }, now, policy)!;
    return { ...expired, events: [...expired.events, 'checkout_session.late_payment'] };
  }
  if (coversRequired(event)) {
    const cause = overpaid ? 'paid in full (overpaid)' : event.received.lessThan(event.required) ? 'paid within the underpayment tolerance' : 'paid in full';
    return { from: state.status, to: 'paid', overpaid, cause, events: ['checkout_session.paid'] };
  }
  if (event.received.greaterThan(0)) {
    if (state.status === 'partial') return null;
    return { from: state.status, to: 'partial', overpaid: false, cause: 'partially paid', events: ['checkout_session.partially_paid'] };
  }
  return null;
}

/** Whether the received total pays the session, allowing the organisation's underpayment tolerance. */
function coversRequired(amounts: { received: Decimal; required: Decimal; tolerancePercent: Decimal }): boolean {
  const threshold = amounts.required.times(new Decimal(1).minus(amounts.tolerancePercent.dividedBy(100)));
  return amounts.received.greaterThanOrEqualTo(threshold) && amounts.received.greaterThan(0);
}

function reversalTransition(state: SessionState, event: Extract<SessionEvent, { kind: 'payments_reversed' }>): Transition {
  const overpaid = event.received.greaterThan(event.required);
  const cause = 'payment reversed by a chain reorganisation';
  // expired and failed stay as they are: only the money they were told about changes.
  if (state.status === 'expired' || state.status === 'failed') {
    return { from: state.status, to: state.status, overpaid: state.overpaid, cause, events: ['checkout_session.payment_reversed'] };
  }
  const to = coversRequired(event) ? 'paid' : event.received.greaterThan(0) ? 'partial' : 'waiting_payment';
  return { from: state.status, to, overpaid, cause, events: ['checkout_session.payment_reversed'] };
}
