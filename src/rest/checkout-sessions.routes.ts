import { Router, type Request } from 'express';
import type { DomainContext } from '../domain/context.js';
import { authenticateMerchant } from '../domain/authenticate-merchant.js';
import { createCheckoutSession } from '../domain/create-checkout-session.js';
import { getCheckoutSession } from '../domain/get-checkout-session.js';
import { bindInputProblems, bindTransaction, toBindResponse } from '../domain/bind-transaction.js';
import { toMerchantView, toPublicView } from '../domain/checkout-session.views.js';
import { invalid } from '../domain/errors.js';
import { parseCreateCheckout } from './create-checkout.schema.js';
import { methodNotAllowed } from './error-handler.js';
import { rawBytes, readJsonBody } from './json-body.js';
import { isJsonObject } from '../json/decimal-json.js';

const BIND_FIELDS = ['tx_hash', 'chain_id', 'crypto_currency', 'payer_wallet_address'];

/** Spec §4: create (signed), get and bind-tx (public). Each route translates and calls one domain function. */
export function checkoutSessionsRouter(ctx: DomainContext): Router {
  const router = Router();

  router.post('/checkout-sessions', async (req, res) => {
    // Authentication runs before any look at the body (DESIGN.md §4).
    const merchant = await authenticateMerchant(ctx, {
      apiKey: req.get('x-service-key'),
      timestamp: req.get('x-service-timestamp'),
      signature: req.get('x-service-signature'),
      rawBody: rawBytes(req),
    });
    const parsed = parseCreateCheckout(readJsonBody(req));
    if (!parsed.ok) throw invalid(parsed.problems);
    const result = await createCheckoutSession(ctx, merchant, parsed.input, idempotencyKey(req));
    if (result.replayed) res.set('Idempotent-Replayed', 'true');
    res.status(201).json(toMerchantView(result.session, ctx.checkoutBaseUrl));
  });
  router.all('/checkout-sessions', methodNotAllowed(['POST']));

  router.get('/checkout-sessions/:id', async (req, res) => {
    res.status(200).json(toPublicView(await getCheckoutSession(ctx, req.params.id)));
  });
  router.all('/checkout-sessions/:id', methodNotAllowed(['GET']));

  router.post('/checkout-sessions/:id/bind-tx', async (req, res) => {
    const body = readJsonBody(req);
    if (!isJsonObject(body)) throw invalid(['body must be a JSON object']);
    const problems = [
      ...Object.keys(body).filter((key) => !BIND_FIELDS.includes(key)).map((key) => `property ${key} should not exist`),
      ...bindInputProblems(body),
    ];
    if (problems.length > 0) throw invalid(problems);
    res.status(200).json(toBindResponse(await bindTransaction(ctx, req.params.id, body)));
  });
  router.all('/checkout-sessions/:id/bind-tx', methodNotAllowed(['POST']));

  return router;
}

// DESIGN.md §4: 1–255 printable characters, scoped to the organisation.
function idempotencyKey(req: Request): string | undefined {
  const key = req.get('idempotency-key');
  if (key === undefined) return undefined;
  if (!/^[\x21-\x7e][\x20-\x7e]{0,254}$/.test(key) || key.trim() !== key) {
    throw invalid(['Idempotency-Key must be 1 to 255 printable ASCII characters']);
  }
  return key;
}
