import { Router } from 'express';
import { DomainError, invalid } from '../domain/shared/errors.js';
import { isUuid } from '../domain/shared/uuid.js';
import type { DomainContext } from '../domain/context.js';
import { readCheckoutSession } from '../domain/sessions/get-checkout-session.js';
import { bindPayerTransaction } from '../domain/payments/bind-transaction.js';
import { toBindResponse } from '../domain/sessions/checkout-session.views.js';
import { publicViewResponse } from './public-view-response.js';
import { CHECKED_EACH_TIME } from '../http/cache-control.js';
import { methodNotAllowed } from '../http/error-handler.js';
import { rawBytes, readJsonBody } from '../http/json-body.js';
import { answerCreate } from './create-checkout.answer.js';
import { clientAddressOf } from '../http/client-address.js';
import { readBindBody } from './bind-transaction.schema.js';

/**
 * Create (signed), get and bind-tx (public): docs/api/rest.md#endpoints. Each route translates and calls one domain
 * function.
 */
export function checkoutSessionsRouter(ctx: DomainContext): Router {
  const router = Router();

  // Most creates are answered before Express (src/rest/create-lane.ts); this route takes the rest (a chunked or
  // compressed body, a query string, another spelling of the path) with the same answerCreate.
  router.post('/checkout-sessions', async (req, res) => {
    const answer = await answerCreate(ctx, {
      headers: req.headers,
      rawBody: rawBytes(req),
      clientAddress: clientAddressOf(req),
    });
    if (answer.replayed) res.set('Idempotent-Replayed', 'true');
    res.status(201).type('json').send(answer.body);
  });
  router.all('/checkout-sessions', methodNotAllowed(['POST']));

  router.get('/checkout-sessions/:id', async (req, res) => {
    const { body, etag } = publicViewResponse(await readCheckoutSession(ctx, req.params.id, clientAddressOf(req)));
    res.status(200).set('ETag', etag).set('Cache-Control', CHECKED_EACH_TIME).type('json').send(body);
  });
  router.all('/checkout-sessions/:id', methodNotAllowed(['GET']));

  router.post('/checkout-sessions/:id/bind-tx', async (req, res) => {
    // The body is read after the bind is counted (docs/api/rest.md#rate-limits): malformed binds count too.
    const request = { sessionId: req.params.id, clientAddress: clientAddressOf(req) };
    const result = await bindPayerTransaction(ctx, request, () =>
      withPathId(req.params.id, () => readBindBody(readJsonBody(req))),
    );
    res.status(200).json(toBindResponse(result));
  });
  router.all('/checkout-sessions/:id/bind-tx', methodNotAllowed(['POST']));

  return router;
}

/**
 * What `read` reads from the body, with a path id that is no UUID among the problems, first: every problem of the
 * request at once (docs/api/rest.md#errors), as the PATCH routes answer them.
 */
function withPathId<T>(id: string, read: () => T): T {
  const idProblems = isUuid(id) ? [] : ['id must be a UUID'];
  let value: T;
  try {
    value = read();
  } catch (error) {
    if (idProblems.length > 0 && error instanceof DomainError && error.code === 'invalid')
      throw invalid([...idProblems, ...error.messages]);
    throw error;
  }
  if (idProblems.length > 0) throw invalid(idProblems);
  return value;
}
