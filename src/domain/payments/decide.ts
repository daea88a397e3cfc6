import type { AssetTicker } from '../shared/assets.js';
import type { DecisionReason, OutcomeReason, RejectionCode, ReasonCode } from '../shared/reason-codes.js';
import type { ExpiryHolds, SessionEvent, SessionState } from '../sessions/status-machine.js';
import { isTerminal, type CheckoutSessionStatus } from '../sessions/checkout-session.js';
import { expiryMayBeDue, transition } from '../sessions/status-machine.js';
import type { ChainTransfer, CreditOutcome, Ignore, Reserve, ScanOutcome, Wait } from './payment-ports.js';
import {
  amountAsker,
  amountShared,
  exactOwner,
  supersedable,
  type SessionPaymentFacts,
  type TransferSnapshot,
} from './amount-facts.js';
import { decideBind, decideBoundJudged, type BindSnapshot, type BoundJudgedSnapshot } from './decide-bind.js';
import type { BindOutcome, BoundOutcome } from './decide-bind.js';

/** What happened: a transfer scanned, a bind, a verdict, a confirmation, a reorganisation, a clock tick. */
export type PaymentEvent =
  /** The watcher found a transfer to a watched wallet: who it pays by amount. */
  | { readonly kind: 'transfer_scanned' }
  /** A transfer was credited to a session by its exact amount; the session's row is locked. */
  | { readonly kind: 'exact_credit' }
  /** A payer binds a transaction hash: mined, pending or unknown to the chain at bind. */
  | { readonly kind: 'bind'; readonly evidence: 'mined' | 'pending' | 'unknown' }
  /** The watcher judged a bound transaction (a candidate) from its receipt. */
  | { readonly kind: 'bound_judged' }
  /** A credited payment's block has enough confirmations: is it still on the chain? */
  | { readonly kind: 'confirmation' }
  /** A session's confirmed totals were counted again (a payment confirmed, reversed or re-included). */
  | { readonly kind: 'payments_counted' }
  /** The reorganisation check compares a recorded block with the chain. */
  | { readonly kind: 'reorganisation' }
  /** Time passed: a session's expiry, or the end of its quote. */
  | { readonly kind: 'clock'; readonly tick: 'expiry' | 'quote_end' };

export type PaymentEventKind = PaymentEvent['kind'];

type PaymentsChanged = Extract<SessionEvent, { kind: 'payments_changed' }>;

/** The session an exact payment was credited to, and the transfer, read under its lock. */
export interface ExactCreditSnapshot {
  readonly transfer: ChainTransfer;
  readonly session: SessionPaymentFacts;
}

/** A recorded block hash and the chain's hash at that height (null: the chain is shorter now). */
export interface BlockSnapshot {
  readonly blockNumber: bigint;
  readonly recordedHash: string;
  readonly chainHash: string | null;
}

/** A session's confirmed money before and after counting, and what it asks (the status machine's input). */
export interface CountedSnapshot extends Omit<PaymentsChanged, 'kind'> {
  readonly session: SessionState;
  readonly graceMinutes: number;
  readonly now: Date;
}

export type ClockSnapshot =
  | {
      readonly tick: 'expiry';
      readonly session: SessionState;
      readonly holds: ExpiryHolds;
      readonly graceMinutes: number;
      readonly now: Date;
    }
  | {
      readonly tick: 'quote_end';
      /** The quote's end plus the in-flight grace has passed: only a credited payment still holds it. */
      readonly graceOver: boolean;
      readonly paymentCredited: boolean;
      readonly boundSeenOnChain: boolean;
      readonly chainBehind: boolean;
    };

export interface Snapshots {
  readonly transfer_scanned: TransferSnapshot;
  readonly exact_credit: ExactCreditSnapshot;
  readonly bind: BindSnapshot;
  readonly bound_judged: BoundJudgedSnapshot;
  readonly confirmation: BlockSnapshot;
  readonly payments_counted: CountedSnapshot;
  readonly reorganisation: BlockSnapshot;
  readonly clock: ClockSnapshot;
}

export type { CreditOutcome, Reserve, Ignore, Wait, ScanOutcome };

