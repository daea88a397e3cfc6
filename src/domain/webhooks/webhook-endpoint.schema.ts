import { z } from 'zod';
import type { DomainContext } from '../context.js';
import { DomainError, invalid } from '../shared/errors.js';
import { WEBHOOK_EVENT_TYPES, type WebhookEventType } from '../shared/event-types.js';
import { describeIssue, required } from '../shared/input-problems.js';
import { resolveWebhookHost, webhookUrlProblems } from './webhook-url.js';

/**
 * What a webhook endpoint is registered or changed with (docs/api/webhooks.md#webhooks): the one source of its rules
 * and messages, for the CLI and REST alike.
 */

/**
 * http(s), no credentials, a host (src/domain/webhooks/webhook-url.ts); the address rule needs config and DNS (below).
 */
const url = z
  .string({ error: required('an http(s) URL') })
  .min(1, { error: 'must be an http(s) URL', abort: true })
  .max(2048, { error: 'must be at most 2048 characters', abort: true })
  .superRefine((value, context) => {
    for (const problem of webhookUrlProblems(value, 'url').problems) {
      context.addIssue({ code: 'custom', message: problem.replace(/^url /, '') });
    }
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

/** The fields, in the order their problems are listed. */
export const webhookEndpointFields = { url, events, enabled };

export const createWebhookEndpointSchema = z.object({ url, events: events.optional(), enabled: enabled.optional() });
export const updateWebhookEndpointSchema = z.object({
  url: url.optional(),
  events: events.optional(),
  enabled: enabled.optional(),
});

/** An endpoint's fields as received; `checkWebhookEndpointInput` checks them. */
export interface WebhookEndpointInput {
  readonly url?: unknown;
  readonly events?: unknown;
  readonly enabled?: unknown;
}

export interface CheckedWebhookEndpointInput {
  /** Normalised by URL parsing. */
  readonly url?: string;
  /** Without repeats. */
  readonly events?: readonly WebhookEventType[];
  readonly enabled?: boolean;
}

export const HTTPS_ONLY_PROBLEM =
  'url must use https in production (events and their signatures must not travel in clear)';

/**
 * The configuration-dependent rules of a syntactically fine URL (https only in production, then the SSRF rule) as
 * messages; [] when it passes or when the syntax check already failed.
 */
export async function webhookUrlAddressProblems(ctx: DomainContext, value: unknown): Promise<string[]> {
  const { url, problems } = webhookUrlProblems(value);
  if (!url || problems.length > 0) return [];
  if (ctx.webhooks.httpsOnly && url.protocol !== 'https:') return [HTTPS_ONLY_PROBLEM];
  try {
    await resolveWebhookHost(url, ctx.webhooks.allowPrivate, ctx.resolveHost);
    return [];
  } catch (error) {
    if (error instanceof DomainError && error.code === 'invalid') return [...error.messages];
    throw error;
  }
}

/**
 * Checks the fields with `schema` (create or update) and a given URL's address too; throws
 * `invalid` with every problem: the URL's first (its syntax, then its address), then the others.
 */
export async function checkWebhookEndpointInput(
  ctx: DomainContext,
  schema: typeof createWebhookEndpointSchema | typeof updateWebhookEndpointSchema,
  input: WebhookEndpointInput,
): Promise<CheckedWebhookEndpointInput> {
  const result = schema.safeParse(input);
  const issues = result.success ? [] : result.error.issues;
  const urlProblems = issues.filter((issue) => issue.path[0] === 'url').flatMap(describeIssue);
  const otherProblems = issues.filter((issue) => issue.path[0] !== 'url').flatMap(describeIssue);
  const addressProblems =
    input.url === undefined || urlProblems.length > 0 ? [] : await webhookUrlAddressProblems(ctx, input.url);
  const problems = [...urlProblems, ...addressProblems, ...otherProblems];
  if (!result.success || problems.length > 0) throw invalid(problems);
  const { url: given, events: types, enabled: on } = result.data;
  return {
    ...(given !== undefined ? { url: new URL(given).toString() } : {}),
    ...(types !== undefined ? { events: [...new Set(types)] } : {}),
    ...(on !== undefined ? { enabled: on } : {}),
  };
}
