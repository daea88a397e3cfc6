import { randomUUID } from 'node:crypto';
import { IncomingMessage, type ServerResponse } from 'node:http';
import type { RequestHandler } from 'express';
import { redactMisplacedSecret, type Logger } from './logging.js';

declare module 'node:http' {
  interface IncomingMessage {
    /** The request id (X-Request-Id): given by the client when it is a safe token, else generated. */
    id: string;
    /** The logger of this request: every line carries its id. */
    log: Logger;
  }
}

const REQUEST_ID = /^[\w.:-]{1,128}$/;
const APP_LOGGER = Symbol('kassa.appLogger');
const CHILD_LOGGER = Symbol('kassa.requestLogger');

type LoggedRequest = IncomingMessage & { [APP_LOGGER]?: Logger; [CHILD_LOGGER]?: Logger };

// `req.log` is made on first use, from the app's logger and the request's id: one getter for every request instead
// of a property defined on each (docs/benchmarks.md). A request no app has logged has none.
Object.defineProperty(IncomingMessage.prototype, 'log', {
  configurable: true,
  get(this: LoggedRequest): Logger | undefined {
    const logger = this[APP_LOGGER];
    return logger && (this[CHILD_LOGGER] ??= logger.child({ reqId: this.id }));
  },
});

/**
 * One JSON line per request when it ends (warn for 4xx, error for 5xx), under its X-Request-Id. A child logger is made
 * only when something logs through `req.log`, and nothing is serialised for a level that is off (docs/benchmarks.md).
 */
export function requestLog(logger: Logger): RequestHandler {
  return (req, res, next) => {
    logRequest(logger, req, res);
    next();
  };
}

/** What requestLog does for one request; also used where a request is answered outside Express. */
export function logRequest(logger: Logger, req: IncomingMessage, res: ServerResponse): void {
  const started = startRequestLog(logger, req, res);
  res.once('finish', () => finishRequestLog(logger, req, res, started));
}

/**
 * The first half of logRequest, for a caller that hears the response finish itself (src/app.ts times and logs a
 * request answered outside Express with one listener): gives the request its id and logger; returns its start time.
 */
export function startRequestLog(logger: Logger, req: IncomingMessage, res: ServerResponse): number {
  res.setHeader('X-Request-Id', identifyRequest(logger, req));
  return performance.now();
}

/**
 * Gives the request its id (the client's X-Request-Id when a safe token, else a new UUID) and its logger; returns
 * the id for the caller to send as X-Request-Id.
 */
export function identifyRequest(logger: Logger, req: IncomingMessage): string {
  const given = req.headers['x-request-id'];
  const id = typeof given === 'string' && REQUEST_ID.test(given) ? given : randomUUID();
  req.id = id;
  (req as LoggedRequest)[APP_LOGGER] = logger;
  return id;
}

/** The line logRequest writes when the response has finished. */
export function finishRequestLog(logger: Logger, req: IncomingMessage, res: ServerResponse, started: number): void {
  const level = res.statusCode >= 500 ? 'error' : res.statusCode >= 400 ? 'warn' : 'info';
  if (!logger.isLevelEnabled(level)) return;
  logger[level](
    {
      reqId: req.id,
      req: serialise(req),
      res: { statusCode: res.statusCode },
      responseTime: Math.round(performance.now() - started),
    },
    'request completed',
  );
}

function serialise(req: IncomingMessage & { originalUrl?: string }) {
  return redactMisplacedSecret({
    id: req.id,
    method: req.method,
    url: req.originalUrl ?? req.url,
    headers: req.headers as Record<string, unknown>,
    remoteAddress: req.socket?.remoteAddress,
    remotePort: req.socket?.remotePort,
  });
}
