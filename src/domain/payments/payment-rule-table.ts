import { Decimal } from '../shared/money.js';
import type { DecisionReason } from '../shared/reason-codes.js';
import { NO_HOLDS } from '../sessions/status-machine.js';
import type { AmountClaimFact, ChainTransfer, SessionPaymentFacts, TransferSnapshot } from './payment-ports.js';
import type { TransferShare } from './decide-bind.js';
import type { PaymentEvent, PaymentEventKind, PaymentOutcome, Snapshots } from './decide.js';

// docs/payment-rules.md's rule table: each row an event, the state it meets and what decide() makes of it.
// test/unit/payment-decision.test.ts runs every row through decide(); `npm run docs:rules` writes the doc's table.

/** One row: the rule of docs/payment-rules.md, the event, the state in words, its snapshot, and the outcome. */
export interface RuleCase {
  readonly rule: number;
  readonly event: PaymentEvent;
  readonly state: string;
  readonly snapshot: Snapshots[PaymentEventKind];
  readonly outcome: PaymentOutcome['kind'];
  readonly reason: DecisionReason;
}

function row<E extends PaymentEvent>(
  rule: number,
  event: E,
  state: string,
  snapshot: Snapshots[E['kind']],
  outcome: PaymentOutcome['kind'],
  reason: DecisionReason,
): RuleCase {
  return { rule, event, state, snapshot, outcome, reason };
}

const d = (text: string) => new Decimal(text);
const at = (minutes: number, seconds = 0) => new Date(Date.UTC(2026, 0, 10, 12, minutes, seconds));
/** The session was created at 12:00, expires at 13:00; the transfer was mined at 12:10. */
const BLOCK = at(10);

const TRANSFER: ChainTransfer = {
  network: 'local',
  chainId: '31337',
  txHash: `0x${'ab'.repeat(32)}`,
  logIndex: 0,
  from: '0xf39fd6e51aad88f6f4ce6ab8827279cfffb92266',
  to: '0x70997970c51812dc3a010c7d01b50e0d17dc79c8',
  asset: 'USDT',
  tokenAddress: '0x5fbdb2315678afecb367f032d93f642f64180aa3',
  baseUnits: 25_005_000n,
  amount: d('25.005'),
  blockNumber: 100n,
  blockHash: `0x${'cd'.repeat(32)}`,
  blockTime: BLOCK,
};

function facts(overrides: Partial<SessionPaymentFacts> = {}): SessionPaymentFacts {
  return {
    sessionId: 'S1',
    status: 'waiting_payment',
    createdAt: at(0),
    expiresAt: at(60),
    cryptoCurrency: null,
    chainId: null,
    totalAmountCrypto: null,
    tolerancePercent: d('0'),
    paidOtherwise: false,
    partsTotal: d('0'),
    ...overrides,
  };
}

/** Locked to USDC on the same chain by bound parts bringing `parts` of its 25 USDC. */
const lockedToUsdc = (parts: string, overrides: Partial<SessionPaymentFacts> = {}) =>
  facts({ cryptoCurrency: 'USDC', chainId: '31337', totalAmountCrypto: d('25'), partsTotal: d(parts), ...overrides });

function claim(overrides: Partial<AmountClaimFact> = {}, session = facts()): AmountClaimFact {
  return { sessionId: 'S1', takenAt: at(0), heldSince: null, releasedAt: null, session, ...overrides };
}

function amount(overrides: Partial<TransferSnapshot> = {}): TransferSnapshot {
  return { transfer: TRANSFER, claim: claim(), shares: [], reservedFor: null, recorded: null, ...overrides };
}

const SCAN = { kind: 'transfer_scanned' } as const;
const EXACT = { kind: 'exact_credit' } as const;

