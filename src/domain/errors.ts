/**
 * The one error family of the domain. Transports map `code` to their own
 * status once (src/rest/error-handler.ts, src/graphql/errors.ts); a new code
 * that is not mapped there fails to compile.
 *
 * - `invalid`       the input breaks a rule (REST 400)
 * - `not_found`     the thing asked for does not exist (404)
 * - `conflict`      the request clashes with the current state (409)
 * - `unprocessable` well-formed, but the organisation cannot do it yet, e.g. no wallet (422)
 * - `unauthorised`  missing or wrong credentials (401)
 * - `forbidden`     signed in, but the role does not allow it (403, docs/dashboard.md#roles)
 * - `unavailable`   a dependency (rates) cannot serve it right now (503)
 * - `rate_limited`  the caller is over a rate limit; retry later (429, src/domain/throttle.ts)
 * - `gone`          it existed but is no longer offered, e.g. an inactive or expired payment link (410)
 */
export type DomainErrorCode =
  | 'invalid'
  | 'not_found'
  | 'conflict'
  | 'unprocessable'
  | 'unauthorised'
  | 'forbidden'
  | 'unavailable'
  | 'rate_limited'
  | 'gone';

export class DomainError extends Error {
  /** Messages meant for the caller; `invalid` may carry several, one per problem. */
  readonly messages: readonly string[];

  constructor(
    readonly code: DomainErrorCode,
    message: string | readonly string[],
  ) {
    const messages = typeof message === 'string' ? [message] : message;
    super(messages.join('; '));
    this.name = 'DomainError';
    this.messages = messages;
  }
}

export const invalid = (message: string | readonly string[]) => new DomainError('invalid', message);
export const notFound = (message: string) => new DomainError('not_found', message);
export const conflict = (message: string) => new DomainError('conflict', message);
export const unprocessable = (message: string) => new DomainError('unprocessable', message);
export const unauthorised = (message: string) => new DomainError('unauthorised', message);
export const forbidden = (message: string) => new DomainError('forbidden', message);
export const unavailable = (message: string) => new DomainError('unavailable', message);
export const gone = (message: string) => new DomainError('gone', message);
