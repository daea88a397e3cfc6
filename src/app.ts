import { randomUUID } from 'node:crypto';
import express, { type Express, type RequestHandler } from 'express';
import { pinoHttp } from 'pino-http';
import type { DomainContext } from './domain/context.js';
import { redactMisplacedSecret, type Logger } from './logging.js';
import { createMetrics, type Metrics } from './metrics.js';
import { checkoutPageRouter, type CheckoutPageOptions } from './rest/checkout-page.routes.js';
import { checkoutSessionsRouter } from './rest/checkout-sessions.routes.js';
import { errorHandler, methodNotAllowed, notFoundHandler } from './rest/error-handler.js';
import { healthRouter, type Readiness } from './rest/health.routes.js';
import { rawBody } from './rest/json-body.js';
import { webhookEndpointsRouter } from './rest/webhook-endpoints.routes.js';
import { eventsRouter } from './rest/events.routes.js';
import { openApiRouter } from './rest/openapi.js';

export interface AppDependencies {
  readonly ctx: DomainContext;
  readonly logger: Logger;
  readonly readiness: Readiness;
  readonly metrics?: Metrics;
  /** The GraphQL API's middleware (src/graphql/graphql-server.ts); it parses its own bodies, so it goes before rawBody. */
  readonly graphql?: RequestHandler;
  /** The hosted checkout page at /pay/:id (src/rest/checkout-page.routes.ts). */
  readonly checkoutPage?: CheckoutPageOptions;
}

const REQUEST_ID = /^[\w.:-]{1,128}$/;

/** Wires the HTTP surface once: logging with request ids, raw bodies, routes, one error mapping. */
export function createApp({ ctx, logger, readiness, metrics = createMetrics(), graphql, checkoutPage }: AppDependencies): Express {
  const app = express();
  app.disable('x-powered-by');
  app.use(metrics.httpRequests);
  app.use(
    pinoHttp({
      logger,
      genReqId(req, res) {
        const given = req.headers['x-request-id'];
        const id = typeof given === 'string' && REQUEST_ID.test(given) ? given : randomUUID();
        res.setHeader('X-Request-Id', id);
        return id;
      },
      customLogLevel: (_req, res, error) => (error || res.statusCode >= 500 ? 'error' : res.statusCode >= 400 ? 'warn' : 'info'),
      serializers: { req: redactMisplacedSecret },
    }),
  );
  app.use(healthRouter(readiness));
  app.get('/metrics', async (_req, res) => {
    res.type(metrics.registry.contentType).send(await metrics.registry.metrics());
  });
  app.all('/metrics', methodNotAllowed(['GET']));
  if (graphql) app.use(graphql);
  app.use(openApiRouter());
  app.use(rawBody);
  app.use(checkoutSessionsRouter(ctx));
  app.use(webhookEndpointsRouter(ctx));
  app.use(eventsRouter(ctx));
  app.use(checkoutPageRouter(ctx, checkoutPage));
  app.use(notFoundHandler);
  app.use(errorHandler);
  return app;
}
