import type { IncomingMessage, Server } from 'node:http';
import type { Duplex } from 'node:stream';
import { STATUS_CODES } from 'node:http';
import { ApolloServer, type ApolloServerPlugin } from '@apollo/server';
import { ApolloServerPluginLandingPageDisabled } from '@apollo/server/plugin/disabled';
import { ApolloServerPluginLandingPageLocalDefault } from '@apollo/server/plugin/landingPage/default';
import express, { Router, type ErrorRequestHandler, type RequestHandler } from 'express';
import type { ExecutionResult } from 'graphql';
import { WebSocketServer } from 'ws';
import type { Config } from '../config.js';
import type { ChangeFeed } from '../db/change-feed/change-feed.js';
import type { DomainContext } from '../domain/context.js';
import { getCheckoutSession } from '../domain/sessions/get-checkout-session.js';
import { clientAddressOf } from '../http/client-address.js';
import { takeUpgrades } from '../http/plain-upgrades.js';
import { errorBody } from '../http/http-error.js';
import type { Logger } from '../logging.js';
import type { GraphqlContext } from './context.js';
import { formatGraphqlError, rateLimitedStatus, type FormatErrorOptions } from './errors.js';
import { allValidationRules, GRAPHQL_PARSE_OPTIONS, graphqlProtection } from './protection.js';
import { graphqlSchema } from './schema.js';
import { sessionUpdatesFeed } from './session-updates.js';
import { graphqlThrottle } from './throttle.js';
import { answerTransportError, apolloKeepingAnswers, bodyReadByLane, traceOperations } from './apollo-http.js';
import { CachedQueries, type QueryTrace } from './cached-queries.js';
import { ColdQueries } from './cold-queries.js';
import { CSRF_PREFLIGHT_HEADERS, graphqlQueryLane, type GraphqlLane } from './graphql-lane.js';
import { serveGraphqlOverWebSocket } from './websocket.js';

/** Where GraphQL is served, over HTTP and WebSocket (graphql-ws protocol). */
export const GRAPHQL_PATH = '/graphql';
/** As for REST (docs/api/rest.md#errors, 413): a request body or WebSocket message over 100 KB is refused. */
export const GRAPHQL_BODY_LIMIT_BYTES = 100 * 1024;

export interface GraphqlDependencies {
  readonly ctx: DomainContext;
  readonly config: Pick<
    Config,
    'env' | 'graphqlIntrospection' | 'graphqlSandbox' | 'graphqlMaxConnections' | 'graphqlMaxConnectionsPerAddress'
  >;
  /** The runtime's change feed (src/db/change-feed/change-feed.ts): live updates re-read a session when it changes. */
  readonly changes: Pick<ChangeFeed, 'watch'>;
  readonly logger: Logger;
}

export interface GraphqlApi {
  /** Mount before any other body parser: it serves GRAPHQL_PATH and passes everything else on. */
  readonly middleware: Router;
  /** Kept answers of queries, served before Express (src/graphql/graphql-lane.ts); createApp runs it first. */
  readonly lane: GraphqlLane;
  readonly cachedQueries: CachedQueries;
  /** Serves subscriptions on the HTTP server's upgrade requests to GRAPHQL_PATH. */
  attach(server: Server): void;
  /**
   * Closes every WebSocket (1001) and Apollo (the runtime closes the change feed); call before closing the HTTP server.
   */
  stop(): Promise<void>;
}

/**
 * The payer's GraphQL surface (Apollo Server 5 on Express 5, graphql-ws for
 * subscriptions) over the same domain context REST uses.
 */
