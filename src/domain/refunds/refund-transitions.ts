import type { DomainContext } from '../context.js';
import { conflict, gone, invalid, notFound } from '../shared/errors.js';
import type { RefundEventType } from '../shared/event-types.js';
import { acceptDestination } from './refund-address.js';
import { canMove, CANCELLABLE_STATUSES, type DestinationProof, type Refund, type RefundStatus } from './refund.js';
import type { RefundPatch, RefundTx } from './refund-ports.js';
import { refundEvent } from './refund.views.js';

/**
 * Every change of a refund (docs/api/refunds.md#states): the row, a history row and an outbox event in one
 * transaction. The chain watcher calls recordSent/recordMined/confirmRefund/revertToSent/failRefund.
 */

/** The event each status entered raises. */
const EVENT_OF: Record<RefundStatus, RefundEventType | null> = {
  awaiting_destination: 'refund.created',
  ready: 'refund.destination_submitted',
  sent: 'refund.sent',
  confirmed: 'refund.confirmed',
  failed: 'refund.failed',
  cancelled: 'refund.cancelled',
  expired: 'refund.expired',
};

function applyPatch(refund: Refund, patch: RefundPatch): Refund {
  return {
    ...refund,
    ...(patch.status !== undefined ? { status: patch.status } : {}),
    ...(patch.destination !== undefined ? { destination: patch.destination } : {}),
    ...(patch.destinationSource !== undefined ? { destinationSource: patch.destinationSource } : {}),
    ...(patch.destinationAt !== undefined ? { destinationAt: patch.destinationAt } : {}),
    ...(patch.proof !== undefined ? { proof: patch.proof } : {}),
    ...(patch.failureReason !== undefined ? { failureReason: patch.failureReason } : {}),
    transfer: { ...refund.transfer, ...(patch.transfer ?? {}) },
    updatedAt: patch.updatedAt,
  };
}

/**
 * Writes `patch` to a refund locked in `tx`; when it changes the status, also the history row and the status's event.
 * Refuses (409 refund_state) a change the state machine does not allow.
 */
export async function moveRefund(
  ctx: DomainContext,
  tx: RefundTx,
  refund: Refund,
  patch: RefundPatch,
  cause: string,
): Promise<Refund> {
  const to = patch.status ?? refund.status;
  if (to !== refund.status && !canMove(refund.status, to))
    throw conflict(`Refund ${refund.id} is ${refund.status} and cannot become ${to}`, 'refund_state');
  await tx.updateRefund(refund.id, patch);
  const updated = applyPatch(refund, patch);
  if (to !== refund.status) {
    await tx.recordStatusChange({ refundId: refund.id, from: refund.status, to, cause, at: patch.updatedAt });
    const type = EVENT_OF[to];
    if (type) await tx.appendEvent(refundEvent(updated, type, patch.updatedAt, ctx.checkoutBaseUrl));
  }
  return updated;
}

async function withLockedRefund<T>(
  ctx: DomainContext,
  refundId: string,
  work: (tx: RefundTx, refund: Refund) => Promise<T>,
): Promise<T> {
  return ctx.store.refunds.transaction(async (tx) => {
    const refund = await tx.lockRefund(refundId);
    if (!refund) throw notFound(`Refund ${refundId} not found`);
    return work(tx, refund);
  });
}

export interface SubmittedDestination {
  readonly address: string;
  /** `claim_signed` needs a proof whose signer paid the session (checked by the caller, r2's claim route). */
  readonly source: 'claim' | 'claim_signed';
  readonly proof?: DestinationProof;
}

/**
 * The payer's address through the claim link: awaiting_destination → ready, once. Refuses a used link (409
 * claim_used), an expired one (410 claim_expired) and an address not valid on the refund's network (400).
 */
export async function submitDestination(
  ctx: DomainContext,
  refundId: string,
  submitted: SubmittedDestination,
): Promise<Refund> {
  if (submitted.source === 'claim_signed' && !submitted.proof)
    throw invalid(['a claim_signed destination needs its proof']);
  return withLockedRefund(ctx, refundId, async (tx, refund) => {
    const now = ctx.clock();
    if (refund.claimExpiresAt === null || refund.destination !== null)
      throw conflict('This refund link already took an address', 'claim_used');
    if (refund.status !== 'awaiting_destination')
      throw refund.status === 'expired'
        ? gone('This refund link has expired', 'claim_expired')
        : conflict(`This refund is ${refund.status} and takes no address`, 'refund_state');
    if (refund.claimExpiresAt.getTime() <= now.getTime()) throw gone('This refund link has expired', 'claim_expired');
    const destination = await acceptDestination(tx, refund.organisationId, refund.network, submitted.address);
    const proof = submitted.source === 'claim_signed' ? (submitted.proof ?? null) : null;
    return moveRefund(
      ctx,
      tx,
      refund,
      {
        status: 'ready',
        destination,
        destinationSource: submitted.source,
        destinationAt: now,
        proof,
        updatedAt: now,
      },
      submitted.source,
    );
  });
}

export interface SentTransfer {
  readonly txHash: string;
  readonly sentFrom?: string | null;
}

/**
 * The merchant's transfer was broadcast (reported by the CLI or the dashboard): ready → sent. The same hash again is
 * a no-op; another hash on a sent refund is a 409 refund_state.
 */
