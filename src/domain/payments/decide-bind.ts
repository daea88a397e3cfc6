import { isTerminal, type CheckoutSession } from '../sessions/checkout-session.js';
import type { AssetTicker } from '../shared/assets.js';
import { Decimal } from '../shared/money.js';
import { REJECTION_WORDS, type ReasonCode, type RejectionCode } from '../shared/reason-codes.js';
import { exactOwner, mayBindUnowned, type TransferSnapshot } from './amount-facts.js';
import type { BoundTransaction } from './chain-ports.js';
import type { BoundTxVerdict } from './bound-transactions.js';
import type { ChainTransfer } from './payment-ports.js';

// The bind events of decide() (decide.ts): a payer's bind, and the watcher's judgement of a bound transaction.

/** Unverified binds one session may hold from one client address, of each kind (pending, unknown): rule 3. */
export const MAX_UNVERIFIED_BINDS = 5;
/** The same, from every address together: one binder's cap cannot exclude another. */
export const MAX_UNVERIFIED_BINDS_PER_SESSION = 25;

/** How a valid bound transaction's transfers stand for the session before this bind credits any. */
export interface TransferShare {
  /** A transfer of the transaction is credited to this session already. */
  readonly alreadyMine: boolean;
  /** Transfers that are another open session's unique amount exactly: theirs. */
  readonly othersExact: ReadonlyArray<{ readonly transfer: ChainTransfer; readonly owner: string }>;
  /** Transfers nobody holds, best fit for this session first. */
  readonly free: readonly ChainTransfer[];
  /** A session holding one of the transfers, when this one holds none (for the refusal). */
  readonly takenBy: string | null;
  /** A transfer is of an amount other sessions ask for, which this one may not bind. */
  readonly contested: boolean;
  /** The largest free transfer and what the session asked, when every free one is too small to select the asset. */
  readonly tooSmall: TooSmall | null;
}

/** A transfer too small to select the session's asset, and the amount the session asked in it then. */
export interface TooSmall {
  readonly transfer: ChainTransfer;
  readonly asked: Decimal;
}

/** What storage knows about a valid bound transaction's transfers (loaded by shareFacts). */
export interface ShareFacts {
  /** The session each log is credited to. */
  readonly holders: ReadonlyMap<number, string>;
  /** The amount facts of each log nobody holds. */
  readonly snapshots: ReadonlyMap<number, TransferSnapshot>;
  /** What the session asked in the bound asset when the payment was sent, if it has no asset yet. */
  readonly askedWhenSent: Decimal | null;
}

/**
 * Rule 3, one transfer per bind: the free transfer closest to what the session owes (lowest log on a tie), never
 * another's; the first in an asset pays at least half the ask (docs/payment-rules.md#3-a-bind-is-a-hint-not-a-lock).
 */
export function shareOf(
  session: CheckoutSession,
  ticker: AssetTicker,
  transfers: readonly ChainTransfer[],
  facts: ShareFacts,
): TransferShare {
  const othersExact: Array<{ transfer: ChainTransfer; owner: string }> = [];
  const free: ChainTransfer[] = [];
  let alreadyMine = false;
  let takenBy: string | null = null;
  let contested = false;
  for (const transfer of transfers) {
    const holder = facts.holders.get(transfer.logIndex);
    const snapshot = facts.snapshots.get(transfer.logIndex);
    const owner = snapshot ? exactOwner(snapshot) : null;
    if (holder === session.id) alreadyMine = true;
    else if (holder !== undefined) takenBy ??= holder;
    else if (owner && owner !== session.id) {
      othersExact.push({ transfer, owner });
      takenBy ??= owner;
    } else if (owner === null && snapshot && !mayBindUnowned(snapshot, session.id)) contested = true;
    else free.push(transfer);
  }
  const owed = stillOwed(session, ticker);
  const misfit = (transfer: ChainTransfer) => transfer.amount.minus(owed).abs();
  free.sort((a, b) => misfit(a).comparedTo(misfit(b)) || a.logIndex - b.logIndex);
  const asked = session.cryptoCurrency || free.length === 0 ? null : facts.askedWhenSent;
  const big = asked ? free.filter((transfer) => transfer.amount.gte(asked.div(2))) : free;
  const tooSmall =
    asked && big.length === 0 && free.length > 0
      ? { transfer: free.reduce((a, b) => (b.amount.gt(a.amount) ? b : a)), asked }
      : null;
  return { alreadyMine, othersExact, free: big, takenBy, contested, tooSmall };
}

/** What the session still owes in `ticker`: the rest of its locked total, else the quote's amount. */
function stillOwed(session: CheckoutSession, ticker: AssetTicker): Decimal {
  if (session.cryptoCurrency === ticker && session.totalAmountCrypto)
    return Decimal.max(session.totalAmountCrypto.minus(session.amountReceived).minus(session.amountPending), 0);
  return session.quotes.find((quote) => quote.ticker === ticker)?.amount ?? new Decimal(0);
}

