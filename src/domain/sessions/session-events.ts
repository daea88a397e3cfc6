import { randomUUID } from 'node:crypto';
import { isTerminal, type CheckoutSession } from './checkout-session.js';
import { toMerchantView } from './checkout-session.views.js';
import type { DomainContext } from '../context.js';
import type { TxStore } from '../ports.js';
import type { OutboxEvent } from './session-ports.js';
import type { CheckoutEventType } from '../shared/event-types.js';
import { transition, type SessionEvent, type Transition } from './status-machine.js';

/** An outbox event carrying the merchant view of the session at this moment. */
export function outboxEvent(
  ctx: DomainContext,
  session: CheckoutSession,
  type: CheckoutEventType,
  at: Date,
): OutboxEvent {
  return {
    id: randomUUID(),
    organisationId: session.organisationId,
    sessionId: session.id,
    type,
    payload: toMerchantView(session, ctx.checkoutBaseUrl),
    createdAt: at,
  };
}

/**
 * Inserts one outbox row carrying the merchant view of the session at this moment; nothing
 * is sent here (the webhook worker fans the outbox out once the transaction commits).
 */
export async function appendOutboxEvent(
  ctx: DomainContext,
  tx: TxStore,
  session: CheckoutSession,
  type: CheckoutEventType,
  at: Date,
): Promise<void> {
  await tx.appendEvent(outboxEvent(ctx, session, type, at));
}

/**
 * Runs the status machine for one event on a session locked in `tx`; the session row, its history row and the events
 * are written in that transaction.
 */
export async function applySessionEvent(
  ctx: DomainContext,
  tx: TxStore,
  session: CheckoutSession,
  event: SessionEvent,
  now: Date,
): Promise<{ session: CheckoutSession; transition: Transition | null }> {
  const result = transition(session, event, now, { inflightGraceMinutes: ctx.inflightGraceMinutes });
  if (!result) return { session, transition: null };
  await tx.updateSession(session.id, { status: result.to, overpaid: result.overpaid, updatedAt: now });
  if (result.to !== result.from) {
    await tx.recordStatusChange({
      sessionId: session.id,
      from: result.from,
      to: result.to,
      cause: result.cause,
      at: now,
    });
    // A closed session is paid by no exact amount any more: its amounts are free for others once every
    // network is scanned past now (docs/payment-rules.md, rule 4).
    if (isTerminal(result.to)) await tx.releaseAmountClaims(session.id, now);
    // Reopened by a reorganisation (paid no more): the amount it was paid with exactly is its own again.
    else if (isTerminal(result.from)) await tx.reclaimExactAmounts(session.id, now);
  }
  const updated: CheckoutSession = {
    ...session,
    status: result.to,
    overpaid: result.overpaid,
    updatedAt: now,
  };
  for (const type of result.events) await appendOutboxEvent(ctx, tx, updated, type, now);
  return { session: updated, transition: result };
}
