import { describe, expect, it } from 'vitest';
import type { CheckoutSessionStatus } from '../../src/domain/sessions/checkout-session.js';
import { Decimal } from '../../src/domain/shared/money.js';
import {
  isExpiredAt,
  NO_HOLDS,
  transition,
  type ExpiryHolds,
  type SessionEvent,
  type SessionState,
  type StatusPolicy,
  type Transition,
} from '../../src/domain/sessions/status-machine.js';

// docs/payment-rules.md (its rules and #statuses), one row per rule.

const EXPIRES = new Date('2025-01-15T13:00:00.000Z');
const MIN = 60_000;
const at = (offsetMs: number) => new Date(EXPIRES.getTime() + offsetMs);
const BEFORE = at(-10 * MIN);
const POLICY: StatusPolicy = { inflightGraceMinutes: 60 };

const state = (status: CheckoutSessionStatus, extra: Partial<SessionState> = {}): SessionState => ({
  status,
  overpaid: false,
  expiresAt: EXPIRES,
  ...extra,
});

const IN_FLIGHT: ExpiryHolds = { paymentInFlight: true, chainBehind: false };
const BEHIND: ExpiryHolds = { paymentInFlight: false, chainBehind: true };

interface Money {
  /** Confirmed money mined before expires_at, now and before the change. */
  onTime?: string;
  late?: string;
  previousOnTime?: string;
  previousLate?: string;
  required?: string;
  tolerance?: string;
  dust?: string;
  holds?: ExpiryHolds;
}

const paid = (onTime: string, money: Omit<Money, 'onTime'> = {}): SessionEvent => ({
  kind: 'payments_changed',
  received: { onTime: new Decimal(onTime), late: new Decimal(money.late ?? '0') },
  previous: { onTime: new Decimal(money.previousOnTime ?? '0'), late: new Decimal(money.previousLate ?? '0') },
  required: new Decimal(money.required ?? '1'),
  tolerancePercent: new Decimal(money.tolerance ?? '0'),
  dust: new Decimal(money.dust ?? '0.00000001'),
  holds: money.holds ?? NO_HOLDS,
});
const REORG = 'payment reversed by a chain reorganisation';
const clock = (holds: ExpiryHolds = NO_HOLDS): SessionEvent => ({ kind: 'clock', holds });