/** What a bind request meets, under the session's lock. */
/** What of the session a bind's decision reads. */
export type BindSession = Pick<CheckoutSession, 'status' | 'expiresAt' | 'paymentPolicy'>;

export interface BindSnapshot {
  readonly session: BindSession;
  readonly bound: Pick<BoundTransaction, 'txHash' | 'cryptoCurrency'>;
  readonly now: Date;
  readonly verdict: BoundTxVerdict;
  /** How its transfers stand, when the verdict is valid. */
  readonly share: TransferShare | null;
  /** The binder is over the per-session bind limit. */
  readonly overLimit: boolean;
  /** Unverified candidates of the same kind (pending or unknown): the binder's own, and the session's. */
  readonly waiting: { readonly fromBinder: number; readonly total: number };
  /** Another open session holds a verified bind of the hash. */
  readonly verifiedElsewhere: boolean;
  /** A transfer of the hash is credited to another session. */
  readonly heldByOthers: boolean;
  /** The session receives at an address of its own (deposit mode): a bind credits, holds and fails nothing. */
  readonly depositMode?: boolean;
}

/** What the watcher's judgement of a candidate meets. */
export interface BoundJudgedSnapshot {
  readonly bound: Pick<BoundTransaction, 'txHash' | 'cryptoCurrency' | 'seenOnChainAt'>;
  readonly verdict: BoundTxVerdict;
  readonly share: TransferShare | null;
  /** Its session is paid, expired or failed: judged only because a transfer of it pays the session already. */
  readonly closed: boolean;
}

/** Refused: 409 (or 429 over the limit) with the code, nothing written. */
export interface Refuse {
  readonly kind: 'refuse';
  readonly code: ReasonCode;
  readonly message: string;
}
/** Credit one of `candidates` (the first that sticks) and give `othersExact` to their owners. */
export interface CreditBound {
  readonly kind: 'credit';
  readonly reason: 'paid_by_bind';
  readonly alreadyMine: boolean;
  readonly candidates: readonly ChainTransfer[];
  readonly othersExact: TransferShare['othersExact'];
}
/** The candidate is rejected with its code; the session's status does not change (rule 3). */
export interface Reject {
  readonly kind: 'reject';
  readonly code: RejectionCode;
  readonly message: string;
  /** The session holding the transfer, for a bind's refusal (never shown to the payer). */
  readonly creditedTo: string | null;
}
/** Accepted as a candidate; judged once mined. `onChain`: the chain knows it. */
export interface WaitBound {
  readonly kind: 'wait';
  readonly reason: 'awaiting_receipt' | 'session_closed';
  readonly onChain: boolean;
}

/** Accepted and recorded nowhere: a deposit-mode session is paid by what arrives at its address alone. */
export interface Hint {
  readonly kind: 'hint';
  readonly reason: 'deposit_bind_hint';
}

export type BindOutcome = Refuse | CreditBound | WaitBound | Hint;
export type BoundOutcome = Reject | CreditBound | WaitBound;

const refuse = (code: ReasonCode, message: string): Refuse => ({ kind: 'refuse', code, message });

/** Whether transfers to a closed session are still recorded (as late payments): until expires_at + the window. */
function lateWindowOpen(session: BindSession, now: Date): boolean {
  return now.getTime() < session.expiresAt.getTime() + session.paymentPolicy.latePaymentWindowMinutes * 60_000;
}

const closedRefusal = (session: BindSession) =>
  refuse('session_closed', `Checkout session is ${session.status}; it no longer accepts a transaction`);

/** A closed session takes a bind only of a mined transaction, inside its late-payment window (rule 3). */
export function closedToBind(session: BindSession, evidence: BindEvidence, now: Date): Refuse | null {
  const open = !isTerminal(session.status) || (evidence === 'mined' && lateWindowOpen(session, now));
  return open ? null : closedRefusal(session);
}

/** What the chain said of the transaction at bind. */
export type BindEvidence = 'mined' | 'pending' | 'unknown';

/**
 * Rule 3 at bind: a closed session takes only a mined transfer inside its late window; a transaction the chain
 * proves cannot pay is refused; a mined one credits its best free transfer; a pending or unknown one waits, capped.
 */
