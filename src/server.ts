import { productionOptIns } from './config/deployment.js';
import { TimedOut, withTimeout } from './with-timeout.js';
import path from 'node:path';
import { createServer, type Server } from 'node:http';
import { createApp } from './app.js';
import { answerClientErrors } from './rest/client-error.js';
import { startBackgroundJobs } from './background-jobs.js';
import type { Config } from './config.js';
import { demoSignInToken, demoSignInUrl, ensureDemo, signedCurl, type DemoCredentials } from './demo.js';
import type { Logger } from './logging.js';
import { openRuntime } from './runtime.js';
import { createMetrics, createMetricsApp } from './metrics.js';
import { startChainWatchers, type ChainWatchers } from './chain/chain-watcher.js';
import { startSandboxChain, type SandboxChain } from './chain/sandbox.js';
import { startGraphqlApi } from './graphql/graphql-server.js';

/** How long one step of a shutdown may take before the rest goes on without it. */
const STOP_STEP_TIMEOUT_MS = 10_000;
/** How long a request may take to arrive whole, and its headers. */
export const REQUEST_TIMEOUT_MS = 30_000;
export const HEADERS_TIMEOUT_MS = 20_000;

export interface RunningServer {
  readonly server: Server;
  readonly url: string;
  /** The separate /metrics listener (KASSA_METRICS_PORT), when there is one. */
  readonly metricsUrl: string | null;
  /** The chain watchers, when enabled (KASSA_WATCHER). */
  readonly watchers: ChainWatchers | null;
  stop(): Promise<void>;
}