const GRACE_CAUSE = 'the payment in flight did not confirm within the in-flight grace';
const PAID: Transition = {
  from: 'waiting_payment',
  to: 'paid',
  overpaid: false,
  cause: 'paid in full',
  events: ['checkout_session.paid'],
};
const EXPIRED: Transition = {
  from: 'waiting_payment',
  to: 'expired',
  overpaid: false,
  cause: 'session expired',
  events: ['checkout_session.expired'],
};

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
    expected: {
      from: 'waiting_payment',
      to: 'partial',
      overpaid: false,
      cause: 'partially paid',
      events: ['checkout_session.partially_paid'],
    },
  },
  {
    name: 'waiting_payment → partial: the smallest unit received',
    state: state('waiting_payment'),
    event: paid('0.00000001'),
    now: BEFORE,
    expected: {
      from: 'waiting_payment',
      to: 'partial',
      overpaid: false,
      cause: 'partially paid',
      events: ['checkout_session.partially_paid'],
    },
  },
  {
    name: 'partial → partial: more, still short, changes nothing',
    state: state('partial'),
    event: paid('0.99999999', { previousOnTime: '0.5' }),
    now: BEFORE,
    expected: null,
  },
  {
    name: 'waiting_payment → paid: exact amount',
    state: state('waiting_payment'),
    event: paid('1'),
    now: BEFORE,
    expected: PAID,
  },
  {
    name: 'partial → paid: exact amount',
    state: state('partial'),
    event: paid('0.00107970', { required: '0.00107970', previousOnTime: '0.0005' }),
    now: BEFORE,
    expected: { ...PAID, from: 'partial' },
  },
  {
    name: 'waiting_payment → paid, overpaid: received > required',
    state: state('waiting_payment'),
    event: paid('1.5'),
    now: BEFORE,
    expected: { ...PAID, overpaid: true, cause: 'paid in full (overpaid)' },
  },
  {
    name: 'partial → paid, overpaid by one smallest unit',
    state: state('partial'),
    event: paid('1.00000001', { previousOnTime: '0.5' }),
    now: BEFORE,
    expected: { ...PAID, from: 'partial', overpaid: true, cause: 'paid in full (overpaid)' },
  },
  {
    name: 'an excess below the asset’s smallest quoted unit is rounding dust, not an overpayment',
    state: state('waiting_payment'),
    event: paid('1.0000009', { dust: '0.000001' }),
    now: BEFORE,
    expected: PAID,
  },
  {
    name: 'an excess of one smallest quoted unit is an overpayment',
    state: state('waiting_payment'),
    event: paid('1.000001', { dust: '0.000001' }),
    now: BEFORE,
    expected: { ...PAID, overpaid: true, cause: 'paid in full (overpaid)' },
  },
  {
    name: 'an excess inside the tolerance (1%: 1.01 of 1) → paid, not overpaid',
    state: state('waiting_payment'),
    event: paid('1.01', { tolerance: '1' }),
    now: BEFORE,
    expected: PAID,
  },
  {
    name: 'an excess beyond the tolerance (1%: 1.0101 of 1) → overpaid',
    state: state('waiting_payment'),
    event: paid('1.0101', { tolerance: '1' }),
    now: BEFORE,
    expected: { ...PAID, overpaid: true, cause: 'paid in full (overpaid)' },
  },
  {
    name: 'underpayment exactly at the tolerance (1%: 0.99 of 1) → paid, not overpaid',
    state: state('waiting_payment'),
    event: paid('0.99', { tolerance: '1' }),
    now: BEFORE,
    expected: { ...PAID, cause: 'paid within the underpayment tolerance' },
  },
  {
    name: 'underpayment inside a fractional tolerance (0.5%: 199.1 of 200) → paid',
    state: state('partial'),
    event: paid('199.1', { required: '200', tolerance: '0.5', previousOnTime: '100' }),
    now: BEFORE,
    expected: { ...PAID, from: 'partial', cause: 'paid within the underpayment tolerance' },
  },
  {
    name: 'underpayment just outside the tolerance (1%: 0.98999999 of 1) → partial',
    state: state('waiting_payment'),
    event: paid('0.98999999', { tolerance: '1' }),
    now: BEFORE,
    expected: {
      from: 'waiting_payment',
      to: 'partial',
      overpaid: false,
      cause: 'partially paid',
      events: ['checkout_session.partially_paid'],
    },
  },
  {
    name: 'underpayment with the default tolerance 0 (one unit short) → partial',
    state: state('waiting_payment'),
    event: paid('0.99999999'),
    now: BEFORE,
    expected: {
      from: 'waiting_payment',
      to: 'partial',
      overpaid: false,
      cause: 'partially paid',
      events: ['checkout_session.partially_paid'],
    },
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
    event: paid('0', { tolerance: '100' }),
    now: BEFORE,
    expected: null,
  },
  {
    name: 'paid just before expires_at → paid',
    state: state('waiting_payment'),
    event: paid('1'),
    now: at(-1),
    expected: PAID,
  },
];

