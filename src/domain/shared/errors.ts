import type { ReasonCode } from './reason-codes.js';

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

/** The reason a refusal of each kind carries when it names none more precise. */
export const DEFAULT_REASON: Record<DomainErrorCode, ReasonCode> = {
  invalid: 'validation_failed',
  not_found: 'not_found',
  conflict: 'conflict',
  unprocessable: 'unprocessable',
  unauthorised: 'unauthenticated',
  forbidden: 'forbidden',
  unavailable: 'unavailable',
  rate_limited: 'rate_limited',
  gone: 'gone',
};

export class DomainError extends Error {
  /** Messages meant for the caller; `invalid` may carry several, one per problem. */
  readonly messages: readonly string[];
  /** The stable code a client branches on (REST `code`, GraphQL `extensions.reason`). */
  readonly reason: ReasonCode;

  constructor(
    readonly code: DomainErrorCode,
    message: string | readonly string[],
    reason?: ReasonCode,
  ) {
    const messages = typeof message === 'string' ? [message] : message;
    super(messages.join('; '));
    this.name = 'DomainError';
    this.messages = messages;
    this.reason = reason ?? DEFAULT_REASON[code];
  }
}

export const invalid = (message: string | readonly string[], reason?: ReasonCode) =>
  new DomainError('invalid', message, reason);
export const notFound = (message: string, reason?: ReasonCode) => new DomainError('not_found', message, reason);
export const conflict = (message: string, reason?: ReasonCode) => new DomainError('conflict', message, reason);
export const unprocessable = (message: string, reason?: ReasonCode) =>
  new DomainError('unprocessable', message, reason);
export const unauthorised = (message: string, reason?: ReasonCode) => new DomainError('unauthorised', message, reason);
export const forbidden = (message: string, reason?: ReasonCode) => new DomainError('forbidden', message, reason);
export const unavailable = (message: string, reason?: ReasonCode) => new DomainError('unavailable', message, reason);
export const gone = (message: string, reason?: ReasonCode) => new DomainError('gone', message, reason);
