import { Router, type Request } from 'express';
import type { DomainContext } from '../domain/context.js';
import { createRefund } from '../domain/refunds/create-refund.js';
import { cancelRefund } from '../domain/refunds/refund-transitions.js';
import { getRefund, listSessionRefunds } from '../domain/refunds/refunds.js';
import { toRefundView } from '../domain/refunds/refund.views.js';
import type { Refund } from '../domain/refunds/refund.js';
import { invalid } from '../domain/shared/errors.js';
import { isUuid } from '../domain/shared/uuid.js';
import { methodNotAllowed } from '../http/error-handler.js';
import { readJsonBody } from '../http/json-body.js';
import { parseCreateRefund } from './refunds.schema.js';
import { authenticate } from './webhook-endpoints.routes.js';

// docs/api/rest.md#create-rules-and-limits: 1–255 printable characters, scoped to the organisation.
function idempotencyKey(req: Request): string | undefined {
  const key = req.get('idempotency-key');
  if (key === undefined) return undefined;
  if (!/^[\x21-\x7e][\x20-\x7e]{0,254}$/.test(key) || key.trim() !== key)
    throw invalid(['Idempotency-Key must be 1 to 255 printable ASCII characters']);
  return key;
}

const idProblems = (req: Request): string[] => (isUuid(req.params.id as string) ? [] : ['id must be a UUID']);

function pathId(req: Request): string {
  const problems = idProblems(req);
  if (problems.length > 0) throw invalid(problems);
  return (req.params.id as string).toLowerCase();
}

/** Refunds (docs/api/refunds.md#rest): signed merchant routes over the refunds use-cases. */
export function refundsRouter(ctx: DomainContext): Router {
  const router = Router();
  const view = (refund: Refund) => toRefundView(refund, ctx.checkoutBaseUrl);

  router.post('/checkout-sessions/:id/refunds', async (req, res) => {
    const merchant = await authenticate(ctx, req);
    const key = idempotencyKey(req);
    const parsed = parseCreateRefund(readJsonBody(req));
    const problems = [...idProblems(req), ...(parsed.ok ? [] : parsed.problems)];
    if (problems.length > 0 || !parsed.ok) throw invalid(problems);
    const result = await createRefund(ctx, merchant.organisationId, pathId(req), parsed.value, key);
    if (result.replayed) res.set('Idempotent-Replayed', 'true');
    res.status(201).json(view(result.refund));
  });
  router.get('/checkout-sessions/:id/refunds', async (req, res) => {
    const merchant = await authenticate(ctx, req);
    const refunds = await listSessionRefunds(ctx, merchant.organisationId, pathId(req));
    res.status(200).json({ data: refunds.map(view) });
  });
  router.all('/checkout-sessions/:id/refunds', methodNotAllowed(['GET', 'POST']));

  router.get('/refunds/:id', async (req, res) => {
    const merchant = await authenticate(ctx, req);
    res.status(200).json(view(await getRefund(ctx, merchant.organisationId, pathId(req))));
  });
  router.all('/refunds/:id', methodNotAllowed(['GET']));

  router.post('/refunds/:id/cancel', async (req, res) => {
    const merchant = await authenticate(ctx, req);
    res.status(200).json(view(await cancelRefund(ctx, merchant.organisationId, pathId(req))));
  });
  router.all('/refunds/:id/cancel', methodNotAllowed(['POST']));

  return router;
}