const reversalRows: Row[] = [
  {
    name: 'paid → waiting_payment: the only payment was reorged away',
    state: state('paid'),
    event: paid('0', { previousOnTime: '1' }),
    now: BEFORE,
    expected: {
      from: 'paid',
      to: 'waiting_payment',
      overpaid: false,
      cause: REORG,
      events: ['checkout_session.payment_reversed'],
    },
  },
  {
    name: 'paid → partial: one of two payments was reorged away',
    state: state('paid'),
    event: paid('0.4', { previousOnTime: '1' }),
    now: BEFORE,
    expected: {
      from: 'paid',
      to: 'partial',
      overpaid: false,
      cause: REORG,
      events: ['checkout_session.payment_reversed'],
    },
  },
  {
    name: 'paid stays paid when the rest still covers it; overpaid is recomputed',
    state: state('paid', { overpaid: true }),
    event: paid('1', { previousOnTime: '1.5' }),
    now: BEFORE,
    expected: {
      from: 'paid',
      to: 'paid',
      overpaid: false,
      cause: REORG,
      events: ['checkout_session.payment_reversed'],
    },
  },
  {
    name: 'paid stays paid when the rest is inside the tolerance',
    state: state('paid'),
    event: paid('0.995', { tolerance: '1', previousOnTime: '1' }),
    now: BEFORE,
    expected: {
      from: 'paid',
      to: 'paid',
      overpaid: false,
      cause: REORG,
      events: ['checkout_session.payment_reversed'],
    },
  },
  {
    // Found by an attacker-minded review (2026-11-28): reversed and re-included at or after expires_at in one tick,
    // the total did not move and the session stayed paid by late money, with no event.
    name: 'paid → waiting_payment: the on-time payment came back late, the total unchanged',
    state: state('paid'),
    event: paid('0', { late: '1', previousOnTime: '1' }),
    now: at(MIN),
    expected: {
      from: 'paid',
      to: 'waiting_payment',
      overpaid: false,
      cause: REORG,
      events: ['checkout_session.payment_reversed', 'checkout_session.late_payment'],
    },
  },
  {
    name: 'paid stays paid when what is left on time covers it, an on-time part now late',
    state: state('paid'),
    event: paid('1', { late: '0.5', previousOnTime: '1.5' }),
    now: at(MIN),
    expected: {
      from: 'paid',
      to: 'paid',
      overpaid: false,
      cause: REORG,
      events: ['checkout_session.payment_reversed', 'checkout_session.late_payment'],
    },
  },
  {
    name: 'partial → waiting_payment',
    state: state('partial'),
    event: paid('0', { previousOnTime: '0.5' }),
    now: BEFORE,
    expected: {
      from: 'partial',
      to: 'waiting_payment',
      overpaid: false,
      cause: REORG,
      events: ['checkout_session.payment_reversed'],
    },
  },
  {
    name: 'expired keeps its status; the reversal of a late payment is still reported',
    state: state('expired'),
    event: paid('0', { previousLate: '1' }),
    now: at(MIN),
    expected: {
      from: 'expired',
      to: 'expired',
      overpaid: false,
      cause: REORG,
      events: ['checkout_session.payment_reversed'],
    },
  },
  {
    name: 'failed keeps its status',
    state: state('failed'),
    event: paid('0', { previousOnTime: '1' }),
    now: BEFORE,
    expected: {
      from: 'failed',
      to: 'failed',
      overpaid: false,
      cause: REORG,
      events: ['checkout_session.payment_reversed'],
    },
  },
];

const afterExpiryRows: Row[] = [
  {
    name: 'money mined before expires_at that confirms after it → paid, not late (sent on time)',
    state: state('waiting_payment'),
    event: paid('1', { holds: IN_FLIGHT }),
    now: at(10 * MIN),
    expected: PAID,
  },
  {
    name: 'on-time money that confirms even after the grace still pays: it was sent on time',
    state: state('waiting_payment'),
    event: paid('1'),
    now: at(2 * 60 * MIN),
    expected: PAID,
  },
  {
    name: 'on-time money short of the total, nothing else in flight, time is up → expired',
    state: state('waiting_payment'),
    event: paid('0.4'),
    now: at(MIN),
    expected: EXPIRED,
  },
  {
    name: 'on-time money short of the total while more is in flight inside the grace → partial',
    state: state('waiting_payment'),
    event: paid('0.4', { holds: IN_FLIGHT }),
    now: at(59 * MIN),
    expected: {
      from: 'waiting_payment',
      to: 'partial',
      overpaid: false,
      cause: 'partially paid',
      events: ['checkout_session.partially_paid'],
    },
  },
  {
    name: 'money mined after expires_at on an open session → expired + late_payment',
    state: state('waiting_payment'),
    event: paid('0', { late: '1' }),
    now: at(MIN),
    expected: { ...EXPIRED, events: ['checkout_session.expired', 'checkout_session.late_payment'] },
  },
  {
    name: 'late money on a session held open by another payment in flight → late_payment, status unchanged',
    state: state('partial'),
    event: paid('0.5', { late: '0.5', previousOnTime: '0.5', holds: IN_FLIGHT }),
    now: at(MIN),
    expected: {
      from: 'partial',
      to: 'partial',
      overpaid: false,
      cause: 'late payment',
      events: ['checkout_session.late_payment'],
    },
  },
  {
    name: 'late money never makes a session paid',
    state: state('partial'),
    event: paid('0.5', { late: '5', previousOnTime: '0.5', holds: IN_FLIGHT }),
    now: at(MIN),
    expected: {
      from: 'partial',
      to: 'partial',
      overpaid: false,
      cause: 'late payment',
      events: ['checkout_session.late_payment'],
    },
  },
];

