import type { IncomingMessage, ServerResponse } from 'node:http';
import type { DomainContext } from '../domain/context.js';
import { cachedCheckoutSession } from '../domain/sessions/get-checkout-session.js';
import type { Logger } from '../logging.js';
import { answerAtOnce, type Metrics } from '../metrics.js';
import { publicViewResponse } from './public-view-response.js';

const SESSION_PATH = /^\/checkout-sessions\/([0-9a-fA-F-]{36})$/;
const ROUTE = '/checkout-sessions/:id';

/**
 * GET /checkout-sessions/:id answered from this instance's session cache before Express sees
 * the request (issue 10, docs/benchmarks.md): the read the hosted page and merchants poll
 * most, at a fraction of the router's cost. It answers only what the route would answer the
 * same way: a cached session whose time is not up (getCheckoutSession's own shortcut), with
 * the same body, headers, ETag, request log line and metrics. Anything else (not cached, due
 * to expire, a conditional request, a request with a body, a query string) returns false and
 * goes through Express as before.
 */
export function cachedSessionReads(
  ctx: DomainContext,
  logger: Logger,
  metrics: Metrics,
): (req: IncomingMessage, res: ServerResponse) => boolean {
  return (req, res) => {
    if (req.method !== 'GET' || req.url === undefined) return false;
    const match = SESSION_PATH.exec(req.url);
    if (match === null) return false;
    const { headers } = req;
    if (headers['if-none-match'] !== undefined || headers['if-modified-since'] !== undefined) return false;
    if (headers['content-length'] !== undefined || headers['transfer-encoding'] !== undefined) return false;
    const session = cachedCheckoutSession(ctx, match[1]!);
    if (session === undefined) return false;
    const response = publicViewResponse(session);
    answerAtOnce(metrics, logger, req, res, ROUTE, 200, response.headers, response.body);
    return true;
  };
}
