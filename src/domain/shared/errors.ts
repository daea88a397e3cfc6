import type { ReasonCode } from './reason-codes.js';

/**
 * The domain's one error family; each transport maps `code` to its status once (src/http/error-handler.ts,
 * src/graphql/errors.ts), and an unmapped code fails to compile.
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
