import { timingSafeEqual, createHash } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import express, { type Express, type RequestHandler } from 'express';
import { collectDefaultMetrics, Counter, Gauge, Registry } from 'prom-client';
import { HttpDurations } from './http-durations.js';
import { errorHandler, methodNotAllowed, notFoundHandler } from './http/error-handler.js';
import { HttpError } from './http/http-error.js';
import type { Logger } from './logging.js';
import { finishRequestLog, identifyRequest, startRequestLog } from './request-log.js';

/** Prometheus metrics of one Kassa instance, served at GET /metrics. */
export interface Metrics {
  readonly registry: Registry;
  readonly httpRequests: RequestHandler;
  /** Counts one finished request in the request-duration histogram. */
  readonly observeRequest: (method: string, route: string, status: number, seconds: number) => void;
  readonly jobRuns: Counter<'job' | 'outcome'>;
  /** Newest block the chain's RPC reported, per network. */
  readonly chainHead: Gauge<'network'>;
  /** Next block the watcher will scan, per network. */
  readonly chainCursor: Gauge<'network'>;
  readonly paymentsRecorded: Counter<'network' | 'asset'>;
  readonly reorgs: Counter<'network'>;
}

export function createMetrics(): Metrics {
  // A registry per instance: tests run several apps in one process.
  const registry = new Registry();
  collectDefaultMetrics({ register: registry, prefix: 'kassa_' });
  const duration = new HttpDurations(
    'kassa_http_request_duration_seconds',
    'HTTP request duration by route and status',
    [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
    registry,
  );
  const jobRuns = new Counter({
    name: 'kassa_background_job_runs_total',
    help: 'Background job runs by job and outcome',
    labelNames: ['job', 'outcome'] as const,
    registers: [registry],
  });
  const chainHead = new Gauge({
    name: 'kassa_chain_head_block',
    help: 'Newest block reported by the RPC',
    labelNames: ['network'] as const,
    registers: [registry],
  });
  const chainCursor = new Gauge({
    name: 'kassa_chain_next_block',
    help: 'Next block the watcher scans',
    labelNames: ['network'] as const,
    registers: [registry],
  });
  const paymentsRecorded = new Counter({
    name: 'kassa_payments_recorded_total',
    help: 'Transfers to watched wallets recorded',
    labelNames: ['network', 'asset'] as const,
    registers: [registry],
  });
  const reorgs = new Counter({
    name: 'kassa_chain_reorgs_total',
    help: 'Chain reorganisations rolled back',
    labelNames: ['network'] as const,
    registers: [registry],
  });
  const observeRequest = (method: string, route: string, status: number, seconds: number) =>
    duration.observe(method, route, status, seconds);
  const httpRequests: RequestHandler = (req, res, next) => {
    const started = performance.now();
    res.on('finish', () => {
      // Only matched route patterns become labels (never raw paths), so label cardinality stays bounded.
      const matched = req.route?.path as string | undefined;
      const label = matched ? `${req.baseUrl}${matched}` : 'unmatched';
      observeRequest(req.method, label, res.statusCode, (performance.now() - started) / 1000);
    });
    next();
  };
  return {
    registry,
    httpRequests,
    observeRequest,
    jobRuns,
    chainHead,
    chainCursor,
    paymentsRecorded,
    reorgs,
  };
}

/**
 * GET /metrics: with a token (KASSA_METRICS_TOKEN) only `Authorization: Bearer <token>` is answered, else 401. Where it
 * is served is src/config/deployment.ts's decision (never on the main port in production without a token).
 */
export function serveMetrics(metrics: Metrics, token: string | null): RequestHandler {
  const expected = token === null ? null : digest(token);
  return async (req, res, next) => {
    if (expected !== null) {
      const given = /^Bearer (\S+)$/.exec(req.headers.authorization ?? '')?.[1];
      // Digests of equal length, so the comparison takes the same time whatever was sent.
      if (given === undefined || !timingSafeEqual(digest(given), expected)) {
        next(
          new HttpError(401, 'GET /metrics needs Authorization: Bearer <KASSA_METRICS_TOKEN>', {
            'WWW-Authenticate': 'Bearer realm="kassa-metrics"',
          }),
        );
        return;
      }
    }
    res.type(metrics.registry.contentType).send(await metrics.registry.metrics());
  };
}

/** The separate metrics listener (KASSA_METRICS_PORT): /metrics and nothing else. */
export function createMetricsApp(metrics: Metrics, token: string | null): Express {
  const app = express();
  app.disable('x-powered-by');
  app.get('/metrics', serveMetrics(metrics, token));
  app.all('/metrics', methodNotAllowed(['GET']));
  app.use(notFoundHandler);
  app.use(errorHandler);
  return app;
}

function digest(text: string): Buffer {
  return createHash('sha256').update(text).digest();
}

/**
 * What the request log and the metrics record of a request answered outside Express (the lanes of src/app.ts),
 * with one listener for both: its id and logger now, its duration and log line when it finishes.
 */
export function trackLaneRequest(
  metrics: Metrics,
  logger: Logger,
  req: IncomingMessage,
  res: ServerResponse,
  route: string,
): void {
  const started = startRequestLog(logger, req, res);
  res.once('finish', () => {
    metrics.observeRequest(req.method ?? 'GET', route, res.statusCode, (performance.now() - started) / 1000);
    finishRequestLog(logger, req, res, started);
  });
}

/** Response headers as `res.writeHead` takes them flat: name, value, name, value… */
export type FlatHeaders = readonly string[];

/**
 * Answers a request outside Express (the cached-read lanes) whole, in one writeHead and `body`, then counts and logs
 * it, with no per-request listener (docs/benchmarks.md); `started`: when the lane began on it, for the duration.
 */
export function answerAtOnce(
  metrics: Metrics,
  logger: Logger,
  req: IncomingMessage,
  res: ServerResponse,
  route: string,
  status: number,
  headers: FlatHeaders,
  body: Buffer,
  started: number = performance.now(),
): void {
  const head = ['X-Request-Id', identifyRequest(logger, req)];
  for (let i = 0; i < headers.length; i++) head.push(headers[i]!);
  res.writeHead(status, head);
  res.end(body);
  metrics.observeRequest(req.method ?? 'GET', route, status, (performance.now() - started) / 1000);
  finishRequestLog(logger, req, res, started);
}
