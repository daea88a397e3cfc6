import { GraphQLError, type GraphQLFormattedError } from 'graphql';
import type { ApolloServerPlugin, BaseContext } from '@apollo/server';
import { unwrapResolverError } from '@apollo/server/errors';
import { DomainError, type DomainErrorCode } from '../domain/shared/errors.js';
import { RateLimitedError } from '../domain/organisations/throttle.js';
import { DATABASE_UNAVAILABLE_MESSAGE, isDatabaseUnavailable } from '../db/database-errors.js';

/**
 * The one mapping of domain error codes to GraphQL `extensions.code` (the REST
 * twin is STATUS_BY_CODE in src/rest/error-handler.ts); a new domain code that
 * is missing here fails to compile.
 *
 * - unprocessable → CONFLICT: the request is well-formed but clashes with the
 *   organisation's state (REST 422). No payer operation raises it today.
 * - unavailable → SERVICE_UNAVAILABLE: a dependency is down and a retry may
 *   succeed (REST 503); INTERNAL_SERVER_ERROR is kept for our own failures.
 * - rate_limited → TOO_MANY_REQUESTS (REST 429), with `extensions.retryAfterSeconds`;
 *   over HTTP the answer is 429 with Retry-After (src/graphql/throttle.ts).
 * - gone → GONE (REST 410): a payment link that is inactive or expired.
 */
export const GRAPHQL_CODE_BY_DOMAIN_CODE: Record<DomainErrorCode, string> = {
  invalid: 'BAD_USER_INPUT',
  not_found: 'NOT_FOUND',
  conflict: 'CONFLICT',
  unprocessable: 'CONFLICT',
  unauthorised: 'UNAUTHENTICATED',
  forbidden: 'FORBIDDEN',
  unavailable: 'SERVICE_UNAVAILABLE',
  rate_limited: 'TOO_MANY_REQUESTS',
  gone: 'GONE',
};

/**
 * A domain refusal as a GraphQL error with REST's wording: `message` is the
 * REST message (several problems joined by "; "), and `extensions.messages`
 * lists them one by one, exactly as the REST 400 body's `message` array does;
 * `extensions.reason` is REST's `code` (docs/api/graphql.md#errors).
 */
export function toGraphqlError(error: DomainError): GraphQLError {
  const retry = error instanceof RateLimitedError ? { retryAfterSeconds: error.retryAfterSeconds } : {};
  return new GraphQLError(error.message, {
    extensions: {
      code: GRAPHQL_CODE_BY_DOMAIN_CODE[error.code],
      reason: error.reason,
      messages: [...error.messages],
      ...retry,
    },
  });
}

/**
 * The Apollo plugin that makes a rate-limit refusal in any field answer HTTP 429 with
 * Retry-After: the fields that ran keep their data, the whole HTTP answer says 429. (Over a
 * WebSocket there is no status: the error's `retryAfterSeconds` says it.) Runs before the
 * status is settled, so a status an error asks for itself would still win.
 */
export const rateLimitedStatus: ApolloServerPlugin<BaseContext> = {
  async requestDidStart() {
    return {
      async didEncounterErrors({ errors, response }) {
        for (const error of errors) {
          const original = unwrapResolverError(error);
          if (!(original instanceof RateLimitedError)) continue;
          response.http.status = 429;
          response.http.headers.set('retry-after', String(original.retryAfterSeconds));
        }
      },
    };
  },
};

/**
 * A domain refusal raised in any resolver or subscription, as the caller sees it: the code
 * and messages of toGraphqlError in place of Apollo's INTERNAL_SERVER_ERROR. This is where
 * every resolver's domain errors are mapped, once; what else the formatted error carries
 * (a stack trace in development) stays.
 */
function withDomainCode(formatted: GraphQLFormattedError, error: DomainError): GraphQLFormattedError {
  const { code: _unmapped, ...others } = formatted.extensions ?? {};
  const mapped = toGraphqlError(error);
  return { ...formatted, message: mapped.message, extensions: { ...mapped.extensions, ...others } };
}

/** The codes a caller may see with their own message; anything else is masked outside development. */
const CALLER_CODES = new Set([
  ...Object.values(GRAPHQL_CODE_BY_DOMAIN_CODE),
  'GRAPHQL_PARSE_FAILED',
  'GRAPHQL_VALIDATION_FAILED',
  'BAD_REQUEST',
  'PERSISTED_QUERY_NOT_FOUND',
  'PERSISTED_QUERY_NOT_SUPPORTED',
  'OPERATION_RESOLUTION_FAILURE',
  'PAYLOAD_TOO_LARGE',
  'TOO_MANY_SUBSCRIPTIONS',
]);

/** GraphQL's own wording of the token limit (a typo, "more that", in graphql 16), said plainly. */
const TOKEN_LIMIT = /^Syntax Error: Document contains more th(?:at|an) (\d+) tokens\. Parsing aborted\.$/;

export interface FormatErrorOptions {
  /** Development shows the original message and Apollo's stack trace of unexpected errors. */
  readonly development: boolean;
  /** Where unexpected errors are logged (with their stack) before being masked. */
  readonly logError?: (error: unknown) => void;
}

/**
 * Apollo's `formatError` and the WebSocket server's: domain refusals get their code
 * (withDomainCode); errors we raised on purpose go out as they are; anything unexpected (a
 * driver error, a bug) becomes INTERNAL_SERVER_ERROR "Internal server error" and is logged
 * instead, except in development, where it keeps its message. No answer carries a stack
 * trace, in any mode (as no REST answer does): the log has it.
 */
export function formatGraphqlError(
  formatted: GraphQLFormattedError,
  error: unknown,
  options: FormatErrorOptions,
): GraphQLFormattedError {
  if (formatted.extensions && 'http' in formatted.extensions) {
    // An error's HTTP status request: Apollo removes it itself, a WebSocket answer must not carry it.
    const { http: _http, ...extensions } = formatted.extensions;
    formatted = { ...formatted, extensions };
  }
  const original = unwrapResolverError(error);
  if (original instanceof DomainError) formatted = withDomainCode(formatted, original);
  const code = typeof formatted.extensions?.code === 'string' ? formatted.extensions.code : undefined;
  const intended = original instanceof GraphQLError || (code !== undefined && CALLER_CODES.has(code));
  if (intended && code !== 'INTERNAL_SERVER_ERROR') {
    if (code === 'GRAPHQL_PARSE_FAILED')
      formatted = {
        ...formatted,
        message: formatted.message.replace(TOKEN_LIMIT, 'Syntax Error: Token limit of $1 exceeded.'),
      };
    return withoutStack(formatted);
  }
  options.logError?.(original);
  if (isDatabaseUnavailable(original))
    return {
      message: DATABASE_UNAVAILABLE_MESSAGE,
      ...(formatted.locations ? { locations: formatted.locations } : {}),
      ...(formatted.path ? { path: formatted.path } : {}),
      extensions: { code: 'SERVICE_UNAVAILABLE' },
    };
  if (options.development) return withoutStack(formatted);
  return {
    message: 'Internal server error',
    ...(formatted.locations ? { locations: formatted.locations } : {}),
    ...(formatted.path ? { path: formatted.path } : {}),
    extensions: { code: 'INTERNAL_SERVER_ERROR' },
  };
}

function withoutStack(formatted: GraphQLFormattedError): GraphQLFormattedError {
  const { stacktrace: _stack, exception: _exception, ...extensions } = formatted.extensions ?? {};
  return { ...formatted, extensions };
}
