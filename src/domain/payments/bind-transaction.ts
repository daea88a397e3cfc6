import { randomUUID } from 'node:crypto';
import type { AssetTicker } from '../shared/assets.js';
import { judgeBoundTransaction, type BoundTxVerdict } from './bound-transactions.js';
import { applyBoundOutcome, loadShare } from './bound-transaction-verdicts.js';
import type { CheckoutSession } from '../sessions/checkout-session.js';
import type { DomainContext } from '../context.js';
import { conflict, DomainError, notFound } from '../shared/errors.js';
import { applySessionEvent } from '../sessions/session-events.js';
import type { BindTransactionInput, CheckedBind } from './bind-transaction.schema.js';
import type { BoundTransaction, BoundTxEvidence } from './chain-ports.js';
import { expiryMayBeDue, NO_HOLDS } from '../sessions/status-machine.js';
import { RateLimitedError, throttleBindAddress, throttleSessionBind } from '../organisations/throttle.js';
import type { BindResult } from './bind-result.js';
import type { TxStore } from '../ports.js';
import { decide } from './decide.js';
import { closedToBind, type BindEvidence, type BindSnapshot } from './decide-bind.js';
import {
  boundOnWrongChain,
  checkAgainstSession,
  checkBindRequest,
  rejectedForItsHints,
  replayConflict,
} from './bind-checks.js';

export type { BindResult };
export { MAX_UNVERIFIED_BINDS, MAX_UNVERIFIED_BINDS_PER_SESSION } from './decide-bind.js';

/** Who binds: the client address (null for `kassa dev pay`), and the refusal when over the per-session bind limit. */
interface Binder {
  readonly clientAddress: string | null;
  /** Set when the binder is over the per-session bind limit: only a mined transaction that pays the session binds. */
  readonly overLimit: RateLimitedError | null;
}

const OPERATOR: Binder = { clientAddress: null, overLimit: null };

/**
 * The transaction becomes one of the session's candidates and decide() says what it does (docs/payment-rules.md,
 * rule 3); rebinding the same hash is idempotent.
 */
export async function bindTransaction(
  ctx: DomainContext,
  id: string,
  input: BindTransactionInput,
): Promise<BindResult> {
  return bindChecked(ctx, checkBindRequest(id, input), OPERATOR);
}

/** A bind, the session it names and what the chain said of its hash, asked before the lock. */
interface BindAttempt {
  readonly bind: CheckedBind;
  readonly binder: Binder;
  readonly evidence: BoundTxEvidence | null;
  readonly now: Date;
}

async function bindChecked(
  ctx: DomainContext,
  { sessionId, bind }: { sessionId: string; bind: CheckedBind },
  binder: Binder,
): Promise<BindResult> {
  const before = await ctx.store.sessions.findById(sessionId);
  if (!before) throw notFound(`Checkout session ${sessionId} not found`);
  const network = before.networks.find((n) => n.chainId === bind.chainId);
  // Asked outside the transaction: no row stays locked while a node answers.
  const evidence = network && ctx.chain ? await ctx.chain.evidence(network.network, bind.txHash) : null;
  // Over the limit, only a mined transaction that pays the session still binds (its payer is never refused).
  if (binder.overLimit && evidence?.kind !== 'mined') throw binder.overLimit;
  const attempt: BindAttempt = { bind, binder, evidence, now: ctx.clock() };
  // Expiry found here must be committed even though the bind is refused, so the
  // transaction returns the refusal and it is thrown after commit.
  const outcome = await ctx.store.transaction(async (tx): Promise<BindResult | DomainError> => {
    const locked = await tx.lockSession(sessionId);
    if (!locked) return notFound(`Checkout session ${sessionId} not found`);
    // What holds it open matters only once its time may be up.
    const now = attempt.now;
    const holds = expiryMayBeDue(locked, now) ? await tx.expiryHolds(locked, ctx.inflightGraceMinutes) : NO_HOLDS;
    const { session } = await applySessionEvent(ctx, tx, locked, { kind: 'clock', holds }, now);
    return bindLocked(ctx, tx, session, attempt);
  });
  if (outcome instanceof DomainError) throw outcome;
  return outcome;
}

