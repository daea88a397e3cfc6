import { isTerminal, type CheckoutSession } from '../sessions/checkout-session.js';
import type { DomainContext } from '../context.js';
import type { BoundTransaction } from './chain-ports.js';
import type { Decimal } from '../shared/money.js';
import type { ChainTransfer, Credit } from './payment-ports.js';
import type { TxStore } from '../ports.js';
import { appendOutboxEvent, applySessionEvent } from '../sessions/session-events.js';
import type { BoundTxVerdict } from './bound-transactions.js';
import type { RejectionCode } from '../shared/reason-codes.js';
import { decide } from './decide.js';
import { shareOf, type BoundOutcome, type Reject, type ShareFacts, type TransferShare } from './decide-bind.js';

// Applies what decide() made of a bound transaction (decide-bind.ts), inside the transaction that locks its session.

/** What became of a bound transaction once its outcome was applied. */
export type BoundTxOutcome =
  | { readonly state: 'unverified' }
  | { readonly state: 'verified'; readonly session: CheckoutSession }
  | {
      readonly state: 'rejected';
      readonly code: RejectionCode;
      readonly reason: string;
      readonly creditedTo: string | null;
    };

/** The verdict and the share it was decided with. */
export interface Judged {
  readonly verdict: BoundTxVerdict;
  readonly share: TransferShare | null;
}

/** Judges a candidate the watcher read the receipt of: decide(bound_judged), then applies it. */
export async function judgeBound(
  ctx: DomainContext,
  tx: TxStore,
  session: CheckoutSession,
  bound: BoundTransaction,
  verdict: BoundTxVerdict,
  now: Date,
): Promise<BoundTxOutcome> {
  const share = verdict.kind === 'valid' ? await loadShare(tx, session, bound, verdict.transfers, now) : null;
  const outcome = decide({ kind: 'bound_judged' }, { bound, verdict, share, closed: isTerminal(session.status) });
  return applyBoundOutcome(ctx, tx, session, bound, outcome, { verdict, share }, now);
}

/**
 * A credit leaves other sessions' exact amounts to them and takes the first transfer still free, as another bind may
 * have taken one meanwhile; the first verified bind selects the asset. A rejection changes no status.
 */
export async function applyBoundOutcome(
  ctx: DomainContext,
  tx: TxStore,
  session: CheckoutSession,
  bound: BoundTransaction,
  outcome: BoundOutcome,
  judged: Judged,
  now: Date,
): Promise<BoundTxOutcome> {
  if (outcome.kind === 'wait') {
    // Checked now, even when nothing changed: the watcher takes the least recently checked first (toCheck).
    const seen = outcome.onChain && !bound.seenOnChainAt;
    await tx.updateBoundTransaction(bound.id, { ...(seen && { seenOnChainAt: now }), checkedAt: now });
    return { state: 'unverified' };
  }
  if (outcome.kind === 'reject') return reject(ctx, tx, session, bound, outcome, now);
  if (outcome.othersExact.length > 0) {
    const exact = outcome.othersExact.map(({ owner }): Credit => ({ sessionId: owner, attribution: 'exact_amount' }));
    await tx.creditTransfers(
      outcome.othersExact.map(({ transfer }) => transfer),
      exact,
      now,
    );
  }
  let credited = outcome.alreadyMine;
  for (const transfer of outcome.candidates) {
    if (credited) break;
    const [holder] = await tx.creditTransfers([transfer], [{ sessionId: session.id, attribution: 'bound_tx' }], now);
    if (holder === session.id) credited = true;
  }
  if (!credited) {
    // Every free transfer went to another bind meanwhile: decided again with none free.
    const lost = decide(
      { kind: 'bound_judged' },
      { bound, verdict: judged.verdict, share: { ...judged.share!, free: [] }, closed: isTerminal(session.status) },
    );
    return reject(ctx, tx, session, bound, lost as Reject, now);
  }
  const transfers = judged.verdict.kind === 'valid' ? judged.verdict.transfers : [];
  return verify(ctx, tx, session, bound, transfers, now);
}

