import { isTerminal, type CheckoutSession } from '../sessions/checkout-session.js';
import type { DomainContext } from '../context.js';
import type { BoundTransaction } from './chain-ports.js';
import type { AssetTicker } from '../shared/assets.js';
import { Decimal } from '../shared/money.js';
import type { ChainTransfer, Credit } from './payment-ports.js';
import type { TxStore } from '../ports.js';
import { appendOutboxEvent, applySessionEvent } from '../sessions/session-events.js';
import type { BoundTxVerdict } from './bound-transactions.js';
import { REJECTION_WORDS, type RejectionCode } from '../shared/reason-codes.js';

/** What became of a bound transaction once a verdict was applied. */
export type BoundTxOutcome =
  | { readonly state: 'unverified' }
  | { readonly state: 'verified'; readonly session: CheckoutSession }
  | {
      readonly state: 'rejected';
      readonly code: RejectionCode;
      readonly reason: string;
      readonly creditedTo: string | null;
    };

/**
 * Applies a verdict to a bound transaction of a session locked in `tx`. A valid one is
 * credited, transfer by transfer, unless a transfer is exactly another open session's
 * unique amount (that session gets it) or is credited already; the first verified one
 * selects the session's asset and becomes its `bound_tx_hash`. A rejected one changes
 * no status (a bind is a hint): after expiry, with nothing else in flight, the session expires.
 */
