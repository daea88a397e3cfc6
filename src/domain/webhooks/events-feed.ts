import type { DomainContext } from '../context.js';
import { invalid } from '../shared/errors.js';
import { decodeEventCursor, encodeEventCursor } from './event-cursor.js';
import { toEventEnvelope, type EventPage } from './webhook.views.js';

export const EVENTS_PAGE_DEFAULT = 50;
export const EVENTS_PAGE_MAX = 100;

/**
 * The events feed: the organisation's events after an opaque cursor, in order, only up to where no transaction in
 * flight can add an earlier one, so paging never skips an event.
 */
export async function listEvents(
  ctx: DomainContext,
  organisationId: string,
  query: { after?: string; limit?: number; sessionId?: string },
): Promise<EventPage> {
  const key = await ctx.store.webhooks.eventsCursorKey();
  const afterSeq = query.after === undefined ? 0n : decodeEventCursor(key, organisationId, query.after);
  if (afterSeq === undefined) throw invalid(['after must be a cursor returned as next_cursor']);
  const limit = query.limit ?? EVENTS_PAGE_DEFAULT;
  // The feed reads only up to the outbox horizon: move it over what has committed since (fanning
  // those events out, as the delivery round does), so a page is as fresh as the outbox allows.
  const { outboxGapSeconds, giveUpHours } = ctx.webhooks;
  await ctx.store.webhooks.fanOut({ gapSeconds: outboxGapSeconds, giveUpHours, batch: 1000 });
  const rows = await ctx.store.webhooks.listEvents({
    organisationId,
    afterSeq,
    limit: limit + 1,
    sessionId: query.sessionId,
  });
  const page = rows.slice(0, limit);
  const last = page[page.length - 1];
  return {
    data: page.map(toEventEnvelope),
    next_cursor: last ? encodeEventCursor(key, organisationId, last.seq) : (query.after ?? null),
    has_more: rows.length > limit,
  };
}