/** The bind under the session's lock: replays and request checks, then decide(bind) and its outcome applied. */
async function bindLocked(
  ctx: DomainContext,
  tx: TxStore,
  session: CheckoutSession,
  { bind, binder, evidence, now }: BindAttempt,
): Promise<BindResult | DomainError> {
  const candidates = await tx.transactionsOfSession(session.id);
  // A hash is one transaction on one chain: the same hash with another chain is a mistake, not a new bind.
  const replayed = candidates.find((c) => c.txHash === bind.txHash);
  // Rejected for what its bind named (a wrong payer, asset or chain a stranger named first): judged afresh, and
  // replaced if it stands. Anything else is the same bind again.
  const onNamedChain = evidence !== null && evidence.kind !== 'missing';
  const replaced =
    replayed && (rejectedForItsHints(replayed, bind, session) || boundOnWrongChain(replayed, bind, onNamedChain))
      ? replayed
      : undefined;
  if (replayed && !replaced) {
    if (binder.overLimit && replayed.state !== 'verified') return binder.overLimit;
    return replayConflict(replayed, bind) ?? bindResult(session, replayed.cryptoCurrency, bind.txHash, true);
  }
  const kind: BindEvidence = evidence?.kind === 'mined' ? 'mined' : onNamedChain ? 'pending' : 'unknown';
  const closed = closedToBind(session, kind, now);
  if (closed) return conflict(closed.message, closed.code);
  const refusal = checkAgainstSession(ctx, session, bind);
  if (refusal) return refusal;
  const bound = newBound(session, bind, binder, onNamedChain, now);
  const registry = ctx.networks.find((n) => n.slug === bound.network)!;
  const verdict: BoundTxVerdict = evidence
    ? judgeBoundTransaction(session, bound, registry, evidence, now, ctx.inflightGraceMinutes)
    : { kind: 'wait', onChain: false };
  const snapshot = await bindSnapshot(tx, session, bound, verdict, binder, candidates, now);
  const outcome = decide({ kind: 'bind', evidence: kind }, snapshot);
  if (outcome.kind === 'refuse')
    return outcome.code === 'rate_limited' && binder.overLimit
      ? binder.overLimit
      : conflict(outcome.message, outcome.code);
  // Nothing is written: no candidate can credit, hold open or fail a session its own address pays.
  if (outcome.kind === 'hint') return bindResult(session, bound.cryptoCurrency, bind.txHash, false);
  if (replaced) await tx.removeBoundTransaction(replaced.id);
  await tx.insertBoundTransaction(bound);
  // Touches the session row, so live subscribers (the payer's page, another tab) see the new candidate.
  await tx.updateSession(session.id, { updatedAt: now });
  const applied = await applyBoundOutcome(ctx, tx, session, bound, outcome, { verdict, share: snapshot.share }, now);
  if (applied.state === 'rejected') {
    return applied.creditedTo
      ? conflict(`Transaction ${bind.txHash} already paid another checkout session`, 'tx_paid_elsewhere')
      : conflict(applied.reason, applied.code);
  }
  return bindResult(applied.state === 'verified' ? applied.session : session, bound.cryptoCurrency, bind.txHash, false);
}

/** The candidate a bind records. */
function newBound(
  session: CheckoutSession,
  bind: CheckedBind,
  binder: Binder,
  onNamedChain: boolean,
  now: Date,
): BoundTransaction {
  return {
    id: randomUUID(),
    sessionId: session.id,
    network: session.networks.find((n) => n.chainId === bind.chainId)!.network,
    chainId: bind.chainId,
    txHash: bind.txHash,
    cryptoCurrency: (bind.ticker ?? session.cryptoCurrency)!,
    payerWalletAddress: bind.payerWalletAddress,
    state: 'unverified',
    reasonCode: null,
    reason: null,
    seenOnChainAt: onNamedChain ? now : null,
    clientAddress: binder.clientAddress,
    createdAt: now,
  };
}