export async function applyBoundTxVerdict(
  ctx: DomainContext,
  tx: TxStore,
  session: CheckoutSession,
  bound: BoundTransaction,
  verdict: BoundTxVerdict,
  now: Date,
  /** The valid transaction's share (shareOf), when the caller has just read it in this transaction. */
  known?: TransferShare,
): Promise<BoundTxOutcome> {
  if (verdict.kind === 'wait') {
    // Checked now, even when nothing changed: the watcher takes the least recently checked first (toCheck), so junk
    // bound in bulk cannot keep other payers' transactions out of its pass (found by an attacker-minded review).
    const seen = verdict.onChain && !bound.seenOnChainAt;
    await tx.updateBoundTransaction(bound.id, { ...(seen && { seenOnChainAt: now }), checkedAt: now });
    return { state: 'unverified' };
  }
  if (verdict.kind === 'failed') return reject(ctx, tx, session, bound, verdict, null, now);

  const share = known ?? (await shareOf(tx, session, bound, verdict.transfers, now));
  // Another session's exact amount goes to that session, as a scan would credit it.
  if (share.othersExact.length > 0) {
    await tx.creditTransfers(
      share.othersExact.map((exact) => exact.transfer),
      share.othersExact.map((exact): Credit => ({ sessionId: exact.owner, attribution: 'exact_amount' })),
      now,
    );
  }
  let credited = share.alreadyMine;
  // One transfer per bind: the free one that fits the session best; another bind may have taken it meanwhile.
  for (const transfer of share.free) {
    if (credited) break;
    const [holder] = await tx.creditTransfers([transfer], [{ sessionId: session.id, attribution: 'bound_tx' }], now);
    if (holder === session.id) credited = true;
  }
  if (!credited) {
    // The reason is shown to whoever holds this session id (GraphQL `transactions`): it names no other session
    // (docs/decisions/0019); operators find the holder with `kassa payments list`.
    const rejection: Rejection = share.tooSmall
      ? { code: 'bind_too_small', reason: tooSmallReason(bound, share.tooSmall) }
      : share.takenBy === null && share.contested
        ? {
            code: 'tx_contested',
            reason:
              `${REJECTION_WORDS.tx_contested} transaction ${bound.txHash} pays an amount other checkout ` +
              `sessions ask for; ` +
              'one of them binds it',
          }
        : {
            code: 'tx_already_credited',
            reason: `${REJECTION_WORDS.tx_already_credited} transaction ${bound.txHash} pays another checkout session`,
          };
    return reject(ctx, tx, session, bound, rejection, share.tooSmall ? null : share.takenBy, now);
  }
  await tx.updateBoundTransaction(bound.id, {
    state: 'verified',
    seenOnChainAt: bound.seenOnChainAt ?? now,
    checkedAt: now,
  });
  await tx.updateSession(session.id, { updatedAt: now });
  let verified: CheckoutSession = session;
  if (!session.cryptoCurrency) {
    // The quote valid when the payment was sent.
    const sentAt = firstSeenAt(bound, verdict.transfers, now);
    // The amounts asked in other assets stay the session's for its quote's lifetime (docs/decisions/0026).
    const { cryptoCurrency, network, chainId } = bound;
    const required = await tx.lockAsset(session.id, cryptoCurrency, network, chainId, sentAt, now, ctx.quoteTtlMinutes);
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

/** Why a bound transaction cannot pay the session: the code, and the text shown with it. */
interface Rejection {
  readonly code: RejectionCode;
  readonly reason: string;
}

async function reject(
  ctx: DomainContext,
  tx: TxStore,
  session: CheckoutSession,
  bound: BoundTransaction,
  { code, reason }: Rejection,
  creditedTo: string | null,
  now: Date,
): Promise<BoundTxOutcome> {
  await tx.updateBoundTransaction(bound.id, { state: 'rejected', reasonCode: code, reason, checkedAt: now });
  // The payer's page learns the reason live (the session row's update notifies its subscribers).
  await tx.updateSession(session.id, { updatedAt: now });
  if (!isTerminal(session.status)) {
    // A rejection never fails the session (docs/payment-rules.md, rule 3): anyone with the session id can bind a
    // transaction of their own that reverts, moves dust or a worthless token to the wallet, or is mined late. It held
    // the session for the grace at most; the clock decides, and an unpaid session ends expired.
    const holds = await tx.expiryHolds(session, ctx.inflightGraceMinutes);
    await applySessionEvent(ctx, tx, session, { kind: 'clock', holds }, now);
  }
  return { state: 'rejected', code, reason, creditedTo };
}

/** How a valid bound transaction's transfers stand for `session` before any is credited by this bind. */
export interface TransferShare {
  /** A transfer of the transaction is credited to this session already (a scan or an earlier bind). */
  readonly alreadyMine: boolean;
  /** Transfers that are another open session's unique amount exactly: theirs. */
  readonly othersExact: ReadonlyArray<{ readonly transfer: ChainTransfer; readonly owner: string }>;
  /** Transfers nobody holds, best fit for this session first. */
  readonly free: readonly ChainTransfer[];
  /** A session holding one of the transfers, when this one holds none (for the refusal). */
  readonly takenBy: string | null;
  /** A transfer is of an amount other sessions share, which this one may not bind (mayBindUnowned). */
  readonly contested: boolean;
  /** The largest free transfer and what the session asked, when every free one is too small to select the asset. */
  readonly tooSmall: TooSmall | null;
}

/** A transfer too small to select the session's asset, and the amount the session asked in it then. */
export interface TooSmall {
  readonly transfer: ChainTransfer;
  readonly asked: Decimal;
}

/**
 * Which of a transaction's transfers to the session's wallet a bind may credit to it
 * (docs/payment-rules.md, rule 3). Each Transfer log is a payment of its own: a batch paying
 * several customers of one merchant in one transaction pays each of their sessions once. A bind
 * takes at most one, the free transfer closest to what the session still owes (the lowest log
 * index on a tie), never one credited to another session or another session's exact amount, nor
 * an amount other sessions share.
 */
export async function shareOf(
  tx: TxStore,
  session: CheckoutSession,
  bound: BoundTransaction,
  transfers: readonly ChainTransfer[],
  now: Date,
): Promise<TransferShare> {
  const holders = await tx.transferHolders(bound.txHash, bound.chainId);
  const othersExact: Array<{ transfer: ChainTransfer; owner: string }> = [];
  const free: ChainTransfer[] = [];
  let alreadyMine = false;
  let takenBy: string | null = null;
  let contested = false;
  for (const transfer of transfers) {
    const holder = holders.get(transfer.logIndex);
    if (holder === session.id) alreadyMine = true;
    else if (holder !== undefined) takenBy ??= holder;
    else {
      const owner = await tx.exactAmountOwner(transfer);
      if (owner && owner !== session.id) {
        othersExact.push({ transfer, owner });
        takenBy ??= owner;
      } else if (owner === null && !(await mayBindUnowned(tx, session, transfer))) contested = true;
      else free.push(transfer);
    }
  }
  const owed = stillOwed(session, bound.cryptoCurrency);
  const misfit = (transfer: ChainTransfer) => transfer.amount.minus(owed).abs();
  free.sort((a, b) => misfit(a).comparedTo(misfit(b)) || a.logIndex - b.logIndex);
  // The first payment in an asset must pay at least half of what the session asked in it (docs/payment-rules.md, rule
  // 3). A stranger's bound unit of another asset locked a waiting session to it, and the payer's exact transfer in the
  // asset their page showed then paid nothing (found by an attacker-minded review, 2026-11-28): locking a session to
  // an asset now takes a part of half its price (docs/decisions/0025).
  const asked =
    session.cryptoCurrency || free.length === 0 ? null : await askedWhenSent(tx, session, bound, transfers, now);
  const big = asked ? free.filter((transfer) => transfer.amount.gte(asked.div(2))) : free;
  const tooSmall =
    asked && big.length === 0 && free.length > 0
      ? { transfer: free.reduce((a, b) => (b.amount.gt(a.amount) ? b : a)), asked }
      : null;
  return { alreadyMine, othersExact, free: big, takenBy, contested, tooSmall };
}

/**
 * What the session asked in the bound asset when the payment was sent (the quote lockAsset would lock at): its current
 * quote, unless it was re-priced since (a re-pricing moves `quotedAt`), then the quote of the time, from the store.
 */
async function askedWhenSent(
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

/** Why a bind that would select the session's asset credits nothing: its transfer pays under half the quote. */
export function tooSmallReason(bound: Pick<BoundTransaction, 'txHash' | 'cryptoCurrency'>, share: TooSmall): string {
  const ticker = bound.cryptoCurrency;
  return (
    `${REJECTION_WORDS.bind_too_small} transaction ${bound.txHash} pays ${share.transfer.amount.toFixed()} ` +
    `${ticker}, under half of the ` +
    `${share.asked.toFixed(8)} ${ticker} asked; the first payment in an asset pays at least half of it (bind this ` +
    'one again once a larger part has selected the asset)'
  );
}

/**
 * A transfer no session is paid by by amount may still be meant for one: an amount two sessions ask for
 * (docs/payment-rules.md, rule 4: shared after a reorganisation) pays neither by amount, and only one of them may
 * bind it; an amount one session was asked for, which it could not take when scanned (its asset locked to another by
 * a bound part, its rest or quote changed since, or closed), is reserved for it (rule 2). Any other session's bind
 * would take a payment meant for one of them.
 */
async function mayBindUnowned(tx: TxStore, session: CheckoutSession, transfer: ChainTransfer): Promise<boolean> {
  const contenders = await tx.amountContenders(transfer);
  if (contenders.length > 0) return contenders.includes(session.id);
  const claimant = await tx.amountClaimant(transfer);
  return claimant === null || claimant === session.id;
}

/** What the session still owes in `ticker`: the rest of its locked total, else the quote's amount. */
function stillOwed(session: CheckoutSession, ticker: AssetTicker): Decimal {
  if (session.cryptoCurrency === ticker && session.totalAmountCrypto)
    return Decimal.max(session.totalAmountCrypto.minus(session.amountReceived).minus(session.amountPending), 0);
  return session.quotes.find((quote) => quote.ticker === ticker)?.amount ?? new Decimal(0);
}
