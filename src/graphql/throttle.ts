import type { IncomingMessage } from 'node:http';
import type { RequestHandler, Response } from 'express';
import { Kind, parse, type DocumentNode, type FragmentDefinitionNode, type GraphQLError, type SelectionSetNode } from 'graphql';
import type { DomainContext } from '../domain/context.js';
import { rateLimit, RateLimitedError, throttleBind } from '../domain/throttle.js';
import { clientAddressOf, compileTrustProxy, upgradeClientAddress } from '../rest/client-address.js';
import { errorBody } from '../rest/http-error.js';
import { toGraphqlError } from './errors.js';
import { GRAPHQL_PARSE_OPTIONS } from './protection.js';

/**
 * Rate limits of the payer's GraphQL surface (README "Rate limits"): every
 * operation counts against the caller's address, every `bindTransaction` in it
 * against the same per-session and per-address limits as REST bind-tx (the
 * domain's throttleBind), and every WebSocket upgrade against the connection
 * limit. Checked before Apollo or graphql-ws run the operation, so the
 * resolvers stay as they are.
 */
export interface GraphqlThrottle {
  /** Express middleware before Apollo: over a limit → HTTP 429 with Retry-After and a TOO_MANY_REQUESTS error. */
  readonly http: RequestHandler;
  /** A WebSocket upgrade: null to accept, or the refusal to answer it with. */
  admitConnection(request: IncomingMessage): Promise<{ status: number; body: string; headers: Record<string, string> } | null>;
  /** One operation over a WebSocket (already parsed): null to run it, or the error to send as its `error` message. */
  admitOperation(request: IncomingMessage, document: DocumentNode, operationName: string | null | undefined, variables: unknown): Promise<GraphQLError | null>;
}

export function graphqlThrottle(ctx: DomainContext): GraphqlThrottle {
  const trust = compileTrustProxy(ctx.requestGuard.trustProxy);

  async function admit(address: string, binds: ReadonlyArray<string | null>): Promise<void> {
    await rateLimit(ctx, ['graphql', address]);
    for (const sessionId of binds) await throttleBind(ctx, sessionId, address);
  }

  return {
    async http(req, res, next) {
      try {
        const request = (req.method === 'GET' ? req.query : req.body) as Record<string, unknown> | undefined;
        const document = typeof request?.query === 'string' && request.query.includes('bindTransaction') ? parseQuietly(request.query) : null;
        await admit(clientAddressOf(req), document ? bindTargets(document, request?.operationName, parseVariables(request?.variables)) : []);
        next();
      } catch (error) {
        if (error instanceof RateLimitedError) return tooManyRequests(res, error);
        next(error);
      }
    },

    async admitConnection(request) {
      try {
        await rateLimit(ctx, ['websocket', upgradeClientAddress(request, trust)]);
        return null;
      } catch (error) {
        if (!(error instanceof RateLimitedError)) throw error;
        return {
          status: 429,
          body: JSON.stringify(errorBody(429, error.message)),
          headers: { 'Content-Type': 'application/json; charset=utf-8', 'Retry-After': String(error.retryAfterSeconds) },
        };
      }
    },

    async admitOperation(request, document, operationName, variables) {
      try {
        await admit(upgradeClientAddress(request, trust), bindTargets(document, operationName, variables));
        return null;
      } catch (error) {
        if (error instanceof RateLimitedError) return toGraphqlError(error);
        throw error;
      }
    },
  };
}

function tooManyRequests(res: Response, error: RateLimitedError): void {
  res.status(429).set('Retry-After', String(error.retryAfterSeconds)).json({ errors: [toGraphqlError(error).toJSON()] });
}

function parseQuietly(query: string): DocumentNode | null {
  try {
    return parse(query, GRAPHQL_PARSE_OPTIONS);
  } catch {
    // Apollo answers the syntax error itself.
    return null;
  }
}

/** GET sends variables as JSON text. */
function parseVariables(variables: unknown): unknown {
  if (typeof variables !== 'string') return variables;
  try {
    return JSON.parse(variables);
  } catch {
    return undefined;
  }
}

/**
 * The session id of every `bindTransaction` the operation would run (null when
 * it names none readably: a bind is still counted per address), through
 * aliases, inline fragments and fragment spreads.
 */
export function bindTargets(document: DocumentNode, operationName: unknown, variables: unknown): Array<string | null> {
  const operations = document.definitions.filter((definition) => definition.kind === Kind.OPERATION_DEFINITION);
  const operation =
    typeof operationName === 'string' && operationName ? operations.find((candidate) => candidate.name?.value === operationName) : operations.length === 1 ? operations[0] : undefined;
  if (!operation || operation.operation !== 'mutation') return [];
  const fragments = new Map(
    document.definitions.filter((definition): definition is FragmentDefinitionNode => definition.kind === Kind.FRAGMENT_DEFINITION).map((fragment) => [fragment.name.value, fragment]),
  );
  const values = variables && typeof variables === 'object' ? (variables as Record<string, unknown>) : {};
  const targets: Array<string | null> = [];
  const visited = new Set<string>();
  const walk = (selections: SelectionSetNode) => {
    for (const selection of selections.selections) {
      if (selection.kind === Kind.INLINE_FRAGMENT) walk(selection.selectionSet);
      else if (selection.kind === Kind.FRAGMENT_SPREAD) {
        const fragment = fragments.get(selection.name.value);
        if (fragment && !visited.has(fragment.name.value)) {
          visited.add(fragment.name.value);
          walk(fragment.selectionSet);
        }
      } else if (selection.name.value === 'bindTransaction') {
        const argument = selection.arguments?.find((candidate) => candidate.name.value === 'sessionId')?.value;
        const value = argument?.kind === Kind.STRING ? argument.value : argument?.kind === Kind.VARIABLE ? values[argument.name.value] : undefined;
        targets.push(typeof value === 'string' ? value : null);
      }
    }
  };
  walk(operation.selectionSet);
  return targets;
}
