import { randomUUID } from 'node:crypto';
import type { AssetTicker } from '../shared/assets.js';
import { judgeBoundTransaction } from './bound-transactions.js';
import { applyBoundTxVerdict, shareOf, tooSmallReason, type TransferShare } from './bound-transaction-verdicts.js';
import { isTerminal, type CheckoutSession } from '../sessions/checkout-session.js';
import type { DomainContext } from '../context.js';
import { conflict, DomainError, notFound } from '../shared/errors.js';
import { applySessionEvent } from '../sessions/session-events.js';
import type { BindTransactionInput, CheckedBind } from './bind-transaction.schema.js';
import type { BoundTransaction } from './chain-ports.js';
import { expiryMayBeDue, NO_HOLDS } from '../sessions/status-machine.js';
import { RateLimitedError, throttleBindAddress, throttleSessionBind } from '../organisations/throttle.js';
import type { BindResult } from './bind-result.js';
import {
  boundOnWrongChain,
  checkAgainstSession,
  checkBindRequest,
  rejectedForItsHints,
  replayConflict,
} from './bind-checks.js';

export type { BindResult };

/**
 * Bound transactions not judged yet that one session may hold from one client address, of each kind (pending, or
 * unknown to the chain): a bind is cheap, checking it is not (docs/payment-rules.md, rule 3).
 */
export const MAX_UNVERIFIED_BINDS = 5;
/** The same, from every address together: one binder's cap cannot exclude another, and the session's stays bounded. */
export const MAX_UNVERIFIED_BINDS_PER_SESSION = 25;

/** Who binds: the client address (null for `kassa dev pay`), and the refusal when over the per-session bind limit. */
interface Binder {
  readonly clientAddress: string | null;
  /** Set when the binder is over the per-session bind limit: only a mined transaction that pays the session binds. */
  readonly overLimit: RateLimitedError | null;
}

const OPERATOR: Binder = { clientAddress: null, overLimit: null };

/**
 * Binds a payer's broadcast transaction to a session (docs/api/rest.md#bind-rules). A bind is a
 * hint, not a lock (docs/payment-rules.md, rule 3): the transaction becomes one of the session's candidates
 * and nothing is credited before it is verified from its own receipt. When the chain
 * already has it mined, it is judged here at once: a transaction that cannot pay the
 * session is refused (409 with the reason), one that pays it is credited and selects the
 * asset. A pending one waits for the chain watcher; a hash the chain does not know locks
 * nothing and blocks no other bind. Rebinding the same hash is idempotent.
 */
