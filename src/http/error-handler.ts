import type { ErrorRequestHandler, RequestHandler } from 'express';
import { DomainError, type DomainErrorCode } from '../domain/shared/errors.js';
import { RateLimitedError } from '../domain/organisations/throttle.js';
import {
  DATABASE_RETRY_AFTER_SECONDS,
  DATABASE_UNAVAILABLE_MESSAGE,
  isDatabaseUnavailable,
} from '../db/database-errors.js';
import { codeOfStatus, errorBody, HttpError, type ErrorBody } from './http-error.js';

/** The one mapping of domain error codes to HTTP statuses; a new code that is missing here fails to compile. */
export const STATUS_BY_CODE: Record<DomainErrorCode, number> = {
  invalid: 400,
  unauthorised: 401,
  forbidden: 403,
  not_found: 404,
  conflict: 409,
  unprocessable: 422,
  unavailable: 503,
  rate_limited: 429,
  gone: 410,
};

/** What an error is answered with: status, extra headers and the error body (docs/api/rest.md#errors). */
export interface RestErrorAnswer {
  readonly status: number;
  readonly headers: Readonly<Record<string, string>>;
  readonly body: ErrorBody;
  /** Not a refusal Kassa meant: logged, answered 500 without internals. */
  readonly unexpected: boolean;
}

/**
 * The one mapping of errors to REST answers: the Express error handler and the routes answered before Express
 * (src/rest/create-lane.ts) both send what this returns.
 */
export function restErrorAnswer(error: unknown): RestErrorAnswer {
  if (error instanceof DomainError) {
    const status = STATUS_BY_CODE[error.code];
    // Validation problems are always a list; other refusals one sentence.
    const message = error.code === 'invalid' ? error.messages : error.messages.join('; ');
    const headers: Record<string, string> =
      error instanceof RateLimitedError ? { 'Retry-After': String(error.retryAfterSeconds) } : {};
    return { status, headers, body: errorBody(status, message, error.reason), unexpected: false };
  }
  if (error instanceof HttpError) {
    return {
      status: error.statusCode,
      headers: error.headers,
      body: errorBody(error.statusCode, error.body, error.code),
      unexpected: false,
    };
  }
  const status = bodyParserStatus(error);
  if (status)
    return {
      status: status.code,
      headers: {},
      body: errorBody(status.code, status.message, codeOfStatus(status.code)),
      unexpected: false,
    };
  // Logged as unexpected (an operator should see it), answered as what it is: the database is away, retry.
  if (isDatabaseUnavailable(error))
    return {
      status: 503,
      headers: { 'Retry-After': String(DATABASE_RETRY_AFTER_SECONDS) },
      body: errorBody(503, DATABASE_UNAVAILABLE_MESSAGE, 'unavailable'),
      unexpected: true,
    };
  return {
    status: 500,
    headers: {},
    body: errorBody(500, 'Internal server error', 'internal_error'),
    unexpected: true,
  };
}

/**
 * Every error leaves as the error body (docs/api/rest.md#errors); anything unexpected is a logged 500 without
 * internals.
 */
export const errorHandler: ErrorRequestHandler = (error, req, res, _next) => {
  if (res.headersSent) return;
  const answer = restErrorAnswer(error);
  if (answer.unexpected) req.log?.error({ err: error }, 'unhandled error');
  res.set(answer.headers).status(answer.status).json(answer.body);
};

/** Unknown routes get the spec's error body too. */
export const notFoundHandler: RequestHandler = (req, res) => {
  res.status(404).json(errorBody(404, `Cannot ${req.method} ${req.path}`));
};

/** Answers 405 for a known path with a method it does not serve. */
export function methodNotAllowed(allowed: readonly string[]): RequestHandler {
  return (req, _res, next) =>
    next(new HttpError(405, `Method ${req.method} is not allowed on ${req.path}`, { Allow: allowed.join(', ') }));
}

// body-parser (inside express.raw) raises these before our code runs.
function bodyParserStatus(error: unknown): { code: number; message: string } | null {
  // Express fails to decode a path parameter with bad percent-encoding.
  if (error instanceof URIError) return { code: 400, message: 'Malformed URL: the path is not valid percent-encoding' };
  const typed = error as { type?: string; status?: number; limit?: number };
  switch (typed?.type) {
    case 'entity.too.large':
      return {
        code: 413,
        message: `Request body is larger than the limit of ${Math.round((typed.limit ?? 0) / 1024)} KB`,
      };
    case 'request.aborted':
      return { code: 400, message: 'Request body was not received completely' };
    case 'encoding.unsupported':
    case 'charset.unsupported':
      return { code: 415, message: 'Unsupported body encoding: send UTF-8 JSON' };
    default:
      return typeof typed?.status === 'number' && typed.status >= 400 && typed.status < 500
        ? { code: typed.status, message: 'Request body could not be read' }
        : null;
  }
}
