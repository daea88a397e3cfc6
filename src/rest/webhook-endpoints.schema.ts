import { z } from 'zod';
import { WEBHOOK_EVENT_TYPES } from '../domain/webhook-endpoints.js';
import { webhookUrlProblems } from '../domain/webhook-url.js';
import { isJsonObject } from '../json/decimal-json.js';
import { describeIssue } from './create-checkout.schema.js';

/** The REST bodies and query of /webhook-endpoints and /events; also the source of their OpenAPI schemas. */

const required = (what: string) => (issue: { input?: unknown }) => (issue.input === undefined ? 'is required' : `must be ${what}`);

/** http(s), no credentials, a host (src/domain/webhook-url.ts); the SSRF address check runs later, in the domain. */
const url = z
  .string({ error: required('an http(s) URL') })
  .min(1, { error: 'must be an http(s) URL', abort: true })
  .max(2048, { error: 'must be at most 2048 characters', abort: true })
  .superRefine((value, context) => {
    for (const problem of webhookUrlProblems(value, 'url').problems) context.addIssue({ code: 'custom', message: problem.replace(/^url /, '') });
  });
/** Checked as an array first, so a non-array gets one message, not a length complaint as well. */
const events = z
  .custom<unknown[]>(Array.isArray, { error: required('an array of event types') })
  .pipe(
    z
      .array(z.enum(WEBHOOK_EVENT_TYPES, { error: `must be one of ${WEBHOOK_EVENT_TYPES.join(', ')}` }))
      .max(WEBHOOK_EVENT_TYPES.length * 2, { error: `must list at most ${WEBHOOK_EVENT_TYPES.length * 2} types` }),
  );
const enabled = z.boolean({ error: required('a boolean') });

export const createWebhookEndpointSchema = z.strictObject({
  url: url.describe('Where events are POSTed: http(s), no credentials; must resolve to a public address in production.'),
  events: events.optional().describe('Event types to deliver; omitted or empty = every type.'),
  enabled: enabled.optional().describe('Default true.'),
});

export const updateWebhookEndpointSchema = z.strictObject({
  url: url.optional(),
  events: events.optional(),
  enabled: enabled.optional(),
});

export const listEventsQuerySchema = z.strictObject({
  after: z.string({ error: 'must be a cursor returned as next_cursor' }).regex(/^\d{1,18}$/, { error: 'must be a cursor returned as next_cursor' }).optional().describe('Opaque cursor: next_cursor of the previous page.'),
  limit: z
    .string({ error: 'must be an integer from 1 to 100' })
    .regex(/^\d+$/, { error: 'must be an integer from 1 to 100' })
    .transform(Number)
    .pipe(z.number().min(1, { error: 'must not be less than 1' }).max(100, { error: 'must not be greater than 100' }))
    .optional()
    .describe('1 to 100, default 50.'),
  session_id: z.uuid({ error: 'must be a UUID' }).optional().describe('Only the events of this checkout session.'),
});

export function parseBody<T extends z.ZodType>(schema: T, body: unknown): z.output<T> | { problems: string[] } {
  if (!isJsonObject(body)) return { problems: ['body must be a JSON object'] };
  const result = schema.safeParse(body);
  return result.success ? result.data : { problems: result.error.issues.flatMap(describeIssue) };
}
