import { describe, expect, it } from 'vitest';
import type { CheckoutSessionStatus } from '../../src/domain/checkout-session.js';
import { Decimal } from '../../src/domain/money.js';
import {
  isExpiredAt,
  transition,
  type SessionEvent,
  type SessionState,
  type StatusPolicy,
  type Transition,
} from '../../src/domain/status-machine.js';

// DESIGN.md §4 "Status machine" and "Payment policy", one row per rule.

const EXPIRES = new Date('2025-01-15T13:00:00.000Z');
const MIN = 60_000;
const at = (offsetMs: number) => new Date(EXPIRES.getTime() + offsetMs);
const BEFORE = at(-10 * MIN);
const POLICY: StatusPolicy = { inflightGraceMinutes: 60 };

const state = (status: CheckoutSessionStatus, extra: Partial<SessionState> = {}): SessionState => ({
  status,
  overpaid: false,
  expiresAt: EXPIRES,
  boundAt: null,
  ...extra,
});

const paid = (received: string, required = '1', tolerancePercent = '0'): SessionEvent => ({
  kind: 'payments_confirmed',
  received: new Decimal(received),
  required: new Decimal(required),
  tolerancePercent: new Decimal(tolerancePercent),
});
const reversed = (received: string, required = '1', tolerancePercent = '0'): SessionEvent => ({
  kind: 'payments_reversed',
  received: new Decimal(received),
  required: new Decimal(required),
  tolerancePercent: new Decimal(tolerancePercent),
});
const REORG = 'payment reversed by a chain reorganisation';
const clock: SessionEvent = { kind: 'clock' };
const txFailed = (reason: string): SessionEvent => ({ kind: 'bound_tx_failed', reason });

const GRACE_CAUSE = 'bound transaction did not confirm within the in-flight grace';

interface Row {
  readonly name: string;
  readonly state: SessionState;
  readonly event: SessionEvent;
  readonly now: Date;
  readonly policy?: StatusPolicy;
  readonly expected: Transition | null;
}

const paymentRows: Row[] = [
  {
    name: 'waiting_payment → partial: 0 < received < required',
    state: state('waiting_payment'),
    event: paid('0.5'),
    now: BEFORE,
    expected: { from: 'waiting_payment', to: 'partial', overpaid: false, cause: 'partially paid', events: ['checkout_session.partially_paid'] },
  },
  {
    name: 'waiting_payment → partial: the smallest unit received',
    state: state('waiting_payment'),
    event: paid('0.00000001'),
    now: BEFORE,
    expected: { from: 'waiting_payment', to: 'partial', overpaid: false, cause: 'partially paid', events: ['checkout_session.partially_paid'] },
  },
  {
    name: 'partial → partial: more, still short, changes nothing',
    state: state('partial'),
    event: paid('0.99999999'),
    now: BEFORE,
    expected: null,
  },
  {
    name: 'waiting_payment → paid: exact amount',
    state: state('waiting_payment'),
    event: paid('1'),
    now: BEFORE,
    expected: { from: 'waiting_payment', to: 'paid', overpaid: false, cause: 'paid in full', events: ['checkout_session.paid'] },
  },
  {
    name: 'partial → paid: exact amount',
    state: state('partial'),
    event: paid('0.00107970', '0.00107970'),
    now: BEFORE,
    expected: { from: 'partial', to: 'paid', overpaid: false, cause: 'paid in full', events: ['checkout_session.paid'] },
  },
  {
    name: 'waiting_payment → paid, overpaid: received > required',
    state: state('waiting_payment'),
    event: paid('1.5'),
    now: BEFORE,
    expected: { from: 'waiting_payment', to: 'paid', overpaid: true, cause: 'paid in full (overpaid)', events: ['checkout_session.paid'] },
  },
  {
    name: 'partial → paid, overpaid by one unit',
    state: state('partial'),
    event: paid('1.00000001'),
    now: BEFORE,
    expected: { from: 'partial', to: 'paid', overpaid: true, cause: 'paid in full (overpaid)', events: ['checkout_session.paid'] },
  },
  {
    name: 'underpayment exactly at the tolerance (1%: 0.99 of 1) → paid, not overpaid',
    state: state('waiting_payment'),
    event: paid('0.99', '1', '1'),
    now: BEFORE,
    expected: { from: 'waiting_payment', to: 'paid', overpaid: false, cause: 'paid within the underpayment tolerance', events: ['checkout_session.paid'] },
  },
  {
    name: 'underpayment inside a fractional tolerance (0.5%: 199.1 of 200) → paid',
    state: state('partial'),
    event: paid('199.1', '200', '0.5'),
    now: BEFORE,
    expected: { from: 'partial', to: 'paid', overpaid: false, cause: 'paid within the underpayment tolerance', events: ['checkout_session.paid'] },
  },
  {
    name: 'underpayment just outside the tolerance (1%: 0.98999999 of 1) → partial',
    state: state('waiting_payment'),
    event: paid('0.98999999', '1', '1'),
    now: BEFORE,
    expected: { from: 'waiting_payment', to: 'partial', overpaid: false, cause: 'partially paid', events: ['checkout_session.partially_paid'] },
  },
  {
    name: 'underpayment with the default tolerance 0 (one unit short) → partial',
    state: state('waiting_payment'),
    event: paid('0.99999999'),
    now: BEFORE,
    expected: { from: 'waiting_payment', to: 'partial', overpaid: false, cause: 'partially paid', events: ['checkout_session.partially_paid'] },
  },
  {
    name: 'zero received on waiting_payment → no change',
    state: state('waiting_payment'),
    event: paid('0'),
    now: BEFORE,
    expected: null,
  },
  {
    name: 'zero received even with a 100% tolerance → no change',
    state: state('waiting_payment'),
    event: paid('0', '1', '100'),
    now: BEFORE,
    expected: null,
  },
  {
    name: 'zero received on partial → no change',
    state: state('partial'),
    event: paid('0'),
    now: BEFORE,
    expected: null,
  },
  {
    name: 'paid just before expires_at → paid',
    state: state('waiting_payment'),
    event: paid('1'),
    now: at(-1),
    expected: { from: 'waiting_payment', to: 'paid', overpaid: false, cause: 'paid in full', events: ['checkout_session.paid'] },
  },
];

