import { GraphQLError, type GraphQLFormattedError } from 'graphql';
import type { ApolloServerPlugin, BaseContext } from '@apollo/server';
import { unwrapResolverError } from '@apollo/server/errors';
import { DomainError, type DomainErrorCode } from '../domain/shared/errors.js';
import { RateLimitedError } from '../domain/organisations/throttle.js';
import { DATABASE_UNAVAILABLE_MESSAGE, isDatabaseUnavailable } from '../db/database-errors.js';

/**
 * The one mapping of domain error codes to GraphQL `extensions.code` (REST's twin: STATUS_BY_CODE in
 * src/http/error-handler.ts); a domain code missing here fails to compile (docs/api/graphql.md#errors).
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
 * A domain refusal as a GraphQL error with REST's wording: `message` joins the problems with "; ",
 * `extensions.messages` lists them, and `extensions.reason` is REST's `code` (docs/api/graphql.md#errors).
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
 * Makes a rate-limit refusal in any field answer HTTP 429 with Retry-After (the fields that ran keep their data; over a
 * WebSocket, `retryAfterSeconds` says it). Runs before the status is settled, so a status an error asks for still wins.
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
 * A domain refusal raised in any resolver or subscription, with toGraphqlError's code and messages in place of Apollo's
 * INTERNAL_SERVER_ERROR: every resolver's domain errors are mapped here, once.
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
 * Apollo's and the WebSocket server's `formatError`: domain refusals get their code; anything unexpected becomes a
 * logged "Internal server error" (its message kept in development). No answer carries a stack trace.
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
