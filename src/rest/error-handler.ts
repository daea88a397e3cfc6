import type { ErrorRequestHandler, RequestHandler } from 'express';
import { DomainError, type DomainErrorCode } from '../domain/errors.js';
import { RateLimitedError } from '../domain/throttle.js';
import { errorBody, HttpError } from './http-error.js';

/** The one mapping of domain error codes to HTTP statuses; a new code that is missing here fails to compile. */
export const STATUS_BY_CODE: Record<DomainErrorCode, number> = {
  invalid: 400,
  unauthorised: 401,
  not_found: 404,
  conflict: 409,
  unprocessable: 422,
  unavailable: 503,
  rate_limited: 429,
  gone: 410,
};

/**
 * Every error leaves as the error body (docs/api/rest.md#errors); anything unexpected is a logged 500 without
 * internals.
 */
export const errorHandler: ErrorRequestHandler = (error, req, res, _next) => {
  if (res.headersSent) return;
  if (error instanceof DomainError) {
    const status = STATUS_BY_CODE[error.code];
    // Validation problems are always a list; other refusals one sentence.
    const message = error.code === 'invalid' ? error.messages : error.messages.join('; ');
    if (error instanceof RateLimitedError) res.set('Retry-After', String(error.retryAfterSeconds));
    res.status(status).json(errorBody(status, message));
    return;
  }
  if (error instanceof HttpError) {
    res.set(error.headers).status(error.statusCode).json(errorBody(error.statusCode, error.body));
    return;
  }
  const status = bodyParserStatus(error);
  if (status) {
    res.status(status.code).json(errorBody(status.code, status.message));
    return;
  }
  req.log?.error({ err: error }, 'unhandled error');
  res.status(500).json(errorBody(500, 'Internal server error'));
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