const reversalRows: Row[] = [
  {
    name: 'paid → waiting_payment: the only payment was reorged away',
    state: state('paid'),
    event: reversed('0'),
    now: BEFORE,
    expected: { from: 'paid', to: 'waiting_payment', overpaid: false, cause: REORG, events: ['checkout_session.payment_reversed'] },
  },
  {
    name: 'paid → partial: one of two payments was reorged away',
    state: state('paid'),
    event: reversed('0.4'),
    now: BEFORE,
    expected: { from: 'paid', to: 'partial', overpaid: false, cause: REORG, events: ['checkout_session.payment_reversed'] },
  },
  {
    name: 'paid stays paid when the rest still covers it; overpaid is recomputed',
    state: state('paid', { overpaid: true }),
    event: reversed('1'),
    now: BEFORE,
    expected: { from: 'paid', to: 'paid', overpaid: false, cause: REORG, events: ['checkout_session.payment_reversed'] },
  },
  {
    name: 'paid stays paid when the rest is inside the tolerance',
    state: state('paid'),
    event: reversed('0.995', '1', '1'),
    now: BEFORE,
    expected: { from: 'paid', to: 'paid', overpaid: false, cause: REORG, events: ['checkout_session.payment_reversed'] },
  },
  {
    name: 'partial → waiting_payment',
    state: state('partial'),
    event: reversed('0'),
    now: BEFORE,
    expected: { from: 'partial', to: 'waiting_payment', overpaid: false, cause: REORG, events: ['checkout_session.payment_reversed'] },
  },
  {
    name: 'expired keeps its status; the reversal of a late payment is still reported',
    state: state('expired'),
    event: reversed('0'),
    now: at(MIN),
    expected: { from: 'expired', to: 'expired', overpaid: false, cause: REORG, events: ['checkout_session.payment_reversed'] },
  },
  {
    name: 'failed keeps its status',
    state: state('failed'),
    event: reversed('0'),
    now: BEFORE,
    expected: { from: 'failed', to: 'failed', overpaid: false, cause: REORG, events: ['checkout_session.payment_reversed'] },
  },
];

