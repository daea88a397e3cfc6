import { Prisma, type PrismaClient } from '../../generated/prisma/client.js';
import type { WebhookStore } from '../../domain/webhooks/webhook-ports.js';
import { installationSecret } from '../organisations/installation-secrets.js';
import { EVENT_COLUMNS, toEvent, type EventRow } from './webhook-rows.js';

type EventFeed = Pick<WebhookStore, 'findEvent' | 'listEvents' | 'eventsCursorKey'>;

/**
 * The events feed, reads only: a page stops at the outbox horizon (docs/api/webhooks.md#outbox-horizon), so paging
 * never steps over an event; the caller moves the horizon before reading.
 */
export function eventFeedStore(prisma: PrismaClient): EventFeed {
  return {
    eventsCursorKey: installationSecret(prisma, 'events_cursor'),

    async findEvent(id) {
      const rows = await prisma.$queryRaw<EventRow[]>`
        SELECT ${EVENT_COLUMNS} FROM outbox_events WHERE id = ${id}::uuid`;
      return rows[0] ? toEvent(rows[0]) : null;
    },

    async listEvents(query) {
      const [state] = await prisma.$queryRaw<Array<{ horizon_seq: bigint }>>`
        SELECT horizon_seq FROM webhook_dispatch_state WHERE id = 1`;
      const horizon = state?.horizon_seq ?? 0n;
      const bySession = query.sessionId ? Prisma.sql`AND session_id = ${query.sessionId}::uuid` : Prisma.empty;
      const rows = await prisma.$queryRaw<EventRow[]>`
        SELECT ${EVENT_COLUMNS} FROM outbox_events
        WHERE organisation_id = ${query.organisationId}::uuid AND seq > ${query.afterSeq} AND seq <= ${horizon}
          ${bySession}
        ORDER BY seq
        LIMIT ${query.limit}`;
      return rows.map(toEvent);
    },
  };
}
