import { CloseCode, handleProtocols, makeServer, type ServerOptions } from 'graphql-ws';
import { GraphQLError, parse, validate, type DocumentNode, type GraphQLSchema, type ValidationRule } from 'graphql';
import type { IncomingMessage } from 'node:http';
import type { WebSocket, WebSocketServer } from 'ws';
import type { Logger } from '../logging.js';
import { errorBody } from '../http/http-error.js';
import { GRAPHQL_PARSE_OPTIONS } from './protection.js';
import type { GraphqlThrottle } from './throttle.js';

/** How many operations (in practice subscriptions) one WebSocket may have running at once. */
export const MAX_SUBSCRIPTIONS_PER_SOCKET = 20;
/** As graphql-ws: a ping every 12 s; a socket that does not answer within another 12 s is dropped. */
const KEEP_ALIVE_MS = 12_000;

export interface WebSocketOptions<Context> {
  readonly schema: GraphQLSchema;
  readonly rules: ValidationRule[];
  /** Each operation's context, from the socket's upgrade request (who is asking). */
  readonly context: (request: IncomingMessage) => Context;
  readonly logger: Logger;
  /** Most sockets open at once on this instance; one more is refused at the upgrade with 503. */
  readonly maxConnections: number;
  /** Most sockets open at once from one client address (the throttle's address, else the peer's); one more: 429. */
  readonly maxConnectionsPerAddress?: number;
  /**
   * Rate limits per client address: connections at the upgrade, every operation at subscribe before it is parsed
   * (src/graphql/throttle.ts).
   */
  readonly throttle?: Pick<GraphqlThrottle, 'admitConnection' | 'admitOperation'> &
    Partial<Pick<GraphqlThrottle, 'addressOf'>>;
  readonly onNext: NonNullable<ServerOptions['onNext']>;
  readonly onError: NonNullable<ServerOptions['onError']>;
}

/** A refusal of one operation, sent to the client as that operation's `error` message. */
function refusal(error: GraphQLError, code: string): GraphQLError {
  return new GraphQLError(error.message, {
    nodes: error.nodes,
    source: error.source,
    positions: error.positions,
    path: error.path,
    originalError: error.originalError,
    extensions: { ...error.extensions, code },
  });
}

/**
 * graphql-ws on a `ws` server with Kassa's parsing, limits and logging: a broken operation gets an `error` message and
 * the socket carries on, and every limit (subscriptions, connections, rate) refuses one thing, not the socket.
 */