const afterExpiryRows: Row[] = [
  {
    name: 'payment after expiry on an open session (no bound tx) → expired + late_payment',
    state: state('waiting_payment'),
    event: paid('1'),
    now: at(MIN),
    expected: {
      from: 'waiting_payment',
      to: 'expired',
      overpaid: false,
      cause: 'session expired',
      events: ['checkout_session.expired', 'checkout_session.late_payment'],
    },
  },
  {
    name: 'payment exactly at expires_at on partial → expired + late_payment',
    state: state('partial'),
    event: paid('1'),
    now: EXPIRES,
    expected: {
      from: 'partial',
      to: 'expired',
      overpaid: false,
      cause: 'session expired',
      events: ['checkout_session.expired', 'checkout_session.late_payment'],
    },
  },
  {
    name: 'tx bound before expires_at confirms inside the grace → paid',
    state: state('waiting_payment', { boundAt: at(-5 * MIN) }),
    event: paid('1'),
    now: at(30 * MIN),
    expected: { from: 'waiting_payment', to: 'paid', overpaid: false, cause: 'paid in full', events: ['checkout_session.paid'] },
  },
  {
    name: 'its payment credited just after the bound tx was marked confirmed, inside the grace → paid',
    state: state('waiting_payment', { boundAt: at(-5 * MIN), boundTxCheckedAt: at(30 * MIN) }),
    event: paid('1'),
    now: at(30 * MIN),
    expected: { from: 'waiting_payment', to: 'paid', overpaid: false, cause: 'paid in full', events: ['checkout_session.paid'] },
  },
  {
    name: 'tx bound before expires_at confirms short inside the grace → partial',
    state: state('waiting_payment', { boundAt: at(-5 * MIN) }),
    event: paid('0.4'),
    now: at(60 * MIN - 1),
    expected: { from: 'waiting_payment', to: 'partial', overpaid: false, cause: 'partially paid', events: ['checkout_session.partially_paid'] },
  },
  {
    name: 'tx bound before expires_at confirms when the grace has ended → expired + late_payment',
    state: state('waiting_payment', { boundAt: at(-5 * MIN) }),
    event: paid('1'),
    now: at(60 * MIN),
    expected: {
      from: 'waiting_payment',
      to: 'expired',
      overpaid: false,
      cause: GRACE_CAUSE,
      events: ['checkout_session.expired', 'checkout_session.late_payment'],
    },
  },
  {
    name: 'tx bound after expires_at gets no grace → expired + late_payment',
    state: state('waiting_payment', { boundAt: at(MIN) }),
    event: paid('1'),
    now: at(2 * MIN),
    expected: {
      from: 'waiting_payment',
      to: 'expired',
      overpaid: false,
      cause: 'session expired',
      events: ['checkout_session.expired', 'checkout_session.late_payment'],
    },
  },
];

const terminalPaymentRows: Row[] = [
  {
    name: 'paid + later payment → stays paid, overpaid set, late_payment',
    state: state('paid'),
    event: paid('1.2'),
    now: BEFORE,
    expected: { from: 'paid', to: 'paid', overpaid: true, cause: 'late payment', events: ['checkout_session.late_payment'] },
  },
  {
    name: 'paid + later payment long after expiry → stays paid, overpaid set, late_payment',
    state: state('paid'),
    event: paid('2'),
    now: at(24 * 60 * MIN),
    expected: { from: 'paid', to: 'paid', overpaid: true, cause: 'late payment', events: ['checkout_session.late_payment'] },
  },
  {
    name: 'paid and already overpaid stays overpaid',
    state: state('paid', { overpaid: true }),
    event: paid('1'),
    now: BEFORE,
    expected: { from: 'paid', to: 'paid', overpaid: true, cause: 'late payment', events: ['checkout_session.late_payment'] },
  },
  {
    name: 'expired + payment → stays expired, late_payment, overpaid unchanged',
    state: state('expired'),
    event: paid('5'),
    now: at(MIN),
    expected: { from: 'expired', to: 'expired', overpaid: false, cause: 'late payment', events: ['checkout_session.late_payment'] },
  },
  {
    name: 'failed + payment → stays failed, late_payment, overpaid unchanged',
    state: state('failed'),
    event: paid('1'),
    now: BEFORE,
    expected: { from: 'failed', to: 'failed', overpaid: false, cause: 'late payment', events: ['checkout_session.late_payment'] },
  },
];

