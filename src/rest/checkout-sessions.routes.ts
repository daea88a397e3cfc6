import { Router, type Request } from 'express';
import type { DomainContext } from '../domain/context.js';
import { createSignedCheckoutSession } from '../domain/create-checkout-session.js';
import { getCheckoutSession } from '../domain/get-checkout-session.js';
import { bindPayerTransaction } from '../domain/bind-transaction.js';
import { toBindResponse, toMerchantView } from '../domain/checkout-session.views.js';
import { publicViewResponse } from './public-view-response.js';
import { invalid } from '../domain/errors.js';
import { parseCreateCheckout } from './create-checkout.schema.js';
import { methodNotAllowed } from './error-handler.js';
import { readJsonBody } from './json-body.js';
import { signedRequestOf } from './signed-request.js';
import { clientAddressOf } from './client-address.js';
import { readBindBody } from './bind-transaction.schema.js';

/**
 * Create (signed), get and bind-tx (public): docs/api/rest.md#endpoints. Each route translates and calls one domain
 * function.
 */
export function checkoutSessionsRouter(ctx: DomainContext): Router {
  const router = Router();

  router.post('/checkout-sessions', async (req, res) => {
    // Authentication runs before any look at the body; create keeps `{timestamp}.{rawBody}`
    // (docs/api/rest.md#signing-a-merchant-call).
    const result = await createSignedCheckoutSession(ctx, signedRequestOf(req, 'body'), () => {
      const parsed = parseCreateCheckout(readJsonBody(req));
      if (!parsed.ok) throw invalid(parsed.problems);
      return { input: parsed.input, idempotencyKey: idempotencyKey(req) };
    });
    if (result.replayed) res.set('Idempotent-Replayed', 'true');
    res.status(201).json(toMerchantView(result.session, ctx.checkoutBaseUrl));
  });
  router.all('/checkout-sessions', methodNotAllowed(['POST']));

  router.get('/checkout-sessions/:id', async (req, res) => {
    const { body, etag } = publicViewResponse(await getCheckoutSession(ctx, req.params.id));
    res.status(200).set('ETag', etag).type('json').send(body);
  });
  router.all('/checkout-sessions/:id', methodNotAllowed(['GET']));

  router.post('/checkout-sessions/:id/bind-tx', async (req, res) => {
    // The body is read after the bind is counted (docs/api/rest.md#rate-limits): malformed binds count too.
    const request = { sessionId: req.params.id, clientAddress: clientAddressOf(req) };
    const result = await bindPayerTransaction(ctx, request, () => readBindBody(readJsonBody(req)));
    res.status(200).json(toBindResponse(result));
  });
  router.all('/checkout-sessions/:id/bind-tx', methodNotAllowed(['POST']));

  return router;
}

// docs/api/rest.md#create-rules-and-limits: 1–255 printable characters, scoped to the organisation.
function idempotencyKey(req: Request): string | undefined {
  const key = req.get('idempotency-key');
  if (key === undefined) return undefined;
  if (!/^[\x21-\x7e][\x20-\x7e]{0,254}$/.test(key) || key.trim() !== key) {
    throw invalid(['Idempotency-Key must be 1 to 255 printable ASCII characters']);
  }
  return key;
}
