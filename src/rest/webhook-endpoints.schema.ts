import { z } from 'zod';
import { EVENT_CURSOR_PATTERN } from '../domain/webhooks/event-cursor.js';
import { EVENTS_PAGE_DEFAULT, EVENTS_PAGE_MAX } from '../domain/webhooks/events-feed.js';
import { problemsOf } from '../domain/shared/input-problems.js';
import { webhookEndpointFields } from '../domain/webhooks/webhook-endpoint.schema.js';
import { isJsonObject } from '../json/decimal-json.js';

/**
 * The REST bodies and query of /webhook-endpoints and /events: the domain's fields with no other property allowed; also
 * the source of their OpenAPI schemas.
 */

const { url, events, enabled } = webhookEndpointFields;

export const createWebhookEndpointBodySchema = z
  .strictObject({
    url: url.describe(
      'Where events are POSTed: http(s), no credentials; must resolve to a public address in production.',
    ),
    events: events.optional().describe('Event types to deliver; omitted or empty = every type.'),
    enabled: enabled.optional().describe('Default true.'),
  })
  .meta({ title: 'CreateWebhookEndpointRequest' });

export const updateWebhookEndpointBodySchema = z
  .strictObject({ url: url.optional(), events: events.optional(), enabled: enabled.optional() })
  .meta({ title: 'UpdateWebhookEndpointRequest' });

const limitProblem = `must be an integer from 1 to ${EVENTS_PAGE_MAX}`;

export const listEventsQuerySchema = z.strictObject({
  after: z
    .string({ error: 'must be a cursor returned as next_cursor' })
    .regex(EVENT_CURSOR_PATTERN, { error: 'must be a cursor returned as next_cursor' })
    .optional()
    .describe('Opaque cursor: next_cursor of the previous page.'),
  limit: z
    .string({ error: limitProblem })
    .regex(/^\d+$/, { error: limitProblem })
    .transform(Number)
    .pipe(
      z
        .number()
        .min(1, { error: 'must not be less than 1' })
        .max(EVENTS_PAGE_MAX, { error: `must not be greater than ${EVENTS_PAGE_MAX}` }),
    )
    .optional()
    .describe(`1 to ${EVENTS_PAGE_MAX}, default ${EVENTS_PAGE_DEFAULT}.`),
  session_id: z.uuid({ error: 'must be a UUID' }).optional().describe('Only the events of this checkout session.'),
});

export function parseBody<T extends z.ZodType>(schema: T, body: unknown): z.output<T> | { problems: string[] } {
  if (!isJsonObject(body)) return { problems: ['body must be a JSON object'] };
  const result = schema.safeParse(body);
  return result.success ? result.data : { problems: problemsOf(result.error) };
}
