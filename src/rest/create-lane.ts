import type { IncomingMessage, ServerResponse } from 'node:http';
import type { DomainContext } from '../domain/context.js';
import type { Logger } from '../logging.js';
import { trackLaneRequest, type Metrics } from '../metrics.js';
import { compileTrustProxy, upgradeClientAddress } from '../http/client-address.js';
import { answerCreate } from './create-checkout.answer.js';
import { BODY_LIMIT_BYTES } from '../http/json-body.js';
import { readWholeBody, sendError, sendJson } from '../http/lane.js';

const PATH = '/checkout-sessions';
const REPLAYED = { 'Idempotent-Replayed': 'true' } as const;

/**
 * POST /checkout-sessions answered before Express, whose router and body parser cost more than the rest of a create
 * (docs/benchmarks.md); anything the route would not read the same way returns false and goes through Express.
 */
export function createCheckoutLane(
  ctx: DomainContext,
  logger: Logger,
  metrics: Metrics,
): (req: IncomingMessage, res: ServerResponse) => boolean {
  const trust = compileTrustProxy(ctx.requestGuard.trustProxy);
  return (req, res) => {
    if (req.method !== 'POST' || req.url !== PATH) return false;
    const { headers } = req;
    const length = Number(headers['content-length']);
    if (!Number.isInteger(length) || length <= 0 || length > BODY_LIMIT_BYTES) return false;
    if (headers['transfer-encoding'] !== undefined || headers['content-encoding'] !== undefined) return false;
    trackLaneRequest(metrics, logger, req, res, PATH);
    void serve(req, res);
    return true;
  };

  async function serve(req: IncomingMessage, res: ServerResponse): Promise<void> {
    let rawBody: Buffer;
    try {
      rawBody = await readWholeBody(req);
    } catch {
      // The client went away before its body arrived: nobody to answer.
      res.destroy();
      return;
    }
    try {
      const answer = await answerCreate(ctx, {
        headers: req.headers,
        rawBody,
        clientAddress: upgradeClientAddress(req, trust),
      });
      sendJson(res, 201, answer.body, answer.replayed ? REPLAYED : undefined);
    } catch (error) {
      sendError(req, res, error);
    }
  }
}