export function serveGraphqlOverWebSocket<Context extends object>(
  wss: WebSocketServer,
  options: WebSocketOptions<Context>,
): { dispose(): Promise<void> } {
  const { schema, rules, context, logger } = options;
  const log = logger.child({ component: 'graphql-ws' });
  const server = makeServer<Record<string, unknown> | undefined, { socket: WebSocket; request: IncomingMessage }>({
    schema,
    onSubscribe: async (ctx, id, payload) => {
      // Counted first, whatever it holds: an operation that does not parse or validate costs work too.
      const limited = await options.throttle?.admitOperation(ctx.extra.request);
      if (limited) return [limited];
      // The operation being subscribed is already counted.
      if (Object.keys(ctx.subscriptions).length > MAX_SUBSCRIPTIONS_PER_SOCKET) {
        log.debug({ id }, 'graphql websocket: subscription refused, too many on this connection');
        return [
          new GraphQLError(
            `Too many subscriptions on this connection: at most ${MAX_SUBSCRIPTIONS_PER_SOCKET} may run at once; ` +
              `complete one before starting another`,
            { extensions: { code: 'TOO_MANY_SUBSCRIPTIONS' } },
          ),
        ];
      }
      let document: DocumentNode;
      try {
        document = parse(payload.query, GRAPHQL_PARSE_OPTIONS);
      } catch (error) {
        if (error instanceof GraphQLError) return [refusal(error, 'GRAPHQL_PARSE_FAILED')];
        throw error;
      }
      const invalid = validate(schema, document, rules);
      if (invalid.length > 0) return invalid.map((error) => refusal(error, 'GRAPHQL_VALIDATION_FAILED'));
      return {
        schema,
        document,
        operationName: payload.operationName,
        variableValues: payload.variables,
        contextValue: context(ctx.extra.request),
      };
    },
    onNext: options.onNext,
    onError: options.onError,
  });

  // Sockets open per client address, so one address cannot hold every slot of maxConnections.
  const openFrom = new Map<string, number>();
  const perAddress = options.maxConnectionsPerAddress ?? Number.POSITIVE_INFINITY;
  const addressOf = (request: IncomingMessage) =>
    options.throttle?.addressOf ? options.throttle.addressOf(request) : (request.socket.remoteAddress ?? '');
  wss.options.handleProtocols = handleProtocols;
  wss.options.verifyClient = (info, accept) => {
    // A handshake refused here gets the REST error body (as the rate limit's 429 does), not ws's plain text.
    const refuse = (status: number, message: string) =>
      accept(false, status, JSON.stringify(errorBody(status, message)), {
        'Content-Type': 'application/json; charset=utf-8',
      });
    if (wss.clients.size >= options.maxConnections) {
      log.warn(
        { maxConnections: options.maxConnections },
        'graphql websocket: connection refused, the instance holds the most it may',
      );
      return refuse(503, 'Too many GraphQL WebSocket connections on this server; try again later');
    }
    const from = addressOf(info.req);
    const full = () => (openFrom.get(from) ?? 0) >= perAddress;
    const refuseFull = () => {
      log.warn(
        { address: from, maxConnectionsPerAddress: perAddress },
        'graphql websocket: connection refused, the address holds the most it may',
      );
      refuse(429, 'Too many GraphQL WebSocket connections from this address; close one first');
    };
    // Counted as it is let through, not when the socket opens (handshakes in flight at once would all pass the check),
    // and given back when its connection closes, opened or not.
    const admit = () => {
      // Gone while its rate limit was checked: its 'close' has fired already, so it is not counted.
      if (info.req.socket.destroyed) return accept(false, 400);
      if (full()) return refuseFull();
      openFrom.set(from, (openFrom.get(from) ?? 0) + 1);
      info.req.socket.once('close', () => {
        const left = (openFrom.get(from) ?? 1) - 1;
        if (left > 0) openFrom.set(from, left);
        else openFrom.delete(from);
      });
      accept(true);
    };
    if (full()) return refuseFull();
    if (!options.throttle) return admit();
    options.throttle.admitConnection(info.req).then(
      (refused) => (refused ? accept(false, refused.status, refused.body, refused.headers) : admit()),
      (error: unknown) => {
        log.error({ err: error }, 'graphql websocket: could not check the connection rate limit');
        refuse(500, 'Internal server error');
      },
    );
  };
  wss.on('error', (error) => log.error({ err: error }, 'graphql websocket: server error'));
  wss.on('connection', (socket, request) => {
    socket.once('error', (error) => {
      // `ws` emits only what it refused in the client's frames, after starting the close itself.
      log.warn(
        { error: error.message, code: (error as { code?: string }).code, remoteAddress: request.socket.remoteAddress },
        'graphql websocket: connection closed on a protocol error from the client',
      );
      if (socket.readyState === socket.OPEN) socket.close(CloseCode.BadRequest, 'Bad request');
    });

    let pongWait: NodeJS.Timeout | null = null;
    const pinger = setInterval(() => {
      if (socket.readyState !== socket.OPEN) return;
      pongWait = setTimeout(() => socket.terminate(), KEEP_ALIVE_MS);
      socket.once('pong', () => {
        if (pongWait) clearTimeout(pongWait);
        pongWait = null;
      });
      socket.ping();
    }, KEEP_ALIVE_MS);

    const closed = server.opened(
      {
        protocol: socket.protocol,
        send: (data) =>
          new Promise<void>((resolve, reject) => {
            if (socket.readyState !== socket.OPEN) return resolve();
            socket.send(data, (error) => (error ? reject(error) : resolve()));
          }),
        close: (code, reason) => socket.close(code, reason),
        onMessage: (handle) =>
          socket.on('message', async (data) => {
            try {
              await handle(String(data));
            } catch (error) {
              // A bug of ours (client mistakes are answered above): logged with its stack, the socket closed.
              log.error({ err: error }, 'graphql websocket: unexpected error handling a message');
              if (socket.readyState === socket.OPEN)
                socket.close(CloseCode.InternalServerError, 'Internal server error');
            }
          }),
      },
      { socket, request },
    );

    socket.once('close', (code, reason) => {
      if (pongWait) clearTimeout(pongWait);
      clearInterval(pinger);
      closed(code, String(reason)).catch((error: unknown) =>
        log.error({ err: error }, 'graphql websocket: error while closing'),
      );
    });
  });

  return {
    async dispose() {
      for (const client of wss.clients) client.close(1001, 'Going away');
      wss.removeAllListeners();
      await new Promise<void>((resolve, reject) => wss.close((error) => (error ? reject(error) : resolve())));
    },
  };
}
