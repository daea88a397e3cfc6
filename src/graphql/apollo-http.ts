import { ApolloServer, HeaderMap, type ApolloServerPlugin } from '@apollo/server';
import type { Request, RequestHandler, Response } from 'express';
import { GraphQLError } from 'graphql';
import type { DomainContext } from '../domain/context.js';
import { CachedQueries, newQueryTrace, type QueryTrace } from './cached-queries.js';
import type { GraphqlContext } from './context.js';
import { BODY_NOT_JSON, CSRF_PREFLIGHT_HEADERS, RAW_BODY, type LaneRequest } from './graphql-lane.js';
import { withTrustedDocument } from './page-documents.js';

/**
 * Apollo over HTTP on Express, with the pieces that let an answer be kept and served again
 * before Express (src/graphql/graphql-lane.ts, cached-queries.ts).
 */

/** Records the operation and whether the answer has errors, for CachedQueries.keep. */
export const traceOperations: ApolloServerPlugin<GraphqlContext> = {
  async requestDidStart() {
    return {
      async didResolveOperation({ contextValue, operation }) {
        if (contextValue.trace) contextValue.trace.operation = operation;
      },
      async willSendResponse({ contextValue, response }) {
        if (contextValue.trace)
          contextValue.trace.errors =
            response.body.kind !== 'single' || response.body.singleResult.errors !== undefined;
      },
    };
  },
};

/**
 * Apollo on Express, as @as-integrations/express5's middleware does it, plus one thing: an answer
 * that may be served again is kept (src/graphql/cached-queries.ts) before it is sent.
 */
export function apolloKeepingAnswers(
  apollo: ApolloServer<GraphqlContext>,
  ctx: DomainContext,
  cached: CachedQueries,
  context: (req: Request, trace: QueryTrace) => GraphqlContext,
): RequestHandler {
  return async (req, res) => {
    const headers = new HeaderMap();
    for (const [key, value] of Object.entries(req.headers))
      if (value !== undefined) headers.set(key, Array.isArray(value) ? value.join(', ') : value);
    const method = req.method.toUpperCase();
    // A trusted document named by id is given to Apollo as its text (src/graphql/page-documents.ts); a trusted query
    // over GET passes Apollo's CSRF prevention without a preflight header.
    const trusted = withTrustedDocument(method, searchOf(req.url), req.body);
    if ('refused' in trusted) return answerTransportError(res, 400, trusted.refused.code, trusted.refused.message);
    if (trusted.trustedQuery) headers.set(CSRF_PREFLIGHT_HEADERS[1], 'true');
    const trace = newQueryTrace();
    const answer = await apollo.executeHTTPGraphQLRequest({
      httpGraphQLRequest: { method, headers, search: trusted.search, body: trusted.body },
      context: async () => context(req, trace),
    });
    for (const [key, value] of answer.headers) res.setHeader(key, value);
    res.statusCode = answer.status ?? 200;
    if (answer.body.kind === 'complete') {
      // A POST is kept only when the lane read its body (it files it by the bytes sent); a GET by its URL.
      const raw = (req as LaneRequest)[RAW_BODY];
      const asked = req.method === 'GET' ? req.originalUrl : req.method === 'POST' ? raw : undefined;
      if (asked !== undefined && trace.readAt !== undefined) {
        const outcome = {
          operation: trace.operation,
          errors: trace.errors,
          status: res.statusCode,
          headers: headerPairs(res),
          body: answer.body.string,
        };
        const request = { method: req.method as 'GET' | 'POST', asked, accept: req.headers.accept };
        cached.keep(request, ctx, outcome, trace.sessions, trace.readAt);
      }
      res.send(answer.body.string);
      return;
    }
    for await (const chunk of answer.body.asyncIterator) res.write(chunk);
    res.end();
  };
}

/** The headers set on `res` so far, as the lane will send them again (Content-Type as Express's send leaves it). */
function headerPairs(res: Response): Array<[string, string]> {
  const pairs: Array<[string, string]> = [];
  for (const [name, value] of Object.entries(res.getHeaders())) {
    if (value === undefined || name === 'x-request-id') continue;
    pairs.push([name, Array.isArray(value) ? value.join(', ') : String(value)]);
  }
  return pairs;
}

/**
 * A refusal before Apollo runs (a body parser's, an unknown trusted document): the GraphQL way, one error in `errors`
 * with its code, under the HTTP status.
 */
export function answerTransportError(res: Response, status: number, code: string, message: string): void {
  res.status(status).json({ errors: [new GraphQLError(message, { extensions: { code } }).toJSON()] });
}

/** A body the lane (graphql-lane.ts) read and found not to be JSON: answered as express.json answers one. */
export const bodyReadByLane: RequestHandler = (req, _res, next) => {
  if ((req as Request & { [BODY_NOT_JSON]?: boolean })[BODY_NOT_JSON])
    return next(Object.assign(new Error('Malformed JSON'), { status: 400, type: 'entity.parse.failed' }));
  next();
};

/**
 * The query string of a request target (from its `?`, or empty), whatever its form: `new URL` throws on an
 * absolute-form target with an invalid authority (`GET http://h:99999/graphql?…`), which Node and Express accept.
 */
function searchOf(target: string): string {
  const at = target.indexOf('?');
  return at < 0 ? '' : target.slice(at);
}