/**
 * What decide(bind) needs, loaded under the lock: how a mined transaction's transfers stand (and, when none is free,
 * whether another session verified it), or for one not judged yet the caps and who else holds it.
 */
async function bindSnapshot(
  tx: TxStore,
  session: CheckoutSession,
  bound: BoundTransaction,
  verdict: BoundTxVerdict,
  binder: Binder,
  candidates: readonly BoundTransaction[],
  now: Date,
): Promise<BindSnapshot> {
  const depositMode = await tx.receivesAtDepositAddress(session.id);
  const base = { session, bound, now, verdict, overLimit: binder.overLimit !== null, depositMode };
  const none = { fromBinder: 0, total: 0 };
  const verifiedElsewhere = async () =>
    (await tx.otherSessionsBinding(bound.txHash, bound.chainId, session.id)).some((o) => o.state === 'verified');
  if (verdict.kind === 'failed' || depositMode || (base.overLimit && verdict.kind !== 'valid'))
    return { ...base, share: null, waiting: none, verifiedElsewhere: false, heldByOthers: false };
  if (verdict.kind === 'valid') {
    const share = await loadShare(tx, session, bound, verdict.transfers, now);
    const taken =
      !share.alreadyMine && share.free.length === 0 && !share.tooSmall && !(share.contested && share.takenBy === null);
    return {
      ...base,
      share,
      waiting: none,
      verifiedElsewhere: taken && (await verifiedElsewhere()),
      heldByOthers: false,
    };
  }
  const onChain = bound.seenOnChainAt !== null;
  const waiting = candidates.filter((c) => c.state === 'unverified' && (c.seenOnChainAt !== null) === onChain);
  const fromBinder = waiting.filter((c) => c.clientAddress === binder.clientAddress).length;
  const counts = { fromBinder, total: waiting.length };
  const elsewhere = await verifiedElsewhere();
  const holders = elsewhere ? new Map() : await tx.transferHolders(bound.txHash, bound.chainId);
  const heldByOthers = [...holders.values()].some((holder) => holder !== session.id);
  return { ...base, share: null, waiting: counts, verifiedElsewhere: elsewhere, heldByOthers };
}

/** Who asks for a bind, as a transport received the request. */
export interface BindRequest {
  /** The session id exactly as sent (bind checks it; only a well-formed bind of a UUID is counted per session). */
  readonly sessionId: string;
  /** The client's address as rate limits count it (docs/api/rest.md#rate-limits). */
  readonly clientAddress: string;
}

/**
 * Counted here, once per executed bind, so no transport, alias or persisted operation steps around the limits
 * (docs/api/rest.md#rate-limits); over them only a mined transaction paying the session still binds.
 */
export async function bindPayerTransaction(
  ctx: DomainContext,
  request: BindRequest,
  readInput: () => BindTransactionInput,
): Promise<BindResult> {
  await throttleBindAddress(ctx, request.clientAddress);
  const checked = checkBindRequest(request.sessionId, readInput());
  let overLimit: RateLimitedError | null = null;
  try {
    await throttleSessionBind(ctx, checked.sessionId, request.clientAddress);
  } catch (error) {
    if (!(error instanceof RateLimitedError)) throw error;
    overLimit = error;
  }
  return bindChecked(ctx, checked, { clientAddress: request.clientAddress, overLimit });
}

function bindResult(session: CheckoutSession, ticker: AssetTicker, txHash: string, idempotent: boolean): BindResult {
  const required =
    session.cryptoCurrency === ticker && session.totalAmountCrypto
      ? session.totalAmountCrypto
      : session.quotes.find((q) => q.ticker === ticker)!.amount;
  return { session, txHash, cryptoCurrency: ticker, totalAmountCrypto: required, idempotent };
}
