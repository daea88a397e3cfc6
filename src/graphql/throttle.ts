import type { IncomingMessage } from 'node:http';
import type { Request, RequestHandler, Response } from 'express';
import { COUNTED } from './graphql-lane.js';
import type { GraphQLError } from 'graphql';
import type { DomainContext } from '../domain/context.js';
import { rateLimit, RateLimitedError } from '../domain/organisations/throttle.js';
import { clientAddressOf, compileTrustProxy, upgradeClientAddress } from '../http/client-address.js';
import { errorBody } from '../http/http-error.js';
import { toGraphqlError } from './errors.js';

/**
 * Rate limits of the payer's GraphQL surface (docs/api/rest.md#rate-limits): every HTTP request and WebSocket
 * operation, however malformed, counts against the caller's address; binds are counted where they run, as REST's are.
 */
export interface GraphqlThrottle {
  /**
   * Express middleware before the body parser and Apollo: over the limit → HTTP 429 with Retry-After and a
   * TOO_MANY_REQUESTS error.
   */
  readonly http: RequestHandler;
  /** A WebSocket upgrade: null to accept, or the refusal to answer it with. */
  admitConnection(
    request: IncomingMessage,
  ): Promise<{ status: number; body: string; headers: Record<string, string> } | null>;
  /**
   * One operation over a WebSocket, before it is parsed: null to go on, or the error to send as its `error` message.
   */
  admitOperation(request: IncomingMessage): Promise<GraphQLError | null>;
  /** The client's address of a WebSocket's upgrade request, by TRUST_PROXY as for HTTP. */
  addressOf(request: IncomingMessage): string;
}

export function graphqlThrottle(ctx: DomainContext): GraphqlThrottle {
  const trust = compileTrustProxy(ctx.requestGuard.trustProxy);
  const addressOf = (request: IncomingMessage) => upgradeClientAddress(request, trust);

  return {
    async http(req, res, next) {
      // Counted already by the lane that read its body first (graphql-lane.ts).
      if ((req as Request & { [COUNTED]?: boolean })[COUNTED]) return next();
      try {
        await rateLimit(ctx, ['graphql', clientAddressOf(req)]);
        next();
      } catch (error) {
        if (error instanceof RateLimitedError) return tooManyRequests(res, error);
        next(error);
      }
    },

    async admitConnection(request) {
      try {
        await rateLimit(ctx, ['websocket', addressOf(request)]);
        return null;
      } catch (error) {
        if (!(error instanceof RateLimitedError)) throw error;
        return {
          status: 429,
          body: JSON.stringify(errorBody(429, error.message)),
          headers: {
            'Content-Type': 'application/json; charset=utf-8',
            'Retry-After': String(error.retryAfterSeconds),
          },
        };
      }
    },

    async admitOperation(request) {
      try {
        await rateLimit(ctx, ['graphql', addressOf(request)]);
        return null;
      } catch (error) {
        if (error instanceof RateLimitedError) return toGraphqlError(error);
        throw error;
      }
    },

    addressOf,
  };
}

function tooManyRequests(res: Response, error: RateLimitedError): void {
  res
    .status(429)
    .set('Retry-After', String(error.retryAfterSeconds))
    .json({ errors: [toGraphqlError(error).toJSON()] });
}
