import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
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

/**
 * One JSON line per request when it ends ("request completed", with the request, the
 * status and the time taken; warn for 4xx, error for 5xx), under the request's id, which
 * is echoed in X-Request-Id. What pino-http did, at a fraction of its cost: a request's
 * child logger is made only when something logs through `req.log`, and nothing is
 * serialised for a level that is off (docs/benchmarks.md).
 */
export function requestLog(logger: Logger): RequestHandler {
  return (req, res, next) => {
    logRequest(logger, req, res);
    next();
  };
}

/** What requestLog does for one request; also used where a request is answered outside Express. */
export function logRequest(logger: Logger, req: IncomingMessage, res: ServerResponse): void {
  const given = req.headers['x-request-id'];
  const id = typeof given === 'string' && REQUEST_ID.test(given) ? given : randomUUID();
  res.setHeader('X-Request-Id', id);
  req.id = id;
  let child: Logger | null = null;
  Object.defineProperty(req, 'log', {
    configurable: true,
    enumerable: false,
    get: () => (child ??= logger.child({ reqId: id })),
  });
  const started = performance.now();
  res.once('finish', () => {
    const level = res.statusCode >= 500 ? 'error' : res.statusCode >= 400 ? 'warn' : 'info';
    if (!logger.isLevelEnabled(level)) return;
    logger[level](
      {
        reqId: id,
        req: serialise(req),
        res: { statusCode: res.statusCode },
        responseTime: Math.round(performance.now() - started),
      },
      'request completed',
    );
  });
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
