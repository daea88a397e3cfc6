import type { DecisionReason } from '../shared/reason-codes.js';
import type { PaymentOutcome, Snapshots } from '../payments/decide.js';
import type { RuleCase } from './rule-fixtures.js';
import { row, d, at, TRANSFER } from './rule-fixtures.js';
import { NO_HOLDS } from '../sessions/status-machine.js';

// The rule table's rows for what happens after a payment is seen: confirmations, expiry, quotes (rules 6 and 7).

const BLOCK_SEEN = { blockNumber: 100n, recordedHash: TRANSFER.blockHash };
const counted = (
  state: string,
  rule: number,
  outcome: PaymentOutcome['kind'],
  reason: DecisionReason,
  over: Partial<Snapshots['payments_counted']>,
) =>
  row(
    rule,
    { kind: 'payments_counted' },
    state,
    {
      session: { status: 'waiting_payment', overpaid: false, expiresAt: at(60) },
      received: { onTime: d('25.005'), late: d('0') },
      previous: { onTime: d('0'), late: d('0') },
      required: d('25.005'),
      tolerancePercent: d('0'),
      dust: d('0.000001'),
      holds: NO_HOLDS,
      graceMinutes: 60,
      now: at(30),
      ...over,
    },
    outcome,
    reason,
  );
const expiry = (
  state: string,
  outcome: PaymentOutcome['kind'],
  reason: DecisionReason,
  now: Date,
  holds = NO_HOLDS,
  status: 'waiting_payment' | 'paid' = 'waiting_payment',
) =>
  row(
    6,
    { kind: 'clock', tick: 'expiry' },
    state,
    { tick: 'expiry', session: { status, overpaid: false, expiresAt: at(60) }, holds, graceMinutes: 60, now },
    outcome,
    reason,
  );
const quoteEnd = (
  state: string,
  outcome: PaymentOutcome['kind'],
  reason: DecisionReason,
  over: Partial<Extract<Snapshots['clock'], { tick: 'quote_end' }>> = {},
) =>
  row(
    7,
    { kind: 'clock', tick: 'quote_end' },
    state,
    {
      tick: 'quote_end',
      graceOver: false,
      paymentCredited: false,
      boundSeenOnChain: false,
      chainBehind: false,
      ...over,
    },
    outcome,
    reason,
  );

export const laterRows: RuleCase[] = [
  row(
    6,
    { kind: 'confirmation' },
    'Its block still on the chain, enough confirmations',
    { ...BLOCK_SEEN, chainHash: TRANSFER.blockHash },
    'confirm',
    'confirmed',
  ),
  row(
    6,
    { kind: 'confirmation' },
    'Its block replaced since the scan',
    { ...BLOCK_SEEN, chainHash: `0x${'ef'.repeat(32)}` },
    'reverse',
    'block_replaced',
  ),
  row(
    6,
    { kind: 'reorganisation' },
    'The newest recorded block matches the chain',
    { ...BLOCK_SEEN, chainHash: TRANSFER.blockHash },
    'ignore',
    'block_kept',
  ),
  row(
    6,
    { kind: 'reorganisation' },
    'A recorded block left the chain',
    { ...BLOCK_SEEN, chainHash: null },
    'reverse',
    'block_replaced',
  ),
  counted('Confirmed on time, exactly what was asked', 5, 'settle', 'paid_in_full', {}),
  counted('Confirmed on time, short by no more than a 1 % tolerance', 5, 'settle', 'paid_within_tolerance', {
    received: { onTime: d('24.9'), late: d('0') },
    tolerancePercent: d('1'),
  }),
  counted('Confirmed on time, over by rounding dust under one smallest unit', 5, 'settle', 'paid_in_full', {
    required: d('25.0049999'),
  }),
  counted('Confirmed on time, over by more than the tolerance and a unit', 5, 'settle', 'overpaid', {
    received: { onTime: d('30'), late: d('0') },
  }),
  counted('Confirmed on time, short of what was asked', 5, 'settle', 'partially_paid', {
    received: { onTime: d('10'), late: d('0') },
  }),
  counted('Paid; a reorganisation moved its payment after expires_at', 6, 'settle', 'payment_reversed', {
    session: { status: 'paid', overpaid: false, expiresAt: at(60) },
    received: { onTime: d('0'), late: d('25.005') },
    previous: { onTime: d('25.005'), late: d('0') },
  }),
  counted('Open past expires_at, its money mined after expires_at', 6, 'settle', 'expiry_due', {
    received: { onTime: d('0'), late: d('25.005') },
    now: at(61),
  }),
  counted('Expired; money mined after expires_at confirms', 6, 'settle', 'late_payment', {
    session: { status: 'expired', overpaid: false, expiresAt: at(60) },
    received: { onTime: d('0'), late: d('25.005') },
    now: at(90),
  }),
  counted('Counted again, nothing moved', 6, 'ignore', 'totals_unchanged', {
    previous: { onTime: d('25.005'), late: d('0') },
    session: { status: 'paid', overpaid: false, expiresAt: at(60) },
  }),
  expiry('Before expires_at', 'ignore', 'not_due', at(30)),
  expiry('Past expires_at, nothing holds it', 'expire', 'expiry_due', at(61)),
  expiry('Past expires_at, a payment mined before it not confirmed', 'wait', 'expiry_held', at(61), {
    paymentInFlight: true,
    chainBehind: false,
  }),
  expiry('Past expires_at, a network not scanned past it', 'wait', 'expiry_held', at(61), {
    paymentInFlight: false,
    chainBehind: true,
  }),
  expiry('Held past expires_at beyond the in-flight grace', 'expire', 'expiry_due', at(121), {
    paymentInFlight: true,
    chainBehind: false,
  }),
  expiry('Paid', 'ignore', 'not_due', at(61), NO_HOLDS, 'paid'),
  quoteEnd('Quote over, nothing paid or in flight', 'requote', 'quote_due'),
  quoteEnd('Quote over, a payment credited', 'wait', 'quote_held', { paymentCredited: true }),
  quoteEnd('Quote over, a bound transaction the chain knows', 'wait', 'quote_held', { boundSeenOnChain: true }),
  quoteEnd('Quote over, a network not scanned past its end', 'wait', 'quote_held', { chainBehind: true }),
  quoteEnd('A bound transaction the chain knows, past the in-flight grace', 'requote', 'quote_due', {
    boundSeenOnChain: true,
    graceOver: true,
  }),
];
