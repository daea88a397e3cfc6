import { Kind, type OperationDefinitionNode } from 'graphql';
import type { CheckoutSession } from '../domain/sessions/checkout-session.js';
import { secondsUntilExpiry } from '../domain/sessions/checkout-page.js';
import { weakEtag } from '../http/weak-etag.js';
import type { CachedAnswer } from './cached-queries.js';

/** A kept answer's time left (src/graphql/cached-queries.ts): where it is in the text, and writing it again. */

/** What a kept answer sends: Apollo's headers, then Content-Length and ETag of `body` (as Express's res.send adds). */
export function headersFor(apolloHeaders: readonly string[], body: Buffer): string[] {
  return [...apolloHeaders, 'Content-Length', String(body.length), 'ETag', weakEtag(body)];
}

/**
 * A kept answer of one session with its `secondsUntilExpiry` values cut out (`parts`, one more than the values), to be
 * joined with the new count: about the answer's size, where a parsed copy would take several times that.
 */
export interface TimeTemplate {
  readonly parts: readonly string[];
  readonly apolloHeaders: readonly string[];
}

/** Put in place of each count to find where it goes in the text (JSON.stringify writes it quoted, as is). */
export const COUNT_MARK = 'kassa:seconds-until-expiry:c8f1';

/** The `secondsUntilExpiry` an answer read at `now` holds. */
export function countIn(session: CheckoutSession, now: Date): number {
  return secondsUntilExpiry(session, now);
}

/** Where an answer's `secondsUntilExpiry` values are: the session's key in `data`, and theirs under it. */
export interface TimeFields {
  readonly rootKey: string;
  readonly keys: readonly string[];
}

/**
 * The response keys of the `secondsUntilExpiry` fields under a lone `checkoutSession` field's key; undefined when the
 * selection asks more, or a fragment or directive may hide one or make it conditional.
 */
export function timeFields(operation: OperationDefinitionNode): TimeFields | undefined {
  const roots = operation.selectionSet.selections;
  const root = roots[0];
  if (roots.length !== 1 || root?.kind !== Kind.FIELD || root.directives?.length || !root.selectionSet)
    return undefined;
  const keys: string[] = [];
  for (const selection of root.selectionSet.selections) {
    if (selection.kind !== Kind.FIELD || selection.directives?.length) return undefined;
    if (selection.name.value === 'secondsUntilExpiry') keys.push(selection.alias?.value ?? selection.name.value);
  }
  return { rootKey: root.alias?.value ?? root.name.value, keys };
}

/**
 * The template of an answer whose time left can be written in without Apollo: exactly JSON.stringify of its data (plus
 * Apollo's newline), every count the same. Otherwise undefined, and the answer is not served past the second.
 */
export function timeTemplate(
  { rootKey, keys }: TimeFields,
  body: string,
  apolloHeaders: readonly string[],
): TimeTemplate | undefined {
  if (body.includes(COUNT_MARK)) return undefined;
  let parsed: { data?: Record<string, unknown> };
  try {
    parsed = JSON.parse(body) as typeof parsed;
  } catch {
    return undefined;
  }
  const fields = parsed.data?.[rootKey] as Record<string, unknown> | null | undefined;
  if (typeof fields !== 'object' || fields === null) return undefined;
  const count = fields[keys[0]!];
  if (typeof count !== 'number' || !keys.every((key) => fields[key] === count)) return undefined;
  for (const key of keys) fields[key] = COUNT_MARK;
  const parts = `${JSON.stringify(parsed)}\n`.split(`"${COUNT_MARK}"`);
  // Joined with the count it had, the template must give back Apollo's very bytes.
  if (parts.length !== keys.length + 1 || parts.join(String(count)) !== body) return undefined;
  return { parts, apolloHeaders };
}

/**
 * Writes `answer` again for `now` from its template: the new time left, body, Content-Length and ETag. False when
 * the time is up (Apollo answers that, as the session's status may read expired).
 */
export function rewrite(answer: CachedAnswer, now: Date): boolean {
  const template = answer.template!;
  const session = answer.sessions[0]!.deref();
  if (session === undefined) return false;
  const left = secondsUntilExpiry(session, now);
  if (left <= 0) return false;
  const body = Buffer.from(template.parts.join(String(left)), 'utf8');
  answer.body = body;
  answer.sentHeaders = headersFor(template.apolloHeaders, body);
  answer.validUntil = timeLeftChangesAt([session], now);
  return true;
}

/** When `secondsUntilExpiry` of any of the sessions next changes (it counts whole seconds down to expiresAt). */
export function timeLeftChangesAt(sessions: readonly CheckoutSession[], now: Date): number {
  let until = Number.POSITIVE_INFINITY;
  for (const session of sessions) {
    const left = secondsUntilExpiry(session, now);
    // floor((expiresAt − now) / 1000) stays `left` up to and including expiresAt − left s.
    if (left > 0) until = Math.min(until, session.expiresAt.getTime() - left * 1000 + 1);
  }
  return until;
}