export type ExactCreditOutcome =
  /** Select the transfer's asset and chain, the total being the amount it paid exactly. */
  | { readonly kind: 'select'; readonly reason: 'asset_selected'; readonly asset: AssetTicker }
  /** Keep the selected asset; the session gives up the amounts it kept asking in the others. */
  | { readonly kind: 'keep'; readonly reason: 'asset_kept' }
  /** The exact payment outranks bound parts of another asset: they are reserved, their binds rejected. */
  | { readonly kind: 'supersede'; readonly reason: 'superseded'; readonly sessionId: string }
  /** Take the credit back: reserved for the session, left to its bind or an operator. */
  | Reserve;

export type BlockOutcome =
  | { readonly kind: 'confirm'; readonly reason: 'confirmed' }
  | { readonly kind: 'reverse'; readonly reason: 'block_replaced'; readonly fromBlock: bigint }
  | Ignore;

/** The status the counted money gives the session (the status machine's transition). */
export type CountedOutcome =
  | {
      readonly kind: 'settle';
      readonly reason: OutcomeReason;
      readonly to: CheckoutSessionStatus;
      readonly overpaid: boolean;
    }
  | Ignore;

export type ClockOutcome =
  | { readonly kind: 'expire'; readonly reason: 'expiry_due' }
  | { readonly kind: 'requote'; readonly reason: 'quote_due' }
  | Wait
  | Ignore;

export interface Outcomes {
  readonly transfer_scanned: ScanOutcome;
  readonly exact_credit: ExactCreditOutcome;
  readonly bind: BindOutcome;
  readonly bound_judged: BoundOutcome;
  readonly confirmation: BlockOutcome;
  readonly payments_counted: CountedOutcome;
  readonly reorganisation: BlockOutcome;
  readonly clock: ClockOutcome;
}

export type PaymentOutcome = Outcomes[PaymentEventKind];
export type { BindOutcome, BoundOutcome, BindSnapshot, BoundJudgedSnapshot };
export type { TransferSnapshot, SessionPaymentFacts };

/** The reason an outcome carries: an outcome reason, or a refusal's or rejection's code. */
export function reasonOf(outcome: PaymentOutcome): DecisionReason {
  return 'code' in outcome ? (outcome.code as ReasonCode | RejectionCode) : outcome.reason;
}

/**
 * What `event` does to a session given what storage knows: the one place payments are judged, pure; storage loads the
 * snapshot under the session's lock and applies the outcome (docs/payment-rules.md#the-rule-table, what SQL keeps).
 */
export function decide<E extends PaymentEvent>(event: E, snapshot: Snapshots[E['kind']]): Outcomes[E['kind']] {
  return decideAny(event, snapshot as Snapshots[PaymentEventKind]) as Outcomes[E['kind']];
}

function decideAny(event: PaymentEvent, snapshot: Snapshots[PaymentEventKind]): PaymentOutcome {
  switch (event.kind) {
    case 'transfer_scanned':
      return decideScan(snapshot as TransferSnapshot);
    case 'exact_credit':
      return decideExactCredit(snapshot as ExactCreditSnapshot);
    case 'bind':
      return decideBind(event.evidence, snapshot as BindSnapshot);
    case 'bound_judged':
      return decideBoundJudged(snapshot as BoundJudgedSnapshot);
    case 'confirmation':
    case 'reorganisation':
      return decideBlock(event.kind, snapshot as BlockSnapshot);
    case 'payments_counted':
      return decideCounted(snapshot as CountedSnapshot);
    case 'clock':
      return decideClock(snapshot as ClockSnapshot);
  }
}

/**
 * Deposit mode first: a transfer to a session's own address is its (depositScan). Rule 2: an exact unique amount pays
 * its open session; a reversed transfer comes back to its session; an asker's amount is reserved; the rest waits.
 */
function decideScan(snapshot: TransferSnapshot): ScanOutcome {
  const owner = exactOwner(snapshot);
  const asker = owner === null ? amountAsker(snapshot) : null;
  const recorded = snapshot.recorded;
  if (recorded?.sessionId) {
    const attribution = recorded.attribution ?? 'exact_amount';
    const sessionId = recorded.sessionId;
    return {
      kind: 'credit',
      reason: 'payment_reincluded',
      sessionId,
      attribution,
      exactOwner: owner,
      reservedFor: asker,
    };
  }
  const deposit = snapshot.deposit;
  if (deposit) return depositScan(deposit.sessionId, deposit.offered);
  if (owner !== null)
    return {
      kind: 'credit',
      reason: 'paid_by_amount',
      sessionId: owner,
      attribution: 'exact_amount',
      exactOwner: owner,
      reservedFor: null,
    };
  if (asker !== null) return { kind: 'reserve', reason: 'amount_reserved', sessionId: asker };
  return { kind: 'ignore', reason: amountShared(snapshot) ? 'amount_shared' : 'no_unique_amount' };
}

