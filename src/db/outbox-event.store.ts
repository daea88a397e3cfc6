import type { Prisma } from '../generated/prisma/client.js';

/** An outbox row as the session and refund transactions write it: the event with the change it reports. */
export interface OutboxEventRow {
  readonly id: string;
  readonly organisationId: string;
  readonly sessionId: string | null;
  readonly type: string;
  readonly payload: unknown;
  readonly createdAt: Date;
}

/** Writes the event into the outbox inside the caller's transaction, so it is sent only if the change commits. */
export async function appendOutboxEvent(tx: Prisma.TransactionClient, event: OutboxEventRow): Promise<void> {
  await tx.outboxEvent.create({
    data: {
      id: event.id,
      organisationId: event.organisationId,
      sessionId: event.sessionId,
      type: event.type,
      payload: event.payload as Prisma.InputJsonValue,
      createdAt: event.createdAt,
    },
  });
}
