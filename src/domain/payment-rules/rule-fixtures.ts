import { Decimal } from '../shared/money.js';
import type { DecisionReason } from '../shared/reason-codes.js';
import type {
  AmountClaimFact,
  ChainTransfer,
  SessionPaymentFacts,
  TransferSnapshot,
} from '../payments/payment-ports.js';
import type { PaymentEvent, PaymentEventKind, PaymentOutcome, Snapshots } from '../payments/decide.js';

// The rule table's shared cases (rule-table.ts): one session S1, one transfer, and the snapshots the rows vary.

/** One row: the rule of docs/payment-rules.md, the event, the state in words, its snapshot, and the outcome. */
export interface RuleCase {
  readonly rule: number;
  readonly event: PaymentEvent;
  readonly state: string;
  readonly snapshot: Snapshots[PaymentEventKind];
  readonly outcome: PaymentOutcome['kind'];
  readonly reason: DecisionReason;
}

export function row<E extends PaymentEvent>(
  rule: number,
  event: E,
  state: string,
  snapshot: Snapshots[E['kind']],
  outcome: PaymentOutcome['kind'],
  reason: DecisionReason,
): RuleCase {
  return { rule, event, state, snapshot, outcome, reason };
}

export const d = (text: string) => new Decimal(text);
export const at = (minutes: number, seconds = 0) => new Date(Date.UTC(2026, 0, 10, 12, minutes, seconds));
/** The session was created at 12:00, expires at 13:00; the transfer was mined at 12:10. */
const BLOCK = at(10);

export const TRANSFER: ChainTransfer = {
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

export function facts(overrides: Partial<SessionPaymentFacts> = {}): SessionPaymentFacts {
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
export const lockedToUsdc = (parts: string, overrides: Partial<SessionPaymentFacts> = {}) =>
  facts({ cryptoCurrency: 'USDC', chainId: '31337', totalAmountCrypto: d('25'), partsTotal: d(parts), ...overrides });

export function claim(overrides: Partial<AmountClaimFact> = {}, session = facts()): AmountClaimFact {
  return { sessionId: 'S1', takenAt: at(0), heldSince: null, releasedAt: null, session, ...overrides };
}

export function amount(overrides: Partial<TransferSnapshot> = {}): TransferSnapshot {
  return { transfer: TRANSFER, claim: claim(), shares: [], reservedFor: null, recorded: null, ...overrides };
}

export const SCAN = { kind: 'transfer_scanned' } as const;
export const EXACT = { kind: 'exact_credit' } as const;