export async function bindTransaction(
  ctx: DomainContext,
  id: string,
  input: BindTransactionInput,
): Promise<BindResult> {
  return bindChecked(ctx, checkBindRequest(id, input), OPERATOR);
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
  const now = ctx.clock();

  // Expiry found here must be committed even though the bind is refused, so the
  // transaction returns the refusal and it is thrown after commit.
  const outcome = await ctx.store.transaction(async (tx): Promise<BindResult | DomainError> => {
    const locked = await tx.lockSession(sessionId);
    if (!locked) return notFound(`Checkout session ${sessionId} not found`);
    // What holds it open matters only once its time may be up.
    const holds = expiryMayBeDue(locked, now) ? await tx.expiryHolds(locked, ctx.inflightGraceMinutes) : NO_HOLDS;
    const { session } = await applySessionEvent(ctx, tx, locked, { kind: 'clock', holds }, now);
    const candidates = await tx.transactionsOfSession(session.id);
    // A hash is one transaction on one chain: the same hash with another chain is a mistake, not a new bind.
    const replayed = candidates.find((c) => c.txHash === bind.txHash);
    // Rejected for what its bind named (anyone may bind a pending transaction first, naming any payer or asset): a bind
    // naming otherwise is judged afresh, and replaces it if it stands. Anything else is the same bind again.
    // Likewise a candidate named on a chain that never saw it, when the chain this bind names has it: a stranger who
    // named the wrong chain first cannot keep the payer's bind out (a signed transaction lives on one chain only).
    const onNamedChain = evidence !== null && evidence.kind !== 'missing';
    const replaced =
      replayed && (rejectedForItsHints(replayed, bind, session) || boundOnWrongChain(replayed, bind, onNamedChain))
        ? replayed
        : undefined;
    if (replayed && !replaced) {
      if (binder.overLimit && replayed.state !== 'verified') return binder.overLimit;
      return replayConflict(replayed, bind) ?? bindResult(session, replayed.cryptoCurrency, bind.txHash, true);
    }
    // A closed session takes only a mined transfer, inside its late-payment window: it is recorded as a late payment.
    const closed = isTerminal(session.status);
    if (closed && !(evidence?.kind === 'mined' && lateWindowOpen(session, now))) {
      return conflict(`Checkout session is ${session.status}; it no longer accepts a transaction`, 'session_closed');
    }

    const refusal = checkAgainstSession(ctx, session, bind);
    if (refusal) return refusal;
    const ticker = (bind.ticker ?? session.cryptoCurrency)!;
    const sessionNetwork = session.networks.find((n) => n.chainId === bind.chainId)!;
    const bound: BoundTransaction = {
      id: randomUUID(),
      sessionId: session.id,
      network: sessionNetwork.network,
      chainId: bind.chainId,
      txHash: bind.txHash,
      cryptoCurrency: ticker,
      payerWalletAddress: bind.payerWalletAddress,
      state: 'unverified',
      reasonCode: null,
      reason: null,
      seenOnChainAt: onNamedChain ? now : null,
      clientAddress: binder.clientAddress,
      createdAt: now,
    };
    const registry = ctx.networks.find((n) => n.slug === sessionNetwork.network)!;
    const verdict = evidence
      ? judgeBoundTransaction(session, bound, registry, evidence, now, ctx.inflightGraceMinutes)
      : ({ kind: 'wait', onChain: false } as const);
    if (binder.overLimit && verdict.kind !== 'valid') return binder.overLimit;
    // What the chain already proves cannot pay this session is refused, and nothing is written.
    if (verdict.kind === 'failed') return conflict(verdict.reason, verdict.code);
    let share: TransferShare | undefined;
    if (verdict.kind === 'valid') {
      // Mined and paying this wallet: each of its transfers is judged on its own (a batch pays several
      // sessions, one transfer each). Refused, with nothing written, when every one is another session's.
      share = await shareOf(tx, session, bound, verdict.transfers, now);
      if (!share.alreadyMine && share.free.length === 0) {
        if (share.tooSmall) return conflict(tooSmallReason(bound, share.tooSmall), 'bind_too_small');
        if (share.contested && share.takenBy === null)
          return conflict(
            `Transaction ${bind.txHash} pays an amount other checkout sessions ask for; only one of them can bind it`,
            'tx_contested',
          );
        const elsewhere = await tx.otherSessionsBinding(bind.txHash, bind.chainId, session.id);
        return elsewhere.some((other) => other.state === 'verified')
          ? conflict(`Transaction ${bind.txHash} is already bound to another checkout session`, 'tx_already_bound')
          : conflict(`Transaction ${bind.txHash} already paid another checkout session`, 'tx_paid_elsewhere');
      }
    } else {
      // Only a transaction that can be judged now escapes these caps; hashes the chain does not know are counted apart
      // from pending ones, and each client address apart from the others: junk hashes cannot keep a payer's mined or
      // pending transaction out, nor can one binder's never-mined transactions (docs/payment-rules.md, rule 3).
      const waiting = candidates.filter((c) => c.state === 'unverified' && (c.seenOnChainAt !== null) === onNamedChain);
      const cap = [
        waiting.filter((c) => c.clientAddress === binder.clientAddress).length >= MAX_UNVERIFIED_BINDS
          ? MAX_UNVERIFIED_BINDS
          : null,
        waiting.length >= MAX_UNVERIFIED_BINDS_PER_SESSION ? MAX_UNVERIFIED_BINDS_PER_SESSION : null,
      ].find((reached) => reached !== null);
      if (cap) {
        return conflict(
          `Checkout session already holds ${cap} transactions that are not verified yet; wait until they are checked`,
          'too_many_unverified',
        );
      }
      // Only a verified bind elsewhere blocks this one. An unverified one is a claim nobody proved: a hash
      // no chain knows, or a pending transaction that anyone who saw it could bind first (naming any payer).
      // Both stay candidates; the chain's evidence decides between them when it is mined.
      const elsewhere = await tx.otherSessionsBinding(bind.txHash, bind.chainId, session.id);
      if (elsewhere.some((other) => other.state === 'verified')) {
        return conflict(`Transaction ${bind.txHash} is already bound to another checkout session`, 'tx_already_bound');
      }
      const holders = await tx.transferHolders(bind.txHash, bind.chainId);
      if ([...holders.values()].some((holder) => holder !== session.id))
        return conflict(`Transaction ${bind.txHash} already paid another checkout session`, 'tx_paid_elsewhere');
    }
    if (closed && verdict.kind !== 'valid')
      return conflict(`Checkout session is ${session.status}; it no longer accepts a transaction`, 'session_closed');
    if (replaced) await tx.removeBoundTransaction(replaced.id);
    await tx.insertBoundTransaction(bound);
    // Touches the session row, so live subscribers (the payer's page, another tab) see the new candidate.
    await tx.updateSession(session.id, { updatedAt: now });
    const applied = await applyBoundTxVerdict(ctx, tx, session, bound, verdict, now, share);
    if (applied.state === 'rejected') {
      return applied.creditedTo
        ? conflict(`Transaction ${bind.txHash} already paid another checkout session`, 'tx_paid_elsewhere')
        : conflict(applied.reason, applied.code);
    }
    return bindResult(applied.state === 'verified' ? applied.session : session, ticker, bind.txHash, false);
  });
  if (outcome instanceof DomainError) throw outcome;
  return outcome;
}