export async function startGraphqlApi({ ctx, config, changes, logger }: GraphqlDependencies): Promise<GraphqlApi> {
  const schema = await graphqlSchema();
  const development = config.env === 'development';
  const protection = graphqlProtection({ introspection: config.graphqlIntrospection });
  const errorOptions: FormatErrorOptions = {
    development,
    logError: (error) => logger.error({ err: error }, 'graphql: unexpected error'),
  };
  // One watch and one read per change per session, whatever the number of its subscribers.
  const updates = sessionUpdatesFeed(changes, (id) => getCheckoutSession(ctx, id));
  const context = (clientAddress: string, trace?: QueryTrace): GraphqlContext => ({
    domain: ctx,
    updates,
    clientAddress,
    trace,
  });
  const cachedQueries = new CachedQueries();
  cachedQueries.cold = new ColdQueries(schema);
  const throttle = graphqlThrottle(ctx);

  const apollo = new ApolloServer<GraphqlContext>({
    schema,
    csrfPrevention: { requestHeaders: [...CSRF_PREFLIGHT_HEADERS] },
    allowBatchedHttpRequests: false,
    // Off: an operation registered once and then sent by its hash alone would run unseen by anything that reads the
    // query text.
    persistedQueries: false,
    introspection: config.graphqlIntrospection,
    // Never, in any mode: a stack trace is for the log (formatGraphqlError).
    includeStacktraceInErrorResponses: false,
    validationRules: protection.validationRules,
    parseOptions: GRAPHQL_PARSE_OPTIONS,
    formatError: (formatted, error) => formatGraphqlError(formatted, error, errorOptions),
    // graphql-armor's and the landing-page plugins are typed against Apollo's CommonJS build; the runtime objects are
    // the same.
    plugins: [
      traceOperations,
      rateLimitedStatus,
      ...protection.plugins,
      config.graphqlSandbox
        ? ApolloServerPluginLandingPageLocalDefault({ embed: true, includeCookies: false })
        : ApolloServerPluginLandingPageDisabled(),
    ] as unknown as ApolloServerPlugin<GraphqlContext>[],
    logger: apolloLogger(logger),
    // Kassa shuts down on its own signals (src/cli/main.ts); Apollo would otherwise re-raise SIGTERM and kill the
    // process mid-shutdown.
    stopOnTerminationSignals: false,
  });
  await apollo.start();

  const middleware = Router();
  // A route (not `use`), so metrics label these requests "/graphql" rather than "unmatched".
  middleware.all(
    GRAPHQL_PATH,
    // Counted before the body is parsed: malformed and oversized bodies count too.
    throttle.http,
    express.json({ limit: GRAPHQL_BODY_LIMIT_BYTES }),
    bodyAlwaysSet,
    bodyReadByLane,
    apolloKeepingAnswers(apollo, ctx, cachedQueries, (req, trace) => context(clientAddressOf(req), trace)),
    transportErrors,
  );

  let sockets: { dispose(): void | Promise<void> } | null = null;
  let wsServer: WebSocketServer | null = null;
  const rules = allValidationRules(protection);

  return {
    middleware,
    lane: graphqlQueryLane(ctx, { cached: cachedQueries, throttle, bodyLimit: GRAPHQL_BODY_LIMIT_BYTES }),
    cachedQueries,
    attach(server) {
      const wss = new WebSocketServer({ noServer: true, path: GRAPHQL_PATH, maxPayload: GRAPHQL_BODY_LIMIT_BYTES });
      wsServer = wss;
      // Only WebSocket handshakes to GRAPHQL_PATH are upgrades; any other request with an Upgrade header (h2c) is
      // served as plain HTTP/1.1 (src/http/plain-upgrades.ts).
      takeUpgrades(server, isGraphqlWebSocket, (req, socket, head) =>
        wss.handleUpgrade(req, socket, head, (client) => wss.emit('connection', client, req)),
      );
      // A handshake ws refuses (a missing or bad key, version or subprotocol list) is answered with the error body.
      wss.on('wsClientError', (error, socket) =>
        refuseHandshake(socket, 400, error.message, /version/i.test(error.message) ? VERSION_HEADER : {}),
      );
      sockets = serveGraphqlOverWebSocket(wsServer, {
        schema,
        rules,
        logger,
        maxConnections: config.graphqlMaxConnections,
        maxConnectionsPerAddress: config.graphqlMaxConnectionsPerAddress,
        throttle,
        context: (request) => context(throttle.addressOf(request)),
        onNext: (_ctx, _id, _payload, _args, result: ExecutionResult) =>
          result.errors
            ? {
                ...result,
                errors: result.errors.map((error) => formatGraphqlError(error.toJSON(), error, errorOptions)),
              }
            : undefined,
        onError: (_ctx, _id, _payload, errors) =>
          errors.map((error) => formatGraphqlError(error.toJSON(), error, errorOptions)),
      });
    },
    async stop() {
      await sockets?.dispose();
      updates.close();
      await apollo.stop();
    },
  };
}

/** A WebSocket handshake to GRAPHQL_PATH: a GET (ws answers one that is malformed: refuseHandshake). */
function isGraphqlWebSocket(req: IncomingMessage): boolean {
  const url = req.url ?? '';
  const query = url.indexOf('?');
  return (
    req.method === 'GET' &&
    (query < 0 ? url : url.slice(0, query)) === GRAPHQL_PATH &&
    req.headers.upgrade?.toLowerCase() === 'websocket'
  );
}

const VERSION_HEADER = { 'Sec-WebSocket-Version': '13' };

/** Ends a refused handshake with `status` and the error body (as src/rest/client-error.ts answers the parser's). */
function refuseHandshake(socket: Duplex, status: number, message: string, headers: Record<string, string>): void {
  const body = JSON.stringify(errorBody(status, message));
  let head = `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\nConnection: close\r\n`;
  head += `Content-Type: application/json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\n`;
  for (const [name, value] of Object.entries(headers)) head += `${name}: ${value}\r\n`;
  if (socket.writable) socket.end(`${head}\r\n${body}`, () => socket.destroy());
  else socket.destroy();
}

/** express.json leaves req.body unset for other content types; Apollo then refuses them itself (CSRF, 400). */
const bodyAlwaysSet: RequestHandler = (req, _res, next) => {
  req.body ??= {};
  next();
};

/** Body-parser refusals on /graphql, answered the GraphQL way (an `errors` list) with the HTTP status. */
const transportErrors: ErrorRequestHandler = (error, _req, res, next) => {
  const typed = error as { type?: string; status?: number; limit?: number };
  if (res.headersSent || typeof typed?.status !== 'number' || typed.status < 400 || typed.status >= 500)
    return next(error);
  const [code, message] =
    typed.type === 'entity.too.large'
      ? ['PAYLOAD_TOO_LARGE', `Request body is larger than the limit of ${Math.round((typed.limit ?? 0) / 1024)} KB`]
      : typed.type === 'entity.parse.failed'
        ? ['BAD_REQUEST', 'Malformed JSON in the request body']
        : typed.type === 'charset.unsupported' || typed.type === 'encoding.unsupported'
          ? ['BAD_REQUEST', 'Unsupported body encoding: send UTF-8 JSON']
          : ['BAD_REQUEST', STATUS_CODES[typed.status] ?? 'Bad request'];
  answerTransportError(res, typed.status, code, message);
};

function apolloLogger(logger: Logger) {
  return {
    debug: (message: string) => logger.debug({ component: 'apollo' }, message),
    info: (message: string) => logger.info({ component: 'apollo' }, message),
    warn: (message: string) => logger.warn({ component: 'apollo' }, message),
    error: (message: string) => logger.error({ component: 'apollo' }, message),
  };
}