export async function recordSent(ctx: DomainContext, refundId: string, sent: SentTransfer): Promise<Refund> {
  const txHash = sent.txHash.toLowerCase();
  return withLockedRefund(ctx, refundId, async (tx, refund) => {
    if (refund.transfer.txHash === txHash) return refund;
    if (refund.status !== 'ready')
      throw conflict(`Refund ${refund.id} is ${refund.status}: it takes no transaction now`, 'refund_state');
    const now = ctx.clock();
    const transfer = { txHash, sentFrom: sent.sentFrom?.toLowerCase() ?? null, sentAt: now };
    return moveRefund(ctx, tx, refund, { status: 'sent', transfer, updatedAt: now }, 'reported');
  });
}

export interface MinedTransfer {
  readonly txHash: string;
  readonly sentFrom: string | null;
  readonly blockNumber: bigint;
  readonly blockHash: string;
  /** The Transfer log's index; -1 for a native-coin transfer. */
  readonly logIndex: number;
  readonly minedAt: Date;
  readonly confirmations: number;
}

/**
 * The watcher saw the refund's transfer (exact asset, amount and destination) mined: ready|sent → sent with its block;
 * a refund already sent keeps its status and gains the block.
 */
export async function recordMined(ctx: DomainContext, refundId: string, mined: MinedTransfer): Promise<Refund> {
  return withLockedRefund(ctx, refundId, async (tx, refund) => {
    if (refund.status !== 'ready' && refund.status !== 'sent')
      throw conflict(`Refund ${refund.id} is ${refund.status}: it takes no transfer now`, 'refund_state');
    const now = ctx.clock();
    const transfer = {
      txHash: mined.txHash.toLowerCase(),
      sentFrom: mined.sentFrom?.toLowerCase() ?? refund.transfer.sentFrom,
      sentAt: refund.transfer.sentAt ?? mined.minedAt,
      blockNumber: mined.blockNumber,
      blockHash: mined.blockHash.toLowerCase(),
      logIndex: mined.logIndex,
      minedAt: mined.minedAt,
      confirmations: mined.confirmations,
    };
    return moveRefund(ctx, tx, refund, { status: 'sent', transfer, updatedAt: now }, 'mined');
  });
}

/** Enough confirmations: sent → confirmed. */
export async function confirmRefund(ctx: DomainContext, refundId: string, confirmations: number): Promise<Refund> {
  return withLockedRefund(ctx, refundId, async (tx, refund) => {
    if (refund.status === 'confirmed') return refund;
    if (refund.transfer.blockNumber === null)
      throw conflict(`Refund ${refund.id} has no mined transfer to confirm`, 'refund_state');
    const now = ctx.clock();
    return moveRefund(
      ctx,
      tx,
      refund,
      { status: 'confirmed', transfer: { confirmations, confirmedAt: now }, updatedAt: now },
      'confirmed',
    );
  });
}

/** A reorganisation removed the mined transfer: back to sent, without its block (the watcher looks again). */
export async function revertToSent(ctx: DomainContext, refundId: string, cause = 'reorganisation'): Promise<Refund> {
  return withLockedRefund(ctx, refundId, async (tx, refund) => {
    if (refund.status !== 'sent' && refund.status !== 'confirmed')
      throw conflict(`Refund ${refund.id} is ${refund.status}: nothing to revert`, 'refund_state');
    const now = ctx.clock();
    const transfer = {
      blockNumber: null,
      blockHash: null,
      logIndex: null,
      minedAt: null,
      confirmations: 0,
      confirmedAt: null,
    };
    return moveRefund(ctx, tx, refund, { status: 'sent', transfer, updatedAt: now }, cause);
  });
}

/** The transfer reverted or was dropped: sent → failed; its amount is free for another refund. */
export async function failRefund(ctx: DomainContext, refundId: string, reason: string): Promise<Refund> {
  return withLockedRefund(ctx, refundId, async (tx, refund) => {
    const now = ctx.clock();
    return moveRefund(ctx, tx, refund, { status: 'failed', failureReason: reason, updatedAt: now }, reason);
  });
}

/** The merchant's cancel, only before the transfer is sent (409 refund_not_cancellable after). */
export async function cancelRefund(ctx: DomainContext, organisationId: string, refundId: string): Promise<Refund> {
  return withLockedRefund(ctx, refundId, async (tx, refund) => {
    if (refund.organisationId !== organisationId) throw notFound(`Refund ${refundId} not found`);
    if (refund.status === 'cancelled') return refund;
    if (!CANCELLABLE_STATUSES.includes(refund.status))
      throw conflict(
        `Refund ${refund.id} is ${refund.status}: only a refund awaiting_destination or ready can be cancelled`,
        'refund_not_cancellable',
      );
    const now = ctx.clock();
    return moveRefund(ctx, tx, refund, { status: 'cancelled', updatedAt: now }, 'cancelled by the merchant');
  });
}

export const REFUND_EXPIRY_BATCH = 100;

/** Expires refunds whose claim link ran out unused; safe with several instances (SKIP LOCKED). Returns how many. */
export async function expireDueRefunds(ctx: DomainContext, limit = REFUND_EXPIRY_BATCH): Promise<number> {
  const now = ctx.clock();
  return ctx.store.refunds.lockDueForExpiry(now, limit, async (tx, refund) => {
    await moveRefund(ctx, tx, refund, { status: 'expired', updatedAt: now }, 'claim link expired');
  });
}
