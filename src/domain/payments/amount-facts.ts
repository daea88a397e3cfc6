import { OPEN_STATUSES } from '../sessions/checkout-session.js';
import { Decimal } from '../shared/money.js';
import type {
  AmountClaimFact,
  AmountShareFact,
  ChainTransfer,
  SessionPaymentFacts,
  TransferSnapshot,
} from './payment-ports.js';

export type { AmountClaimFact, AmountShareFact, SessionPaymentFacts, TransferSnapshot };

// What storage knows about a transfer's amount and the sessions asking for it, loaded as plain facts
// (src/db/payments/amount-owners.ts); the functions below judge them (docs/payment-rules.md, rules 2 and 4).

/**
 * How far a block's timestamp may be behind the moment Kassa created a session and still
 * pay it (clocks of nodes and servers differ by seconds). docs/payment-rules.md, rule 1.
 */
export const PAYMENT_CLOCK_SKEW_MS = 30_000;

const skewed = (at: Date) => new Date(at.getTime() + PAYMENT_CLOCK_SKEW_MS);

/** A share counts for a transfer written by its block (less the skew) and standing then. */
function shareCounts(share: AmountShareFact, transfer: ChainTransfer): boolean {
  return share.createdAt <= skewed(transfer.blockTime) && (!share.releasedAt || share.releasedAt > transfer.blockTime);
}

/** The claim was taken by the block (less the skew): its session was asked for the amount. */
function claimTaken(claim: AmountClaimFact, transfer: ChainTransfer): boolean {
  return claim.takenAt <= skewed(transfer.blockTime);
}

/** The claim held the amount when the block was mined: taken by then, not released before. */
function claimCovers(claim: AmountClaimFact, transfer: ChainTransfer): boolean {
  const time = transfer.blockTime;
  return (
    claimTaken(claim, transfer) &&
    (!claim.releasedAt || claim.releasedAt > time) &&
    (!claim.heldSince || claim.heldSince <= time)
  );
}

/** Whether a share of the amount counts for the transfer: then the sessions asking for it decide. */
export function amountShared(snapshot: TransferSnapshot): boolean {
  return snapshot.shares.some((share) => shareCounts(share, snapshot.transfer));
}

/**
 * docs/decisions/0024: the session is locked to another asset or chain by bound parts alone that do not pay it —
 * mined before expires_at, every other payment credited by a bind, and the parts under what it asks less tolerance.
 */
export function supersedable(session: SessionPaymentFacts, transfer: ChainTransfer): boolean {
  if (!session.cryptoCurrency || !session.totalAmountCrypto) return false;
  const elsewhere =
    session.cryptoCurrency !== transfer.asset || (session.chainId !== null && session.chainId !== transfer.chainId);
  if (!elsewhere) return false;
  if (transfer.blockTime >= session.expiresAt || session.paidOtherwise) return false;
  const asked = session.totalAmountCrypto.times(new Decimal(1).minus(session.tolerancePercent.dividedBy(100)));
  return session.partsTotal.lessThan(asked);
}

/** The open session the transfer pays by its unique amount (rule 2), or null. */
export function exactOwner(snapshot: TransferSnapshot): string | null {
  const { claim, transfer } = snapshot;
  if (!claim || !claimCovers(claim, transfer) || amountShared(snapshot)) return null;
  const session = claim.session;
  if (!OPEN_STATUSES.includes(session.status) || session.createdAt > skewed(transfer.blockTime)) return null;
  const free =
    (!session.cryptoCurrency || session.cryptoCurrency === transfer.asset) &&
    (!session.chainId || session.chainId === transfer.chainId);
  return free || supersedable(session, transfer) ? claim.sessionId : null;
}

/** The session whose unique amount the transfer is, whatever changed since, when no share counts (rule 2). */
export function amountAsker(snapshot: TransferSnapshot): string | null {
  const { claim, transfer } = snapshot;
  if (!claim || !claimTaken(claim, transfer) || amountShared(snapshot)) return null;
  return claim.sessionId;
}

/** The session a transfer nobody is paid by is reserved for: the one its scan recorded, else the asker. */
export function amountClaimant(snapshot: TransferSnapshot): string | null {
  return snapshot.reservedFor ?? amountAsker(snapshot);
}

/** The sessions asking for a shared amount (the sharers, and the holder whose claim covers the block); else none. */
export function amountContenders(snapshot: TransferSnapshot): string[] {
  const sharers = snapshot.shares.filter((share) => shareCounts(share, snapshot.transfer)).map((s) => s.sessionId);
  if (sharers.length === 0) return [];
  const { claim } = snapshot;
  const holder = claim && claimCovers(claim, snapshot.transfer) ? [claim.sessionId] : [];
  return [...new Set([...sharers, ...holder])];
}

/** A transfer no session is paid by may be bound only by the sessions asking for it, or by anyone if none does. */
export function mayBindUnowned(snapshot: TransferSnapshot, sessionId: string): boolean {
  const contenders = amountContenders(snapshot);
  if (contenders.length > 0) return contenders.includes(sessionId);
  const claimant = amountClaimant(snapshot);
  return claimant === null || claimant === sessionId;
}