const scanRows: RuleCase[] = [
  row(2, SCAN, 'S1 holds the amount, no asset selected', amount(), 'credit', 'paid_by_amount'),
  row(
    1,
    SCAN,
    'S1 took the amount 20 s after the block (within the clock skew)',
    amount({ claim: claim({ takenAt: at(10, 20) }, facts({ createdAt: at(10, 20) })) }),
    'credit',
    'paid_by_amount',
  ),
  row(
    1,
    SCAN,
    'S1 was created 5 minutes after the block',
    amount({ claim: claim({ takenAt: at(15) }, facts({ createdAt: at(15) })) }),
    'ignore',
    'no_unique_amount',
  ),
  row(
    2,
    SCAN,
    'S1 locked to USDC by bound parts under its price',
    amount({ claim: claim({}, lockedToUsdc('10')) }),
    'credit',
    'paid_by_amount',
  ),
  row(
    2,
    SCAN,
    'S1 locked to USDC by bound parts that pay it',
    amount({ claim: claim({}, lockedToUsdc('25')) }),
    'reserve',
    'amount_reserved',
  ),
  row(
    2,
    SCAN,
    'S1 locked to USDC beside a payment credited by amount',
    amount({ claim: claim({}, lockedToUsdc('10', { paidOtherwise: true })) }),
    'reserve',
    'amount_reserved',
  ),
  row(
    2,
    SCAN,
    'S1 locked to USDC, the transfer mined after expires_at',
    amount({ claim: claim({}, lockedToUsdc('10', { expiresAt: at(5) })) }),
    'reserve',
    'amount_reserved',
  ),
  row(
    4,
    SCAN,
    'S1 gave the amount up (re-priced, a new rest) before the block',
    amount({ claim: claim({ releasedAt: at(5) }) }),
    'reserve',
    'amount_reserved',
  ),
  row(
    2,
    SCAN,
    'S1 is closed (expired)',
    amount({ claim: claim({}, facts({ status: 'expired' })) }),
    'reserve',
    'amount_reserved',
  ),
  row(
    4,
    SCAN,
    'S1 holds the amount and a reopened S2 shares it',
    amount({ shares: [{ sessionId: 'S2', createdAt: at(5), releasedAt: null }] }),
    'ignore',
    'amount_shared',
  ),
  row(
    4,
    SCAN,
    "S2's share of the amount came after the block",
    amount({ shares: [{ sessionId: 'S2', createdAt: at(20), releasedAt: null }] }),
    'credit',
    'paid_by_amount',
  ),
  row(2, SCAN, 'No session holds the amount', amount({ claim: null }), 'ignore', 'no_unique_amount'),
  row(
    4,
    SCAN,
    'A reorganisation reversed the transfer, credited to S1',
    amount({ recorded: { sessionId: 'S1', attribution: 'bound_tx' } }),
    'credit',
    'payment_reincluded',
  ),
  row(
    2,
    EXACT,
    'Credited by amount to S1, no asset selected',
    { transfer: TRANSFER, session: facts() },
    'select',
    'asset_selected',
  ),
  row(
    2,
    EXACT,
    'Credited by amount to S1, a bound part selected USDT on its chain',
    { transfer: TRANSFER, session: facts({ cryptoCurrency: 'USDT', chainId: '31337' }) },
    'keep',
    'asset_kept',
  ),
  row(
    2,
    EXACT,
    'Credited by amount to S1, locked to USDC by parts under its price',
    { transfer: TRANSFER, session: lockedToUsdc('10') },
    'supersede',
    'superseded',
  ),
  row(
    2,
    EXACT,
    'Credited by amount to S1, locked to USDC by parts that pay it',
    { transfer: TRANSFER, session: lockedToUsdc('25') },
    'reserve',
    'asset_locked',
  ),
  row(
    2,
    EXACT,
    'Credited by amount to S1, locked to USDC, S1 paid since',
    { transfer: TRANSFER, session: lockedToUsdc('10', { status: 'paid' }) },
    'reserve',
    'asset_locked',
  ),
];

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
const failed = (
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

function bind(
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
    { bound: BOUND, verdict: VALID, share: share(), ...over },
    outcome,
    reason,
  );
}

