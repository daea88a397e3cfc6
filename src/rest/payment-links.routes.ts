import { Router, type Request } from 'express';
import type { DomainContext } from '../domain/context.js';
import {
  createSessionFromLink,
  PAYER_IDEMPOTENCY_KEY_MIN_LENGTH,
} from '../domain/payment-links/create-session-from-link.js';
import { toLinkSessionView } from '../domain/sessions/checkout-session.views.js';
import { invalid } from '../domain/shared/errors.js';
import { toPaymentLinkView } from '../domain/payment-links/payment-link.views.js';
import {
  createPaymentLink,
  getPaymentLink,
  listPaymentLinks,
  updatePaymentLink,
} from '../domain/payment-links/payment-links.js';
import { rateLimit } from '../domain/organisations/throttle.js';
import { isUuid } from '../domain/shared/uuid.js';
import { clientAddressOf } from '../http/client-address.js';
import { methodNotAllowed } from '../http/error-handler.js';
import { readJsonBody } from '../http/json-body.js';
import { parseCreatePaymentLink, parseLinkSession, parseUpdatePaymentLink } from './payment-links.schema.js';
import { authenticate } from './webhook-endpoints.routes.js';

const idProblems = (req: Request): string[] => (isUuid(req.params.id as string) ? [] : ['id must be a UUID']);

/** Every problem at once: the path id's and the body's. */
function accept<T>(parsed: { ok: true; value: T } | { ok: false; problems: string[] }, pathProblems: string[] = []): T {
  const problems = [...pathProblems, ...(parsed.ok ? [] : parsed.problems)];
  if (problems.length > 0 || !parsed.ok) throw invalid(problems);
  return parsed.value;
}

function linkId(req: Request): string {
  const problems = idProblems(req);
  if (problems.length > 0) throw invalid(problems);
  return (req.params.id as string).toLowerCase();
}

// As for create (docs/api/rest.md#create-rules-and-limits), but at least 16 characters: on this public route the key is
// all that tells two anonymous payers' visits apart (docs/hosted-pages.md#payment-links).
const PAYER_KEY = new RegExp(`^[\\x21-\\x7e][\\x20-\\x7e]{${PAYER_IDEMPOTENCY_KEY_MIN_LENGTH - 1},254}$`);
function payerIdempotencyKey(req: Request): string | undefined {
  const key = req.get('idempotency-key');
  if (key === undefined) return undefined;
  if (!PAYER_KEY.test(key) || key.trim() !== key) {
    throw invalid([
      `Idempotency-Key must be ${PAYER_IDEMPOTENCY_KEY_MIN_LENGTH} to 255 printable ASCII characters on this public ` +
        `route (a random value, such as a UUID)`,
    ]);
  }
  return key;
}

/**
 * Payment links (docs/hosted-pages.md#payment-links): the merchant's signed management routes,
 * and the payer's public POST /payment-links/:id/sessions, throttled per client address.
 */
export function paymentLinksRouter(ctx: DomainContext): Router {
  const router = Router();
  const view = (link: Parameters<typeof toPaymentLinkView>[0]) =>
    toPaymentLinkView(link, ctx.checkoutBaseUrl, ctx.clock());

  router.post('/payment-links', async (req, res) => {
    const merchant = await authenticate(ctx, req);
    const input = accept(parseCreatePaymentLink(readJsonBody(req)));
    res.status(201).json(view(await createPaymentLink(ctx, merchant.organisationId, input)));
  });
  router.get('/payment-links', async (req, res) => {
    const merchant = await authenticate(ctx, req);
    res.status(200).json({ data: (await listPaymentLinks(ctx, merchant.organisationId)).map(view) });
  });
  router.all('/payment-links', methodNotAllowed(['GET', 'POST']));

  router.get('/payment-links/:id', async (req, res) => {
    const merchant = await authenticate(ctx, req);
    res.status(200).json(view(await getPaymentLink(ctx, merchant.organisationId, linkId(req))));
  });
  router.patch('/payment-links/:id', async (req, res) => {
    const merchant = await authenticate(ctx, req);
    const patch = accept(parseUpdatePaymentLink(readJsonBody(req)), idProblems(req));
    res.status(200).json(view(await updatePaymentLink(ctx, merchant.organisationId, linkId(req), patch)));
  });
  router.all('/payment-links/:id', methodNotAllowed(['GET', 'PATCH']));

  router.post('/payment-links/:id/sessions', async (req, res) => {
    await rateLimit(ctx, ['link_sessions', clientAddressOf(req)]);
    const key = payerIdempotencyKey(req);
    const input = accept(parseLinkSession(readJsonBody(req)), idProblems(req));
    const result = await createSessionFromLink(ctx, req.params.id as string, input, key);
    if (result.replayed) res.set('Idempotent-Replayed', 'true');
    res.status(201).json(toLinkSessionView(result.session, ctx.checkoutBaseUrl));
  });
  router.all('/payment-links/:id/sessions', methodNotAllowed(['POST']));

  return router;
}