const terminalPaymentRows: Row[] = [
  {
    name: 'paid + later payment → stays paid, overpaid set, late_payment',
    state: state('paid'),
    event: paid('1.2', { previousOnTime: '1' }),
    now: BEFORE,
    expected: {
      from: 'paid',
      to: 'paid',
      overpaid: true,
      cause: 'late payment',
      events: ['checkout_session.late_payment'],
    },
  },
  {
    name: 'paid + later payment long after expiry → stays paid, overpaid set, late_payment',
    state: state('paid'),
    event: paid('1', { late: '1', previousOnTime: '1' }),
    now: at(24 * 60 * MIN),
    expected: {
      from: 'paid',
      to: 'paid',
      overpaid: true,
      cause: 'late payment',
      events: ['checkout_session.late_payment'],
    },
  },
  {
    name: 'paid and already overpaid stays overpaid',
    state: state('paid', { overpaid: true }),
    event: paid('1', { late: '0.1', previousOnTime: '1' }),
    now: BEFORE,
    expected: {
      from: 'paid',
      to: 'paid',
      overpaid: true,
      cause: 'late payment',
      events: ['checkout_session.late_payment'],
    },
  },
  {
    name: 'expired + payment → stays expired, late_payment, overpaid unchanged',
    state: state('expired'),
    event: paid('0', { late: '5' }),
    now: at(MIN),
    expected: {
      from: 'expired',
      to: 'expired',
      overpaid: false,
      cause: 'late payment',
      events: ['checkout_session.late_payment'],
    },
  },
  {
    name: 'failed + payment → stays failed, late_payment, overpaid unchanged',
    state: state('failed'),
    event: paid('1'),
    now: BEFORE,
    expected: {
      from: 'failed',
      to: 'failed',
      overpaid: false,
      cause: 'late payment',
      events: ['checkout_session.late_payment'],
    },
  },
];

const clockRows: Row[] = [
  {
    name: 'no expiry 1 ms before expires_at',
    state: state('waiting_payment'),
    event: clock(),
    now: at(-1),
    expected: null,
  },
  {
    name: 'no expiry long before expires_at (partial)',
    state: state('partial'),
    event: clock(),
    now: BEFORE,
    expected: null,
  },
  {
    name: 'waiting_payment → expired exactly at expires_at, nothing holding it',
    state: state('waiting_payment'),
    event: clock(),
    now: EXPIRES,
    expected: EXPIRED,
  },
  {
    name: 'partial → expired after expires_at',
    state: state('partial'),
    event: clock(),
    now: at(60 * MIN),
    expected: { ...EXPIRED, from: 'partial' },
  },
  {
    name: 'a payment in flight keeps the session open during the grace',
    state: state('waiting_payment'),
    event: clock(IN_FLIGHT),
    now: at(30 * MIN),
    expected: null,
  },
  {
    name: 'a payment in flight keeps it open until 1 ms before the grace ends',
    state: state('partial'),
    event: clock(IN_FLIGHT),
    now: at(60 * MIN - 1),
    expected: null,
  },
  {
    name: 'a chain not scanned past expires_at keeps it open',
    state: state('waiting_payment'),
    event: clock(BEHIND),
    now: at(MIN),
    expected: null,
  },
  {
    name: 'a payment in flight: expired when the grace ends',
    state: state('waiting_payment'),
    event: clock(IN_FLIGHT),
    now: at(60 * MIN),
    expected: { ...EXPIRED, cause: GRACE_CAUSE },
  },
  {
    name: 'a chain behind: expired when the grace ends',
    state: state('waiting_payment'),
    event: clock(BEHIND),
    now: at(60 * MIN),
    expected: EXPIRED,
  },
  {
    name: 'the grace follows the policy (15 minutes)',
    state: state('waiting_payment'),
    event: clock(IN_FLIGHT),
    now: at(15 * MIN),
    policy: { inflightGraceMinutes: 15 },
    expected: { ...EXPIRED, cause: GRACE_CAUSE },
  },
  {
    name: 'a grace of 0 minutes expires at expires_at',
    state: state('waiting_payment'),
    event: clock(IN_FLIGHT),
    now: EXPIRES,
    policy: { inflightGraceMinutes: 0 },
    expected: { ...EXPIRED, cause: GRACE_CAUSE },
  },
  ...(['paid', 'expired', 'failed'] as const).map((status): Row => ({
    name: `${status} never expires again`,
    state: state(status),
    event: clock(),
    now: at(7 * 24 * 60 * MIN),
    expected: null,
  })),
];

