import type { DecisionReason } from '../shared/reason-codes.js';
import type { PaymentOutcome, Snapshots } from '../payments/decide.js';
import type { RuleCase } from './rule-fixtures.js';
import { row, d, at, TRANSFER } from './rule-fixtures.js';
import type { TransferShare } from '../payments/decide-bind.js';

// The rule table's rows for a payer's bind of a transaction hash, and the helpers deposit rows share.

const OPEN = {
  status: 'waiting_payment',
  expiresAt: at(60),
  paymentPolicy: { underpaymentTolerancePercent: d('0'), latePaymentWindowMinutes: 1440 },
} as const;
const EXPIRED = { ...OPEN, status: 'expired' } as const;
const BOUND = { txHash: TRANSFER.txHash, cryptoCurrency: 'USDT', seenOnChainAt: null } as const;
const VALID = { kind: 'valid', transfers: [TRANSFER] } as const;
const PENDING = { kind: 'wait', onChain: true } as const;
const UNKNOWN = { kind: 'wait', onChain: false } as const;
export const failed = (
  code:
    | 'not_mined'
    | 'dropped'
    | 'reverted'
    | 'wrong_chain'
    | 'wrong_sender'
    | 'wrong_recipient'
    | 'wrong_asset'
    | 'tx_mined_before_session'
    | 'no_payment',
) => ({ kind: 'failed', code, reason: `${code}: …` }) as const;

function share(overrides: Partial<TransferShare> = {}): TransferShare {
  return {
    alreadyMine: false,
    othersExact: [],
    free: [TRANSFER],
    takenBy: null,
    contested: false,
    tooSmall: null,
    ...overrides,
  };
}
const TAKEN = share({ free: [], takenBy: 'S2' });

export function bind(
  state: string,
  evidence: 'mined' | 'pending' | 'unknown',
  outcome: PaymentOutcome['kind'],
  reason: DecisionReason,
  over: Partial<Snapshots['bind']> = {},
  rule = 3,
) {
  const verdict = evidence === 'mined' ? VALID : evidence === 'pending' ? PENDING : UNKNOWN;
  const snapshot: Snapshots['bind'] = {
    session: OPEN,
    bound: BOUND,
    now: at(20),
    verdict,
    share: evidence === 'mined' ? share() : null,
    overLimit: false,
    waiting: { fromBinder: 0, total: 0 },
    verifiedElsewhere: false,
    heldByOthers: false,
    ...over,
  };
  return row(rule, { kind: 'bind', evidence }, state, snapshot, outcome, reason);
}

/** Refused at bind under rule 1: the chain proves the transaction cannot pay the session. */
function refusedByRule1(state: string, code: Parameters<typeof failed>[0], evidence: 'mined' | 'unknown' = 'mined') {
  return bind(state, evidence, 'refuse', code, { verdict: failed(code) }, 1);
}

function judged(
  state: string,
  outcome: PaymentOutcome['kind'],
  reason: DecisionReason,
  over: Partial<Snapshots['bound_judged']> = {},
) {
  return row(
    3,
    { kind: 'bound_judged' },
    state,
    { bound: BOUND, verdict: VALID, share: share(), closed: false, ...over },
    outcome,
    reason,
  );
}

export const bindRows: RuleCase[] = [
  bind('Open, a transfer of the transaction to its wallet nobody holds', 'mined', 'credit', 'paid_by_bind'),
  refusedByRule1('Mined before the session was created', 'tx_mined_before_session'),
  refusedByRule1('Sent to another address', 'wrong_recipient'),
  refusedByRule1('Pays another asset than the bound one', 'wrong_asset'),
  refusedByRule1('On another chain than the one named', 'wrong_chain', 'unknown'),
  refusedByRule1('Not sent by the payer wallet named', 'wrong_sender'),
  bind('Reverted', 'mined', 'refuse', 'reverted', { verdict: failed('reverted') }),
  bind('No asset selected, every free transfer under half the price', 'mined', 'refuse', 'bind_too_small', {
    share: share({ free: [], tooSmall: { transfer: TRANSFER, asked: d('60') } }),
  }),
  bind('The amount is asked by other sessions (shared or reserved)', 'mined', 'refuse', 'tx_contested', {
    share: share({ free: [], contested: true }),
  }),
  bind('Every transfer credited elsewhere, bound and verified there', 'mined', 'refuse', 'tx_already_bound', {
    share: TAKEN,
    verifiedElsewhere: true,
  }),
  bind(
    "Every transfer credited elsewhere (another session's exact amount)",
    'mined',
    'refuse',
    'tx_paid_elsewhere',
    { share: TAKEN },
    1,
  ),
  bind('A transfer of it is credited to this session already', 'mined', 'credit', 'paid_by_bind', {
    share: share({ alreadyMine: true, free: [] }),
  }),
  bind('Pending on the chain', 'pending', 'wait', 'awaiting_receipt'),
  bind('Unknown to the chain', 'unknown', 'wait', 'awaiting_receipt'),
  bind('Pending; 5 unverified of this kind from this address', 'pending', 'refuse', 'too_many_unverified', {
    waiting: { fromBinder: 5, total: 5 },
  }),
  bind('Unknown; 25 unverified of this kind from every address', 'unknown', 'refuse', 'too_many_unverified', {
    waiting: { fromBinder: 0, total: 25 },
  }),
  bind('Pending; verified on another session', 'pending', 'refuse', 'tx_already_bound', { verifiedElsewhere: true }),
  bind('Pending; only an unverified bind elsewhere', 'pending', 'wait', 'awaiting_receipt'),
  bind('Pending; a transfer of it credited to another session', 'pending', 'refuse', 'tx_paid_elsewhere', {
    heldByOthers: true,
  }),
  bind('Expired, mined, inside the late-payment window', 'mined', 'credit', 'paid_by_bind', { session: EXPIRED }),
  bind('Expired, mined, after the late-payment window', 'mined', 'refuse', 'session_closed', {
    session: EXPIRED,
    now: at(60 + 1440),
  }),
  bind('Expired, pending', 'pending', 'refuse', 'session_closed', { session: EXPIRED }),
  bind('Over the per-session bind limit, pending', 'pending', 'refuse', 'rate_limited', { overLimit: true }),
  bind('Over the per-session bind limit, mined and paying', 'mined', 'credit', 'paid_by_bind', { overLimit: true }),
  judged('Pending within the grace', 'wait', 'awaiting_receipt', { verdict: PENDING, share: null }),
  judged('Still pending a grace after its bind', 'reject', 'not_mined', { verdict: failed('not_mined'), share: null }),
  judged('Unknown to the chain a grace after its bind', 'reject', 'dropped', {
    verdict: failed('dropped'),
    share: null,
  }),
  judged('Mined, reverted', 'reject', 'reverted', { verdict: failed('reverted'), share: null }),
  judged('Mined, paying a free transfer', 'credit', 'paid_by_bind'),
  judged('Mined; every transfer credited elsewhere', 'reject', 'tx_already_credited', { share: TAKEN }),
  judged('Mined; no asset selected, under half the price', 'reject', 'bind_too_small', {
    share: share({ free: [], tooSmall: { transfer: TRANSFER, asked: d('60') } }),
  }),
  judged('Mined; the amount is asked by other sessions', 'reject', 'tx_contested', {
    share: share({ free: [], contested: true }),
  }),
  judged('Closed, paid by amount by a transfer of it first', 'credit', 'paid_by_bind', {
    share: share({ alreadyMine: true, free: [] }),
    closed: true,
  }),
  judged('Closed; a transfer of it nobody holds', 'wait', 'session_closed', { closed: true }),
];
