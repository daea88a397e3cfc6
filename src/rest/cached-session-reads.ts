import type { IncomingMessage, ServerResponse } from 'node:http';
import type { DomainContext } from '../domain/context.js';
import { cachedCheckoutSession, readCheckoutSession } from '../domain/sessions/get-checkout-session.js';
import type { Logger } from '../logging.js';
import { answerAtOnce, type Metrics } from '../metrics.js';
import { finishRequestLog, identifyRequest } from '../request-log.js';
import { compileTrustProxy, upgradeClientAddress } from '../http/client-address.js';
import { restErrorAnswer } from '../http/error-handler.js';
import { sendJson } from '../http/lane.js';
import { publicViewResponse } from './public-view-response.js';

const SESSION_PATH = /^\/checkout-sessions\/([0-9a-fA-F-]{36})$/;
const ROUTE = '/checkout-sessions/:id';

/**
 * GET /checkout-sessions/:id answered before Express (docs/benchmarks.md#cold-reads), with the route's body, headers,
 * ETag, errors, log line and metrics. Conditional requests, bodies and query strings return false and go to Express.
 */
export function cachedSessionReads(
  ctx: DomainContext,
  logger: Logger,
  metrics: Metrics,
): (req: IncomingMessage, res: ServerResponse) => boolean {
  const trust = compileTrustProxy(ctx.requestGuard.trustProxy);
  return (req, res) => {
    if (req.method !== 'GET' || req.url === undefined) return false;
    const match = SESSION_PATH.exec(req.url);
    if (match === null) return false;
    const { headers } = req;
    if (headers['if-none-match'] !== undefined || headers['if-modified-since'] !== undefined) return false;
    if (headers['content-length'] !== undefined || headers['transfer-encoding'] !== undefined) return false;
    const session = cachedCheckoutSession(ctx, match[1]!);
    if (session !== undefined) {
      const response = publicViewResponse(session);
      answerAtOnce(metrics, logger, req, res, ROUTE, 200, response.headers, response.body);
    } else void readAndAnswer(req, res, match[1]!);
    return true;
  };

  async function readAndAnswer(req: IncomingMessage, res: ServerResponse, id: string): Promise<void> {
    const started = performance.now();
    const requestId = identifyRequest(logger, req);
    try {
      const response = publicViewResponse(await readCheckoutSession(ctx, id, upgradeClientAddress(req, trust)));
      const head = ['X-Request-Id', requestId];
      for (let i = 0; i < response.headers.length; i++) head.push(response.headers[i]!);
      res.writeHead(200, head);
      res.end(response.body);
    } catch (error) {
      const answer = restErrorAnswer(error);
      if (answer.unexpected) req.log.error({ err: error }, 'unhandled error');
      res.setHeader('X-Request-Id', requestId);
      sendJson(res, answer.status, Buffer.from(JSON.stringify(answer.body), 'utf8'), answer.headers);
    }
    metrics.observeRequest('GET', ROUTE, res.statusCode, (performance.now() - started) / 1000);
    finishRequestLog(logger, req, res, started);
  }
}
