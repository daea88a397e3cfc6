import { isTerminal, type CheckoutSession } from './checkout-session.js';
import type { DomainContext } from './context.js';
import type { BoundTransaction } from './chain-ports.js';
import type { Credit } from './payment-ports.js';
import type { TxStore } from './ports.js';
import { appendOutboxEvent, applySessionEvent } from './session-events.js';
import type { BoundTxVerdict } from './bound-transactions.js';

/** What became of a bound transaction once a verdict was applied. */
export type BoundTxOutcome =
  | { readonly state: 'unverified' }
  | { readonly state: 'verified'; readonly session: CheckoutSession }
  | { readonly state: 'rejected'; readonly reason: string; readonly creditedTo: string | null };

/**
 * Applies a verdict to a bound transaction of a session locked in `tx`. A valid one is
 * credited, transfer by transfer, unless a transfer is exactly another open session's
 * unique amount (that session gets it) or is credited already; the first verified one
 * selects the session's asset and becomes its `bound_tx_hash`. A rejected one changes
 * no status before expiry (a bind is a hint); after it, with nothing else in flight, the
 * session fails with the reason.
 */
export async function applyBoundTxVerdict(
  ctx: DomainContext,
  tx: TxStore,
  session: CheckoutSession,
  bound: BoundTransaction,
  verdict: BoundTxVerdict,
  now: Date,
): Promise<BoundTxOutcome> {
  if (verdict.kind === 'wait') {
    if (verdict.onChain && !bound.seenOnChainAt)
      await tx.updateBoundTransaction(bound.id, { seenOnChainAt: now, checkedAt: now });
    return { state: 'unverified' };
  }
  if (verdict.kind === 'failed') return reject(ctx, tx, session, bound, verdict.reason, null, now);

  const credits: Credit[] = [];
  for (const transfer of verdict.transfers) {
    const owner = await tx.exactAmountOwner(transfer);
    credits.push(
      owner && owner !== session.id
        ? { sessionId: owner, attribution: 'exact_amount' }
        : { sessionId: session.id, attribution: 'bound_tx' },
    );
  }
  const holders = await tx.creditTransfers(verdict.transfers, credits, now);
  if (!holders.includes(session.id)) {
    const other = holders.find((holder) => holder !== null) ?? null;
    return reject(
      ctx,
      tx,
      session,
      bound,
      `already credited: transaction ${bound.txHash} pays checkout session ${other}`,
      other,
      now,
    );
  }
  await tx.updateBoundTransaction(bound.id, {
    state: 'verified',
    seenOnChainAt: bound.seenOnChainAt ?? now,
    checkedAt: now,
  });
  await tx.updateSession(session.id, { updatedAt: now });
  let verified: CheckoutSession = session;
  if (!session.cryptoCurrency) {
    // The quote valid when the payment was sent: its block's time, or when Kassa first saw it if earlier.
    const minedAt = Math.min(...verdict.transfers.map((transfer) => transfer.blockTime.getTime()));
    const firstSeenAt = new Date(Math.min(minedAt, (bound.seenOnChainAt ?? now).getTime()));
    const required = await tx.lockAsset(
      session.id,
      bound.cryptoCurrency,
      bound.network,
      bound.chainId,
      firstSeenAt,
      now,
    );
    verified = {
      ...verified,
      cryptoCurrency: bound.cryptoCurrency,
      chainId: bound.chainId,
      totalAmountCrypto: required,
    };
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
  reason: string,
  creditedTo: string | null,
  now: Date,
): Promise<BoundTxOutcome> {
  await tx.updateBoundTransaction(bound.id, { state: 'rejected', reason, checkedAt: now });
  // The payer's page learns the reason live (the session row's update notifies its subscribers).
  await tx.updateSession(session.id, { updatedAt: now });
  if (!isTerminal(session.status)) {
    const holds = await tx.expiryHolds(session, ctx.inflightGraceMinutes);
    // Only a transaction the chain knew before expires_at held the session open: when it fails, so does
    // the session (once its time is up). One the chain never knew in time changes nothing: the clock decides.
    const heldItOpen = bound.seenOnChainAt !== null && bound.seenOnChainAt.getTime() < session.expiresAt.getTime();
    const event = heldItOpen
      ? ({ kind: 'bound_tx_failed', reason, holds } as const)
      : ({ kind: 'clock', holds } as const);
    await applySessionEvent(ctx, tx, session, event, now);
  }
  return { state: 'rejected', reason, creditedTo };
}
