import type { IncomingMessage, ServerResponse } from 'node:http';
import express, { type Express, type RequestHandler } from 'express';
import type { DomainContext } from './domain/context.js';
import type { Logger } from './logging.js';
import { notStored } from './http/cache-control.js';
import { requestLog } from './request-log.js';
import type { GraphqlLane, LaneAnswer } from './graphql/graphql-lane.js';
import { answerAtOnce, createMetrics, serveMetrics, type Metrics } from './metrics.js';
import { countRateLimitRefusals } from './rate-limit-metrics.js';
import { checkoutPageRouter, type CheckoutPageOptions } from './rest/checkout-page.routes.js';
import { checkoutSessionsRouter } from './rest/checkout-sessions.routes.js';
import { errorHandler, methodNotAllowed, notFoundHandler } from './http/error-handler.js';
import { healthRouter, type Readiness } from './rest/health.routes.js';
import { rawBody } from './http/json-body.js';
import { webhookEndpointsRouter } from './rest/webhook-endpoints.routes.js';
import { eventsRouter } from './rest/events.routes.js';
import { openApiRouter } from './rest/openapi.js';
import { paymentLinksRouter } from './rest/payment-links.routes.js';
import { refundsRouter } from './rest/refunds.routes.js';
import { paymentLinkPageRouter } from './rest/payment-link-page.routes.js';
import { brandRouter } from './rest/brand.routes.js';
import { cachedSessionReads } from './rest/cached-session-reads.js';
import { createCheckoutLane } from './rest/create-lane.js';
import { dashboardRouter } from './rest/dashboard.routes.js';
import type { SessionChangeSource } from './rest/dashboard-live.routes.js';
import { merchantGraphqlRouter } from './graphql/merchant/http.js';
import { postJson } from './webhooks/http-post.js';
import type { DashboardCookieOptions } from './http/dashboard-session.js';

export interface AppDependencies {
  readonly ctx: DomainContext;
  readonly logger: Logger;
  readonly readiness: Readiness;
  readonly metrics?: Metrics;
  /**
   * The GraphQL API's middleware (src/graphql/graphql-server.ts); it parses its own bodies, so it goes before rawBody.
   */
  readonly graphql?: RequestHandler;
  /** Kept GraphQL answers served before Express (src/graphql/graphql-lane.ts). */
  readonly graphqlLane?: GraphqlLane;
  /** The hosted checkout page at /pay/:id (src/rest/checkout-page.routes.ts). */
  readonly checkoutPage?: CheckoutPageOptions;
  /**
   * Whether this port serves GET /metrics, and the bearer token it asks for (config.metrics); default: served, no
   * token.
   */
  readonly metricsAccess?: { readonly onMainPort: boolean; readonly token: string | null };
  /** The dashboard's session cookie (docs/dashboard.md#sessions-and-cookies); default: not Secure (development). */
  readonly dashboard?: DashboardCookieOptions;
  /** Which sessions changed, for the dashboard's live updates (the runtime's change feed); none: no live updates. */
  readonly changes?: SessionChangeSource;
}

/** Wires the HTTP surface once: logging with request ids, raw bodies, routes, one error mapping. */
export function createApp({
  ctx,
  logger,
  readiness,
  metrics = createMetrics(),
  graphql,
  graphqlLane,
  checkoutPage,
  metricsAccess,
  dashboard = { secureCookies: false },
  changes,
}: AppDependencies): Express {
  const app = express();
  app.disable('x-powered-by');
  // Whose address rate limits count (docs/api/rest.md#rate-limits): TRUST_PROXY.
  app.set(
    'trust proxy',
    typeof ctx.requestGuard.trustProxy === 'object' ? [...ctx.requestGuard.trustProxy] : ctx.requestGuard.trustProxy,
  );
  countRateLimitRefusals(metrics.registry, ctx.requestGuard.throttle);
  app.use(metrics.httpRequests);
  app.use(requestLog(logger));
  app.use(notStored);
  app.use(healthRouter(readiness));
  if (metricsAccess?.onMainPort !== false) {
    app.get('/metrics', serveMetrics(metrics, metricsAccess?.token ?? null));
    app.all('/metrics', methodNotAllowed(['GET']));
  }
  if (graphql) app.use(graphql);
  app.use(openApiRouter());
  app.use(rawBody);
  app.use(checkoutSessionsRouter(ctx));
  app.use(webhookEndpointsRouter(ctx));
  app.use(eventsRouter(ctx));
  app.use(paymentLinksRouter(ctx));
  app.use(refundsRouter(ctx));
  app.use(checkoutPageRouter(ctx, checkoutPage));
  app.use(paymentLinkPageRouter(ctx));
  app.use(brandRouter(ctx));
  app.use(dashboardRouter(ctx, dashboard, changes));
  app.use(
    merchantGraphqlRouter(ctx, dashboard, (url, body, headers) =>
      postJson(url, body, headers, {
        timeoutMs: ctx.webhooks.timeoutMs,
        allowPrivate: ctx.webhooks.allowPrivate,
        httpsOnly: ctx.webhooks.httpsOnly,
        resolveHost: ctx.resolveHost,
      }),
    ),
  );
  app.use(notFoundHandler);
  app.use(errorHandler);
  // Cached session reads are answered before Express's own handling starts (docs/benchmarks.md).
  const cachedRead = cachedSessionReads(ctx, logger, metrics);
  // So are most creates (src/rest/create-lane.ts).
  const createLane = createCheckoutLane(ctx, logger, metrics);
  // Express's `app(req, res)` calls `app.handle`: the one place every request enters (listen, createServer(app),
  // supertest).
  const withHandle = app as unknown as { handle: (req: IncomingMessage, res: ServerResponse, next?: unknown) => void };
  const handle = withHandle.handle.bind(app);
  const answeredByLane: LaneAnswer = (req, res, status, headers, body, started) =>
    answerAtOnce(metrics, logger, req, res, '/graphql', status, headers, body, started);
  withHandle.handle = (req, res, next) => {
    if (cachedRead(req, res)) return;
    if (createLane(req, res)) return;
    if (graphqlLane?.(req, res, () => handle(req, res, next), answeredByLane)) return;
    handle(req, res, next);
  };
  return app;
}
