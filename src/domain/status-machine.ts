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
  /** A reorg rolled back a payment the session had counted (emitted by payment detection). */
  | 'checkout_session.payment_reversed';

/** What the status rules need to know about a session. */
export interface SessionState {
  readonly status: CheckoutSessionStatus;
  readonly overpaid: boolean;
  readonly expiresAt: Date;
  /** When a payer's transaction was bound, if one was. */
  readonly boundAt: Date | null;
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
    case 'bound_tx_failed':
      if (isTerminal(state.status)) return null;
      return { from: state.status, to: 'failed', overpaid: state.overpaid, cause: event.reason, events: ['checkout_session.failed'] };
  }
}

/** Whether the session's own lifetime is over and no bound transaction keeps it open. */
export function isExpiredAt(state: SessionState, now: Date, policy: StatusPolicy): boolean {
  if (now.getTime() < state.expiresAt.getTime()) return false;
  const inflight = state.boundAt !== null && state.boundAt.getTime() < state.expiresAt.getTime();
  if (!inflight) return true;
  const graceEnds = state.expiresAt.getTime() + policy.inflightGraceMinutes * 60_000;
  return now.getTime() >= graceEnds;
}

function expiryTransition(state: SessionState, now: Date, policy: StatusPolicy): Transition | null {
  if (isTerminal(state.status) || !isExpiredAt(state, now, policy)) return null;
  const inflight = state.boundAt !== null && state.boundAt.getTime() < state.expiresAt.getTime();
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
  if (isExpiredAt(state, now, policy)) {
    const expired = expiryTransition(state, now, policy)!;
    return { ...expired, events: [...expired.events, 'checkout_session.late_payment'] };
  }
  const threshold = event.required.times(new Decimal(1).minus(event.tolerancePercent.dividedBy(100)));
  if (event.received.greaterThanOrEqualTo(threshold) && event.received.greaterThan(0)) {
    return { from: state.status, to: 'paid', overpaid, cause: overpaid ? 'paid in full (overpaid)' : 'paid in full', events: ['checkout_session.paid'] };
  }
  if (event.received.greaterThan(0)) {
    if (state.status === 'partial') return null;
    return { from: state.status, to: 'partial', overpaid: false, cause: 'partially paid', events: ['checkout_session.partially_paid'] };
  }
  return null;
}