const clockRows: Row[] = [
  { name: 'no expiry 1 ms before expires_at', state: state('waiting_payment'), event: clock, now: at(-1), expected: null },
  { name: 'no expiry long before expires_at (partial)', state: state('partial'), event: clock, now: BEFORE, expected: null },
  {
    name: 'waiting_payment → expired exactly at expires_at, no bound tx',
    state: state('waiting_payment'),
    event: clock,
    now: EXPIRES,
    expected: { from: 'waiting_payment', to: 'expired', overpaid: false, cause: 'session expired', events: ['checkout_session.expired'] },
  },
  {
    name: 'partial → expired after expires_at, no bound tx',
    state: state('partial'),
    event: clock,
    now: at(60 * MIN),
    expected: { from: 'partial', to: 'expired', overpaid: false, cause: 'session expired', events: ['checkout_session.expired'] },
  },
  {
    name: 'tx bound before expires_at keeps the session open during the grace',
    state: state('waiting_payment', { boundAt: at(-5 * MIN) }),
    event: clock,
    now: at(30 * MIN),
    expected: null,
  },
  {
    name: 'tx bound before expires_at keeps it open until 1 ms before the grace ends',
    state: state('partial', { boundAt: at(-1) }),
    event: clock,
    now: at(60 * MIN - 1),
    expected: null,
  },
  {
    name: 'a bound tx that already confirmed (a partial payment) no longer holds the session open',
    state: state('partial', { boundAt: at(-5 * MIN), boundTxCheckedAt: at(-4 * MIN) }),
    event: clock,
    now: at(1),
    expected: { from: 'partial', to: 'expired', overpaid: false, cause: 'session expired', events: ['checkout_session.expired'] },
  },
  {
    name: 'a bound tx that confirmed after expires_at: expired at once, inside what was the grace',
    state: state('partial', { boundAt: at(-5 * MIN), boundTxCheckedAt: at(10 * MIN) }),
    event: clock,
    now: at(10 * MIN),
    expected: { from: 'partial', to: 'expired', overpaid: false, cause: 'session expired', events: ['checkout_session.expired'] },
  },
  {
    name: 'tx bound before expires_at: expired when the grace ends',
    state: state('waiting_payment', { boundAt: at(-5 * MIN) }),
    event: clock,
    now: at(60 * MIN),
    expected: { from: 'waiting_payment', to: 'expired', overpaid: false, cause: GRACE_CAUSE, events: ['checkout_session.expired'] },
  },
  {
    name: 'the grace follows the policy (15 minutes)',
    state: state('waiting_payment', { boundAt: at(-5 * MIN) }),
    event: clock,
    now: at(15 * MIN),
    policy: { inflightGraceMinutes: 15 },
    expected: { from: 'waiting_payment', to: 'expired', overpaid: false, cause: GRACE_CAUSE, events: ['checkout_session.expired'] },
  },
  {
    name: 'a grace of 0 minutes expires at expires_at',
    state: state('waiting_payment', { boundAt: at(-5 * MIN) }),
    event: clock,
    now: EXPIRES,
    policy: { inflightGraceMinutes: 0 },
    expected: { from: 'waiting_payment', to: 'expired', overpaid: false, cause: GRACE_CAUSE, events: ['checkout_session.expired'] },
  },
  {
    name: 'tx bound exactly at expires_at is not in flight',
    state: state('waiting_payment', { boundAt: EXPIRES }),
    event: clock,
    now: EXPIRES,
    expected: { from: 'waiting_payment', to: 'expired', overpaid: false, cause: 'session expired', events: ['checkout_session.expired'] },
  },
  {
    name: 'tx bound after expires_at does not keep the session open',
    state: state('waiting_payment', { boundAt: at(MIN) }),
    event: clock,
    now: at(2 * MIN),
    expected: { from: 'waiting_payment', to: 'expired', overpaid: false, cause: 'session expired', events: ['checkout_session.expired'] },
  },
  ...(['paid', 'expired', 'failed'] as const).map(
    (status): Row => ({ name: `${status} never expires again`, state: state(status), event: clock, now: at(7 * 24 * 60 * MIN), expected: null }),
  ),
];