describe('transition (docs/payment-rules.md)', () => {
  describe.each([
    ['confirmed payments on an open session', paymentRows],
    ['payments reversed by a reorganisation', reversalRows],
    ['payments confirmed after expires_at', afterExpiryRows],
    ['payments to a terminal session', terminalPaymentRows],
    ['the clock', clockRows],
  ])('%s', (_group, rows) => {
    it.each(rows)('$name', ({ state: before, event, now, policy, expected }) => {
      expect(transition(before, event, now, policy ?? POLICY)).toEqual(expected);
    });
  });

  it('never leaves a terminal status on money arriving or the clock, whatever the time', () => {
    const events = [clock(), clock(IN_FLIGHT), paid('0'), paid('0.5'), paid('1'), paid('3'), paid('1', { late: '2' })];
    const times = [BEFORE, EXPIRES, at(60 * MIN), at(365 * 24 * 60 * MIN)];
    for (const status of ['paid', 'expired', 'failed'] as const) {
      for (const overpaid of [false, true]) {
        for (const event of events) {
          for (const now of times) {
            const result = transition(state(status, { overpaid }), event, now, POLICY);
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
    const before = state('waiting_payment');
    const copy = { ...before };
    transition(before, paid('2'), BEFORE, POLICY);
    transition(before, clock(), at(2 * 60 * MIN), POLICY);
    expect(before).toEqual(copy);
  });
});

describe('isExpiredAt', () => {
  it.each([
    { name: '1 ms before expires_at', holds: NO_HOLDS, now: at(-1), expired: false },
    { name: 'exactly at expires_at', holds: NO_HOLDS, now: EXPIRES, expired: true },
    { name: '1 ms after expires_at', holds: NO_HOLDS, now: at(1), expired: true },
    { name: 'held by a payment in flight, inside the grace', holds: IN_FLIGHT, now: at(59 * MIN), expired: false },
    { name: 'held, 1 ms before the grace ends', holds: IN_FLIGHT, now: at(60 * MIN - 1), expired: false },
    { name: 'held, exactly when the grace ends', holds: IN_FLIGHT, now: at(60 * MIN), expired: true },
    { name: 'held by a chain behind, inside the grace', holds: BEHIND, now: at(MIN), expired: false },
    { name: 'held, still before expires_at', holds: IN_FLIGHT, now: at(-1), expired: false },
  ])('$name → $expired', ({ holds, now, expired }) => {
    expect(isExpiredAt(state('waiting_payment'), now, POLICY, holds)).toBe(expired);
  });

  it('uses the policy grace', () => {
    const s = state('partial');
    expect(isExpiredAt(s, at(10 * MIN - 1), { inflightGraceMinutes: 10 }, IN_FLIGHT)).toBe(false);
    expect(isExpiredAt(s, at(10 * MIN), { inflightGraceMinutes: 10 }, IN_FLIGHT)).toBe(true);
  });
});