/**
 * Deposit mode: a transfer to a session's own address is that session's, in any amount and from anyone; in an asset
 * the session was not quoted in it is kept for it (reserved) and counts for nobody.
 */
function depositScan(sessionId: string, offered: boolean): ScanOutcome {
  if (!offered) return { kind: 'reserve', reason: 'deposit_asset_not_offered', sessionId };
  return {
    kind: 'credit',
    reason: 'paid_to_deposit_address',
    sessionId,
    attribution: 'deposit_address',
    exactOwner: null,
    reservedFor: null,
  };
}

/** Rules 2 and 7: an exact payment selects its asset, keeps it, outranks bound parts, or is reserved. */
function decideExactCredit({ session, transfer }: ExactCreditSnapshot): ExactCreditOutcome {
  if (!session.cryptoCurrency) return { kind: 'select', reason: 'asset_selected', asset: transfer.asset };
  if (session.cryptoCurrency === transfer.asset && session.chainId === transfer.chainId)
    return { kind: 'keep', reason: 'asset_kept' };
  if (!isTerminal(session.status) && supersedable(session, transfer))
    return { kind: 'supersede', reason: 'superseded', sessionId: session.sessionId };
  return { kind: 'reserve', reason: 'asset_locked', sessionId: session.sessionId };
}

/** A payment confirms while its block is on the chain; a replaced block is rolled back from there. */
function decideBlock(kind: 'confirmation' | 'reorganisation', block: BlockSnapshot): BlockOutcome {
  if (block.chainHash === block.recordedHash)
    return kind === 'confirmation'
      ? { kind: 'confirm', reason: 'confirmed' }
      : { kind: 'ignore', reason: 'block_kept' };
  return { kind: 'reverse', reason: 'block_replaced', fromBlock: block.blockNumber };
}

/** Rules 5 and 6: the status machine judges the counted money; late money never pays a session. */
function decideCounted({ session, graceMinutes, now, ...counted }: CountedSnapshot): CountedOutcome {
  const next = transition(session, { kind: 'payments_changed', ...counted }, now, {
    inflightGraceMinutes: graceMinutes,
  });
  if (!next) return { kind: 'ignore', reason: 'totals_unchanged' };
  const { to, overpaid } = next;
  const changed = to !== next.from;
  const reason: OutcomeReason = next.events.includes('checkout_session.payment_reversed')
    ? 'payment_reversed'
    : changed && to === 'paid'
      ? overpaid
        ? 'overpaid'
        : counted.received.onTime.lessThan(counted.required)
          ? 'paid_within_tolerance'
          : 'paid_in_full'
      : changed && to === 'expired'
        ? 'expiry_due'
        : changed && to === 'partial'
          ? 'partially_paid'
          : 'late_payment';
  return { kind: 'settle', reason, to, overpaid };
}

/** Rules 6 and 7: the status machine settles expiry; a quote is priced again once nothing holds it. */
function decideClock(snapshot: ClockSnapshot): ClockOutcome {
  if (snapshot.tick === 'expiry') {
    const policy = { inflightGraceMinutes: snapshot.graceMinutes };
    const next = transition(snapshot.session, { kind: 'clock', holds: snapshot.holds }, snapshot.now, policy);
    if (next) return { kind: 'expire', reason: 'expiry_due' };
    return expiryMayBeDue(snapshot.session, snapshot.now)
      ? { kind: 'wait', reason: 'expiry_held' }
      : { kind: 'ignore', reason: 'not_due' };
  }
  const inFlight = !snapshot.graceOver && (snapshot.boundSeenOnChain || snapshot.chainBehind);
  if (snapshot.paymentCredited || inFlight) return { kind: 'wait', reason: 'quote_held' };
  return { kind: 'requote', reason: 'quote_due' };
}