const failureRows: Row[] = [
  {
    name: 'waiting_payment → failed with the reason as cause',
    state: state('waiting_payment', { boundAt: at(-20 * MIN) }),
    event: txFailed('transaction reverted'),
    now: BEFORE,
    expected: { from: 'waiting_payment', to: 'failed', overpaid: false, cause: 'transaction reverted', events: ['checkout_session.failed'] },
  },
  {
    name: 'partial → failed with the reason as cause',
    state: state('partial', { boundAt: at(-20 * MIN) }),
    event: txFailed('transaction paid 0xabc, not the session wallet'),
    now: BEFORE,
    expected: {
      from: 'partial',
      to: 'failed',
      overpaid: false,
      cause: 'transaction paid 0xabc, not the session wallet',
      events: ['checkout_session.failed'],
    },
  },
  {
    name: 'tx bound before expires_at fails inside the grace → failed',
    state: state('waiting_payment', { boundAt: at(-5 * MIN) }),
    event: txFailed('transaction not found within the in-flight grace'),
    now: at(10 * MIN),
    expected: {
      from: 'waiting_payment',
      to: 'failed',
      overpaid: false,
      cause: 'transaction not found within the in-flight grace',
      events: ['checkout_session.failed'],
    },
  },
  ...(['paid', 'expired', 'failed'] as const).map(
    (status): Row => ({ name: `bound_tx_failed on ${status} → no change`, state: state(status), event: txFailed('reverted'), now: BEFORE, expected: null }),
  ),
];

describe('transition (DESIGN.md §4 status machine)', () => {
  describe.each([
    ['confirmed payments on an open session', paymentRows],
    ['payments reversed by a reorganisation', reversalRows],
    ['payments after expires_at', afterExpiryRows],
    ['payments to a terminal session', terminalPaymentRows],
    ['the clock', clockRows],
    ['a failed bound transaction', failureRows],
  ])('%s', (_group, rows) => {
    it.each(rows)('$name', ({ state: before, event, now, policy, expected }) => {
      expect(transition(before, event, now, policy ?? POLICY)).toEqual(expected);
    });
  });

  it('never leaves a terminal status, whatever the event and time', () => {
    const events = [clock, paid('0'), paid('0.5'), paid('1'), paid('3'), txFailed('reverted')];
    const times = [BEFORE, EXPIRES, at(60 * MIN), at(365 * 24 * 60 * MIN)];
    for (const status of ['paid', 'expired', 'failed'] as const) {
      for (const overpaid of [false, true]) {
        for (const event of events) {
          for (const now of times) {
            const result = transition(state(status, { overpaid, boundAt: at(-MIN) }), event, now, POLICY);
            if (result === null) continue;
            expect(result.to).toBe(status);
            expect(result.from).toBe(status);
            expect(result.events).toEqual(['checkout_session.late_payment']);
            if (status !== 'paid') expect(result.overpaid).toBe(overpaid);
            if (overpaid) expect(result.overpaid).toBe(true);
          }
        }
      }
    }
  });

  it('does not mutate the state it is given', () => {
    const before = state('waiting_payment', { boundAt: at(-MIN) });
    const copy = { ...before };
    transition(before, paid('2'), BEFORE, POLICY);
    transition(before, clock, at(2 * 60 * MIN), POLICY);
    expect(before).toEqual(copy);
  });
});

describe('isExpiredAt', () => {
  it.each([
    { name: '1 ms before expires_at', boundAt: null, now: at(-1), expired: false },
    { name: 'exactly at expires_at', boundAt: null, now: EXPIRES, expired: true },
    { name: '1 ms after expires_at', boundAt: null, now: at(1), expired: true },
    { name: 'bound before, inside the grace', boundAt: at(-1), now: at(59 * MIN), expired: false },
    { name: 'bound before, 1 ms before the grace ends', boundAt: at(-1), now: at(60 * MIN - 1), expired: false },
    { name: 'bound before, exactly when the grace ends', boundAt: at(-1), now: at(60 * MIN), expired: true },
    { name: 'bound exactly at expires_at (no grace)', boundAt: EXPIRES, now: EXPIRES, expired: true },
    { name: 'bound after expires_at (no grace)', boundAt: at(MIN), now: at(2 * MIN), expired: true },
    { name: 'bound before, still before expires_at', boundAt: at(-MIN), now: at(-1), expired: false },
  ])('$name → $expired', ({ boundAt, now, expired }) => {
    expect(isExpiredAt(state('waiting_payment', { boundAt }), now, POLICY)).toBe(expired);
  });

  it('uses the policy grace', () => {
    const s = state('partial', { boundAt: at(-MIN) });
    expect(isExpiredAt(s, at(10 * MIN - 1), { inflightGraceMinutes: 10 })).toBe(false);
    expect(isExpiredAt(s, at(10 * MIN), { inflightGraceMinutes: 10 })).toBe(true);
  });
});
