import { Router, type Request } from 'express';
import type { DomainContext } from '../domain/context.js';
import { authenticateMerchant, type Merchant } from '../domain/organisations/authenticate-merchant.js';
import { invalid } from '../domain/shared/errors.js';
import {
  createWebhookEndpoint,
  getWebhookEndpoint,
  listWebhookEndpoints,
  removeWebhookEndpoint,
  rotateWebhookSecret,
  updateWebhookEndpoint,
} from '../domain/webhooks/webhook-endpoints.js';
import { webhookUrlAddressProblems } from '../domain/webhooks/webhook-endpoint.schema.js';
import { toEndpointView } from '../domain/webhooks/webhook.views.js';
import { isUuid } from '../domain/shared/uuid.js';
import { methodNotAllowed } from '../http/error-handler.js';
import { readJsonBody } from '../http/json-body.js';
import { signedRequestOf } from './signed-request.js';
import {
  createWebhookEndpointBodySchema,
  parseBody,
  updateWebhookEndpointBodySchema,
} from './webhook-endpoints.schema.js';

/**
 * A signed management call: the signature covers timestamp, method, path and query, and body
 * (docs/api/rest.md#signing-a-merchant-call).
 */
export function authenticate(ctx: DomainContext, req: Request): Promise<Merchant> {
  return authenticateMerchant(ctx, signedRequestOf(req, 'request'));
}

const idProblems = (req: Request): string[] => (isUuid(req.params.id as string) ? [] : ['id must be a UUID']);

/** The path id; like session ids, one that is not a UUID is a 400 (the CLI calls it "not found"). */
function endpointId(req: Request): string {
  const problems = idProblems(req);
  if (problems.length > 0) throw invalid(problems);
  return req.params.id as string;
}

/**
 * The parsed body, or a 400 listing every problem at once, the URL's address check included when its syntax is fine
 * (else it would only show up on the next try).
 */
async function body<T extends { url?: unknown }>(
  ctx: DomainContext,
  parsed: T | { problems: string[] },
  raw: unknown,
  pathProblems: string[] = [],
): Promise<T> {
  const bodyProblems = parsed && typeof parsed === 'object' && 'problems' in parsed ? parsed.problems : [];
  if (pathProblems.length === 0 && bodyProblems.length === 0) return parsed as T;
  const url = raw && typeof raw === 'object' && 'url' in raw ? (raw as { url: unknown }).url : undefined;
  const urlReported = bodyProblems.some((problem) => /^url /.test(problem));
  const addressProblems = url === undefined || urlReported ? [] : await webhookUrlAddressProblems(ctx, url);
  throw invalid([...pathProblems, ...bodyProblems, ...addressProblems]);
}

/** Webhook endpoint management for merchants; every route is signed and scoped to the caller's organisation. */
export function webhookEndpointsRouter(ctx: DomainContext): Router {
  const router = Router();

  router.post('/webhook-endpoints', async (req, res) => {
    const merchant = await authenticate(ctx, req);
    const raw = readJsonBody(req);
    const input = await body(ctx, parseBody(createWebhookEndpointBodySchema, raw), raw);
    const { endpoint, secret } = await createWebhookEndpoint(ctx, merchant.organisationId, input);
    res.status(201).json({ ...toEndpointView(endpoint, ctx.clock()), secret });
  });
  router.get('/webhook-endpoints', async (req, res) => {
    const merchant = await authenticate(ctx, req);
    const list = await listWebhookEndpoints(ctx, merchant.organisationId);
    res.status(200).json({ data: list.map((endpoint) => toEndpointView(endpoint, ctx.clock())) });
  });
  router.all('/webhook-endpoints', methodNotAllowed(['GET', 'POST']));

  router.get('/webhook-endpoints/:id', async (req, res) => {
    const merchant = await authenticate(ctx, req);
    res
      .status(200)
      .json(toEndpointView(await getWebhookEndpoint(ctx, merchant.organisationId, endpointId(req)), ctx.clock()));
  });
  router.patch('/webhook-endpoints/:id', async (req, res) => {
    const merchant = await authenticate(ctx, req);
    const raw = readJsonBody(req);
    const input = await body(ctx, parseBody(updateWebhookEndpointBodySchema, raw), raw, idProblems(req));
    res
      .status(200)
      .json(
        toEndpointView(await updateWebhookEndpoint(ctx, merchant.organisationId, endpointId(req), input), ctx.clock()),
      );
  });
  router.delete('/webhook-endpoints/:id', async (req, res) => {
    const merchant = await authenticate(ctx, req);
    await removeWebhookEndpoint(ctx, merchant.organisationId, endpointId(req));
    res.status(204).end();
  });
  router.all('/webhook-endpoints/:id', methodNotAllowed(['GET', 'PATCH', 'DELETE']));

  router.post('/webhook-endpoints/:id/rotate-secret', async (req, res) => {
    const merchant = await authenticate(ctx, req);
    const { endpoint, secret } = await rotateWebhookSecret(ctx, merchant.organisationId, endpointId(req));
    res.status(200).json({ ...toEndpointView(endpoint, ctx.clock()), secret });
  });
  router.all('/webhook-endpoints/:id/rotate-secret', methodNotAllowed(['POST']));

  return router;
}