/** `kassa serve`: database (embedded or PostgreSQL), migrations, HTTP, background jobs. */
export async function startServer(config: Config, logger: Logger): Promise<RunningServer> {
  const runtime = await openRuntime(config, logger, 'server');
  const { ctx, db } = runtime;
  const metrics = createMetrics();
  const graphql = await startGraphqlApi({ ctx, config, changes: runtime.changes, logger });
  const app = createApp({
    ctx,
    logger,
    metrics,
    graphql: graphql.middleware,
    graphqlLane: graphql.lane,
    checkoutPage: { developmentHints: config.env === 'development' },
    metricsAccess: config.metrics,
    dashboard: { secureCookies: config.env === 'production' },
    changes: runtime.changes,
    readiness: { checkDatabase: async () => void (await db.prisma.$queryRaw`SELECT 1`) },
  });
  const server = createServer(app);
  answerClientErrors(server);
  graphql.attach(server);
  server.keepAliveTimeout = 65_000;
  // A request has 30 s to arrive whole, its headers 20 s: Node's 300 s and 60 s let a body sent a byte at a time hold
  // its connection for minutes.
  server.requestTimeout = REQUEST_TIMEOUT_MS;
  server.headersTimeout = HEADERS_TIMEOUT_MS;
  // The sandbox chain is funded and the demo organisation made before the server answers anything, so a script that
  // waits for /ready finds the printed key and can pay at once.
  const sandbox = config.sandbox ? await startSandbox(config, logger) : null;
  let demo: Awaited<ReturnType<typeof ensureDemo>> | null = null;
  let demoSignIn: string | null = null;
  try {
    demo = config.demo ? await ensureDemo(ctx, config) : null;
    demoSignIn = demo && (await demoSignInToken(ctx, demo.credentials));
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(config.port, config.host, () => resolve());
    });
  } catch (error) {
    // A port in use (or no demo): the sandbox chain started for this instance goes with it.
    await sandbox?.stop();
    throw error;
  }
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : config.port;
  const url = `http://localhost:${port}`;
  // Straight after listening, before any request can be read (stderr to a pipe or terminal is written at once).
  if (demo) printDemo(url, demo.credentials, demoSignIn);
  const metricsServer =
    config.metrics.port === null
      ? null
      : await listen(
          createServer(createMetricsApp(metrics, config.metrics.token)),
          config.metrics.port,
          config.metrics.host,
        );
  const metricsAddress = metricsServer?.address();
  const metricsUrl =
    metricsAddress && typeof metricsAddress === 'object'
      ? `http://${config.metrics.host}:${metricsAddress.port}/metrics`
      : null;
  if (!config.metrics.onMainPort && metricsServer === null) {
    logger.warn(
      { host: config.host },
      'GET /metrics is not served: set KASSA_METRICS_TOKEN or KASSA_METRICS_PORT (without them it is open only on a ' +
        'loopback-only HOST outside production; docs/operations.md#running-in-production)',
    );
  }
  const jobs = startBackgroundJobs(ctx, config, logger, metrics);
  const watchers = config.watcher.enabled
    ? startChainWatchers(ctx, { ...config.watcher, droppedAfterMinutes: config.inflightGraceMinutes }, logger, metrics)
    : null;
  logger.info(
    {
      url,
      metricsUrl,
      host: config.host,
      database: db.kind,
      env: config.env,
      networks: config.networks.map((n) => n.slug),
    },
    'kassa is listening',
  );
  for (const optIn of productionOptIns(config))
    logger.warn({ setting: optIn }, 'production runs with a safety relaxed');

  if (demo) {
    const { credentials, created } = demo;
    logger.info(
      { organisationId: credentials.organisationId, apiKey: credentials.apiKey, created },
      'demo organisation ready',
    );
  }

  let stopping: Promise<void> | null = null;
  return {
    server,
    url,
    metricsUrl,
    watchers,
    stop() {
      stopping ??= (async () => {
        // The listener closes first, so nothing new is taken on while the rest stops (even when a stalled database
        // holds up the background jobs' stop).
        const closed = new Promise<void>((resolve) => server.close(() => resolve()));
        server.closeIdleConnections();
        // In-flight requests get a moment to finish; then the rest are cut.
        const cut = setTimeout(() => server.closeAllConnections(), 5_000);
        // Each step of the stop is bounded: one waiting on a stalled database or chain must not hold the exit.
        const bounded = async (what: string, step: Promise<unknown> | undefined, limitMs = STOP_STEP_TIMEOUT_MS) => {
          try {
            await withTimeout(Promise.resolve(step), limitMs);
          } catch (error) {
            if (error instanceof TimedOut)
              logger.warn({ step: what }, 'shutdown: a step did not end in time; going on without it');
            else logger.warn({ err: error }, `shutdown: ${what} failed`);
          }
        };
        // A webhook attempt in flight ends within its timeout: the jobs' step waits for it.
        await bounded(
          'background jobs',
          jobs.stop(),
          Math.max(STOP_STEP_TIMEOUT_MS, config.webhooks.timeoutMs + 2_000),
        );
        await bounded('chain watchers', watchers?.stop());
        await bounded('sandbox chain', sandbox?.stop());
        // WebSockets are not HTTP connections server.close() waits for: close them (and the LISTEN client) too.
        await bounded('GraphQL', graphql.stop());
        metricsServer?.closeAllConnections();
        metricsServer?.close();
        await closed;
        clearTimeout(cut);
        // A handler can outlive its connection (the client hung up): let its database work finish first.
        if (!(await db.drain(10_000))) logger.warn('shutting down with database work still running');
        await bounded('database', runtime.close());
      })();
      return stopping;
    },
  };
}

function listen(server: Server, port: number, host: string): Promise<Server> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve(server));
  });
}

/** Development's offline chain; a failure is reported and the service runs on without it. */
async function startSandbox(config: Config, logger: Logger): Promise<SandboxChain | null> {
  const local = config.networks.find((network) => network.slug === 'local');
  if (!local) return null;
  try {
    // Kept beside the embedded database, so a restart continues the same chain and nothing credited is undone.
    return await startSandboxChain(local, logger, path.join(config.dataDir, 'sandbox-chain.json'));
  } catch (error) {
    logger.error(
      { err: (error as Error).message },
      'the sandbox chain could not be started; local payments are not watched',
    );
    return null;
  }
}

/**
 * The demo organisation's key, a signed curl and its owner's dashboard sign-in link, for a human at the terminal,
 * outside the JSON log stream.
 */
function printDemo(url: string, credentials: DemoCredentials, signInToken: string | null): void {
  process.stderr.write(
    `\nDemo organisation ${credentials.organisationId}\n  X-Service-Key: ${credentials.apiKey}\n  secret:        ` +
      `${credentials.apiSecret}\n` +
      `Create a session (or run \`npm run demo\`):\n\n${signedCurl(url, credentials)}\n\n` +
      (signInToken
        ? `Sign in to the dashboard as its owner (one-time link, 1 h):\n  ${demoSignInUrl(url, signInToken)}\n\n`
        : ''),
  );
}