/** A credited bind: verified, selecting the asset at the quote of when it was sent, and becoming `bound_tx_hash`. */
async function verify(
  ctx: DomainContext,
  tx: TxStore,
  session: CheckoutSession,
  bound: BoundTransaction,
  transfers: readonly ChainTransfer[],
  now: Date,
): Promise<BoundTxOutcome> {
  await tx.updateBoundTransaction(bound.id, {
    state: 'verified',
    seenOnChainAt: bound.seenOnChainAt ?? now,
    checkedAt: now,
  });
  await tx.updateSession(session.id, { updatedAt: now });
  let verified: CheckoutSession = session;
  if (!session.cryptoCurrency) {
    const sentAt = firstSeenAt(bound, transfers, now);
    // The amounts asked in other assets stay the session's for its quote's lifetime (docs/decisions/0024).
    const { cryptoCurrency, network, chainId } = bound;
    const required = await tx.lockAsset(session.id, cryptoCurrency, network, chainId, sentAt, now, ctx.quoteTtlMinutes);
    verified = { ...verified, cryptoCurrency, chainId, totalAmountCrypto: required };
  }
  if (!session.boundTxHash) {
    const binding = {
      boundTxHash: bound.txHash,
      boundAt: bound.createdAt,
      boundTxCheckedAt: now,
      // Proven now: the sender check passed. It attributes nothing else (docs/payment-rules.md, rule 2).
      payerWalletAddress: bound.payerWalletAddress ?? session.payerWalletAddress,
      updatedAt: now,
    };
    await tx.updateSession(session.id, binding);
    verified = { ...verified, ...binding };
  }
  await appendOutboxEvent(ctx, tx, verified, 'checkout_session.tx_bound', now);
  return { state: 'verified', session: verified };
}

async function reject(
  ctx: DomainContext,
  tx: TxStore,
  session: CheckoutSession,
  bound: BoundTransaction,
  { code, message, creditedTo }: Reject,
  now: Date,
): Promise<BoundTxOutcome> {
  await tx.updateBoundTransaction(bound.id, { state: 'rejected', reasonCode: code, reason: message, checkedAt: now });
  // The payer's page learns the reason live (the session row's update notifies its subscribers).
  await tx.updateSession(session.id, { updatedAt: now });
  if (!isTerminal(session.status)) {
    // A rejection never fails the session (rule 3): it held the session for the grace at most; the clock decides.
    const holds = await tx.expiryHolds(session, ctx.inflightGraceMinutes);
    await applySessionEvent(ctx, tx, session, { kind: 'clock', holds }, now);
  }
  return { state: 'rejected', code, reason: message, creditedTo };
}

/** Loads what decide() needs of a valid bound transaction's transfers, and computes its share (decide-bind.ts). */
export async function loadShare(
  tx: TxStore,
  session: CheckoutSession,
  bound: BoundTransaction,
  transfers: readonly ChainTransfer[],
  now: Date,
): Promise<TransferShare> {
  const holders = await tx.transferHolders(bound.txHash, bound.chainId);
  const snapshots = new Map();
  for (const transfer of transfers)
    if (!holders.has(transfer.logIndex)) snapshots.set(transfer.logIndex, await tx.transferSnapshot(transfer));
  const askedWhenSent = session.cryptoCurrency ? null : await askedAt(tx, session, bound, transfers, now);
  const facts: ShareFacts = { holders, snapshots, askedWhenSent };
  return shareOf(session, bound.cryptoCurrency, transfers, facts);
}

/**
 * What the session asked in the bound asset when the payment was sent (the quote lockAsset would lock at): its current
 * quote, unless it was re-priced since (a re-pricing moves `quotedAt`), then the quote of the time, from the store.
 */
async function askedAt(
  tx: TxStore,
  session: CheckoutSession,
  bound: BoundTransaction,
  transfers: readonly ChainTransfer[],
  now: Date,
): Promise<Decimal | null> {
  const sentAt = firstSeenAt(bound, transfers, now);
  if (session.quotedAt.getTime() <= sentAt.getTime())
    return session.quotes.find((quote) => quote.ticker === bound.cryptoCurrency)?.amount ?? null;
  return tx.quoteAt(session.id, bound.cryptoCurrency, sentAt);
}

/** When a valid bound transaction's payment was sent: its block's time, or when Kassa first saw it if earlier. */
function firstSeenAt(bound: BoundTransaction, transfers: readonly ChainTransfer[], now: Date): Date {
  const minedAt = Math.min(...transfers.map((transfer) => transfer.blockTime.getTime()));
  return new Date(Math.min(minedAt, (bound.seenOnChainAt ?? now).getTime()));
}
