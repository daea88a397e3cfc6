import { Router } from 'express';
import type { DomainContext } from '../domain/context.js';
import { invalid } from '../domain/shared/errors.js';
import { listEvents } from '../domain/webhooks/events-feed.js';
import { problemsOf } from '../domain/shared/input-problems.js';
import { methodNotAllowed } from '../http/error-handler.js';
import { listEventsQuerySchema } from './webhook-endpoints.schema.js';
import { authenticate } from './webhook-endpoints.routes.js';

/** GET /events: the signed events feed for reconciliation (docs/api/webhooks.md#events-feed). */
export function eventsRouter(ctx: DomainContext): Router {
  const router = Router();
  router.get('/events', async (req, res) => {
    const merchant = await authenticate(ctx, req);
    const query = listEventsQuerySchema.safeParse({ ...req.query });
    if (!query.success) throw invalid(problemsOf(query.error));
    const { after, limit, session_id } = query.data;
    res.status(200).json(await listEvents(ctx, merchant.organisationId, { after, limit, sessionId: session_id }));
  });
  router.all('/events', methodNotAllowed(['GET']));
  return router;
}