/** Who asks for a bind, as a transport received the request. */
export interface BindRequest {
  /** The session id exactly as sent (bind checks it; only a well-formed bind of a UUID is counted per session). */
  readonly sessionId: string;
  /** The client's address as rate limits count it (docs/api/rest.md#rate-limits). */
  readonly clientAddress: string;
}

/**
 * A payer's bind as REST bind-tx and GraphQL's bindTransaction (HTTP and WebSocket) receive it
 * (docs/api/rest.md#rate-limits): every attempt counts against the per-address limit (a 429 over it); `readInput`
 * runs after that count, and a bind refused for its shape counts no further. A well-formed one counts against the
 * per-session limit of its session and client address, so a stranger's binds never use up the payer's; over it, only
 * a transaction mined and paying the session binds (a payer is never refused that), anything else is 429. Counted
 * here, once per executed bind, so two transports, aliases, variable defaults or persisted operations cannot step
 * around the count.
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

/**
 * Whether transfers to a closed session are still recorded (as late payments): until expires_at + the organisation's
 * window.
 */
function lateWindowOpen(session: CheckoutSession, now: Date): boolean {
  return now.getTime() < session.expiresAt.getTime() + session.paymentPolicy.latePaymentWindowMinutes * 60_000;
}

function bindResult(session: CheckoutSession, ticker: AssetTicker, txHash: string, idempotent: boolean): BindResult {
  const required =
    session.cryptoCurrency === ticker && session.totalAmountCrypto
      ? session.totalAmountCrypto
      : session.quotes.find((q) => q.ticker === ticker)!.amount;
  return { session, txHash, cryptoCurrency: ticker, totalAmountCrypto: required, idempotent };
}