const bindRows: RuleCase[] = [
  bind('Open, a transfer of the transaction to its wallet nobody holds', 'mined', 'credit', 'paid_by_bind'),
  bind(
    'Mined before the session was created',
    'mined',
    'refuse',
    'tx_mined_before_session',
    { verdict: failed('tx_mined_before_session') },
    1,
  ),
  bind('Sent to another address', 'mined', 'refuse', 'wrong_recipient', { verdict: failed('wrong_recipient') }, 1),
  bind(
    'Pays another asset than the bound one',
    'mined',
    'refuse',
    'wrong_asset',
    { verdict: failed('wrong_asset') },
    1,
  ),
  bind(
    'On another chain than the one named',
    'unknown',
    'refuse',
    'wrong_chain',
    { verdict: failed('wrong_chain') },
    1,
  ),
  bind('Not sent by the payer wallet named', 'mined', 'refuse', 'wrong_sender', { verdict: failed('wrong_sender') }, 1),
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
];

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

/** Deposit mode (rule 0): the transfer is to S1's own deposit address; S1 offers its asset unless said. */
const toDeposit = (offered = true, over: Partial<TransferSnapshot> = {}) =>
  amount({ claim: null, deposit: { sessionId: 'S1', offered }, ...over });

const depositRows: RuleCase[] = [
  row(
    0,
    SCAN,
    "To S1's deposit address, any amount, no asset selected",
    toDeposit(),
    'credit',
    'paid_to_deposit_address',
  ),
  row(
    0,
    SCAN,
    "To S1's deposit address after expires_at (recorded late), S1 expired",
    toDeposit(true, { transfer: { ...TRANSFER, blockTime: at(70) } }),
    'credit',
    'paid_to_deposit_address',
  ),
  row(
    0,
    SCAN,
    "To S1's deposit address, the amount another session's unique amount elsewhere",
    toDeposit(true, { claim: claim({ sessionId: 'S2' }) }),
    'credit',
    'paid_to_deposit_address',
  ),
  row(
    0,
    SCAN,
    "To S1's deposit address in an asset S1 was not quoted in",
    toDeposit(false),
    'reserve',
    'deposit_asset_not_offered',
  ),
  row(
    0,
    SCAN,
    "To S1's deposit address, a reorganisation reversed it and it is mined again",
    toDeposit(true, { recorded: { sessionId: 'S1', attribution: 'deposit_address' } }),
    'credit',
    'payment_reincluded',
  ),
  bind(
    'Deposit mode, a mined transfer (to its address or anywhere)',
    'mined',
    'hint',
    'deposit_bind_hint',
    {
      depositMode: true,
    },
    0,
  ),
  bind('Deposit mode, a pending transaction', 'pending', 'hint', 'deposit_bind_hint', { depositMode: true }, 0),
  bind(
    'Deposit mode, mined before the session was created',
    'mined',
    'hint',
    'deposit_bind_hint',
    { depositMode: true, verdict: failed('tx_mined_before_session'), share: null },
    0,
  ),
  bind(
    'Deposit mode, a transaction the chain proves pays elsewhere',
    'mined',
    'refuse',
    'wrong_recipient',
    { depositMode: true, verdict: failed('wrong_recipient'), share: null },
    0,
  ),
];

const laterRows: RuleCase[] = [
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

/** Every row of the rule table, in the doc's order. */
export const RULE_CASES: readonly RuleCase[] = [...depositRows, ...scanRows, ...bindRows, ...laterRows].sort(
  (a, b) => a.rule - b.rule,
);

/**
 * The rules of docs/payment-rules.md the table covers (0: deposit mode, shown as D); rule 8 (rates) prices quotes and
 * decides no payment.
 */
export const RULES_COVERED = [0, 1, 2, 3, 4, 5, 6, 7] as const;

const eventName = (event: PaymentEvent) =>
  event.kind === 'bind'
    ? `bind (${event.evidence})`
    : event.kind === 'clock'
      ? `clock (${event.tick})`
      : event.kind.replace(/_/g, ' ');

/** The table as markdown: what docs/payment-rules.md shows between its markers. */
export function renderRuleTable(): string {
  const lines = [
    '| Rule | Event | Session and amount | Outcome | Reason |',
    '|---|---|---|---|---|',
    ...RULE_CASES.map(
      (c) =>
        `| ${c.rule === 0 ? 'D' : c.rule} | ${eventName(c.event)} | ${c.state} | \`${c.outcome}\` | \`${c.reason}\` |`,
    ),
  ];
  return `${lines.join('\n')}\n`;
}