export function decideBind(evidence: BindEvidence, snapshot: BindSnapshot): BindOutcome {
  const { session, verdict } = snapshot;
  const closed = isTerminal(session.status);
  const closedRefused = closedToBind(session, evidence, snapshot.now);
  if (closedRefused) return closedRefused;
  if (snapshot.overLimit && verdict.kind !== 'valid') return refuse('rate_limited', 'Too many binds');
  // A deposit address's money is its session's whenever it was mined (the scan credits it too): no refusal for age.
  const provenNotPaying = verdict.kind === 'failed' && verdict.code !== 'tx_mined_before_session';
  if (snapshot.depositMode && !provenNotPaying) return { kind: 'hint', reason: 'deposit_bind_hint' };
  if (verdict.kind === 'failed') return refuse(verdict.code, verdict.reason);
  if (verdict.kind === 'valid') {
    const share = snapshot.share!;
    if (share.alreadyMine || share.free.length > 0) return creditOf(share);
    return refuseTaken(snapshot.bound, share, snapshot.verifiedElsewhere);
  }
  const cap = [
    snapshot.waiting.fromBinder >= MAX_UNVERIFIED_BINDS ? MAX_UNVERIFIED_BINDS : null,
    snapshot.waiting.total >= MAX_UNVERIFIED_BINDS_PER_SESSION ? MAX_UNVERIFIED_BINDS_PER_SESSION : null,
  ].find((reached) => reached !== null);
  if (cap)
    return refuse(
      'too_many_unverified',
      `Checkout session already holds ${cap} transactions that are not verified yet; wait until they are checked`,
    );
  // Only a verified bind elsewhere blocks this one: an unverified one is a claim nobody proved.
  if (snapshot.verifiedElsewhere) return alreadyBound(snapshot.bound.txHash);
  if (snapshot.heldByOthers) return paidElsewhere(snapshot.bound.txHash);
  if (closed) return closedRefusal(session);
  return { kind: 'wait', reason: 'awaiting_receipt', onChain: verdict.onChain };
}

const alreadyBound = (hash: string) =>
  refuse('tx_already_bound', `Transaction ${hash} is already bound to another checkout session`);
const paidElsewhere = (hash: string) =>
  refuse('tx_paid_elsewhere', `Transaction ${hash} already paid another checkout session`);

function creditOf(share: TransferShare): CreditBound {
  const candidates = share.alreadyMine ? [] : share.free;
  return {
    kind: 'credit',
    reason: 'paid_by_bind',
    alreadyMine: share.alreadyMine,
    candidates,
    othersExact: share.othersExact,
  };
}

/** Every transfer is another session's, too small, or contested: refused with what stands in the way. */
function refuseTaken(bound: BindSnapshot['bound'], share: TransferShare, verifiedElsewhere: boolean): Refuse {
  if (share.tooSmall) return refuse('bind_too_small', tooSmallReason(bound, share.tooSmall));
  if (share.contested && share.takenBy === null)
    return refuse(
      'tx_contested',
      `Transaction ${bound.txHash} pays an amount other checkout sessions ask for; only one of them can bind it`,
    );
  return verifiedElsewhere ? alreadyBound(bound.txHash) : paidElsewhere(bound.txHash);
}

/** Rule 3 in the watcher: a candidate waits, is credited, or is rejected with its code (never failing the session). */
export function decideBoundJudged({ bound, verdict, share, closed }: BoundJudgedSnapshot): BoundOutcome {
  if (verdict.kind === 'wait') return { kind: 'wait', reason: 'awaiting_receipt', onChain: verdict.onChain };
  if (verdict.kind === 'failed')
    return { kind: 'reject', code: verdict.code, message: verdict.reason, creditedTo: null };
  // A closed session's candidate only names the transfer it holds already: a free one is no payment of it now.
  if (closed && !share!.alreadyMine) return { kind: 'wait', reason: 'session_closed', onChain: true };
  if (share!.alreadyMine || share!.free.length > 0) return creditOf(share!);
  return rejectTaken(bound, share!);
}

/** The rejection of a candidate none of whose transfers it may take; it names no other session (decision 19). */
export function rejectTaken(bound: Pick<BoundTransaction, 'txHash' | 'cryptoCurrency'>, share: TransferShare): Reject {
  if (share.tooSmall)
    return { kind: 'reject', code: 'bind_too_small', message: tooSmallReason(bound, share.tooSmall), creditedTo: null };
  if (share.takenBy === null && share.contested)
    return {
      kind: 'reject',
      code: 'tx_contested',
      message:
        `${REJECTION_WORDS.tx_contested} transaction ${bound.txHash} pays an amount other checkout sessions ask ` +
        'for; one of them binds it',
      creditedTo: null,
    };
  return {
    kind: 'reject',
    code: 'tx_already_credited',
    message: `${REJECTION_WORDS.tx_already_credited} transaction ${bound.txHash} pays another checkout session`,
    creditedTo: share.takenBy,
  };
}

/** Why a bind that would select the session's asset credits nothing: its transfer pays under half the quote. */
export function tooSmallReason(bound: Pick<BoundTransaction, 'txHash' | 'cryptoCurrency'>, share: TooSmall): string {
  const ticker = bound.cryptoCurrency;
  return (
    `${REJECTION_WORDS.bind_too_small} transaction ${bound.txHash} pays ${share.transfer.amount.toFixed()} ` +
    `${ticker}, under half of the ${share.asked.toFixed(8)} ${ticker} asked; the first payment in an asset pays at ` +
    'least half of it (bind this one again once a larger part has selected the asset)'
  );
}
