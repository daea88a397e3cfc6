import type { IncomingMessage, ServerResponse } from 'node:http';
import type { DomainContext } from '../domain/context.js';
import { rateLimit } from '../domain/organisations/throttle.js';
import type { FlatHeaders } from '../metrics.js';
import type { CachedQueries } from './cached-queries.js';
import type { GraphqlThrottle } from './throttle.js';
import { readWholeBody } from '../http/lane.js';
import { DOCUMENT_ID } from './page-documents.js';

/** Sends a kept answer, its request logged and counted (src/app.ts: src/metrics.ts's answerAtOnce). */
export type LaneAnswer = (
  req: IncomingMessage,
  res: ServerResponse,
  status: number,
  headers: FlatHeaders,
  body: Buffer,
  /** When the lane began on it (performance.now()), when that was before the answer was at hand. */
  started?: number,
) => void;

/** How a request the lane took goes on: answered here, or handed to Express (with its body read). */
export type GraphqlLane = (
  req: IncomingMessage,
  res: ServerResponse,
  handOn: () => void,
  answer: LaneAnswer,
) => boolean;

/** Marks a request the lane counted against the GraphQL limit already (throttle.http then does not count it again). */
export const COUNTED = Symbol('kassa.graphql.counted');
/**
 * Marks a request whose body the lane read and found not to be JSON (the GraphQL route answers it as the body parser
 * would).
 */
export const BODY_NOT_JSON = Symbol('kassa.graphql.bodyNotJson');
/** The body as the lane read it, for the route to file the answer under (CachedQueries.keep). */
export const RAW_BODY = Symbol('kassa.graphql.rawBody');

export type LaneRequest = IncomingMessage & {
  body?: unknown;
  [COUNTED]?: boolean;
  [BODY_NOT_JSON]?: boolean;
  [RAW_BODY]?: string;
};

const JSON_TYPE = /^application\/json\s*(;\s*charset\s*=\s*"?utf-8"?\s*)?$/i;

/**
 * The headers Apollo's CSRF prevention accepts a simple request (a GET) with, non-empty: given to Apollo
 * (graphql-server.ts: csrfPrevention) and checked by the lane before it answers a GET, so both agree.
 */
export const CSRF_PREFLIGHT_HEADERS = ['x-apollo-operation-name', 'apollo-require-preflight'] as const;

/**
 * GraphQL queries answered from kept answers before Express, counted as throttle.http counts them (a GET of a current
 * answer uncounted, as a REST GET is); the rest goes on to Express, marked counted.
 */
export function graphqlQueryLane(
  ctx: DomainContext,
  options: { cached: CachedQueries; throttle: GraphqlThrottle; bodyLimit: number },
): GraphqlLane {
  return (req: LaneRequest, res, handOn, answer) => {
    if (req.method === 'GET') {
      if (!takesGet(req)) return false;
      const kept = options.cached.find('GET', req.url!, req.headers.accept, ctx, req.socket);
      if (kept !== undefined) {
        answer(req, res, kept.status, kept.sentHeaders, kept.body);
        return true;
      }
      return counted(req, handOn, () => coldOr('GET', req.url!, req, res, answer, handOn));
    }
    if (req.method !== 'POST' || req.url !== '/graphql') return false;
    const { headers } = req;
    const length = Number(headers['content-length']);
    const type = headers['content-type'];
    if (
      !Number.isInteger(length) ||
      length <= 0 ||
      length > options.bodyLimit ||
      headers['transfer-encoding'] !== undefined
    )
      return false;
    if (headers['content-encoding'] !== undefined || typeof type !== 'string' || !JSON_TYPE.test(type)) return false;
    return counted(req, handOn, () => whenBodyArrived(req, res, handOn, answer));
  };

  /**
   * Counts the request against the caller's GraphQL limit, in memory when far from it; over the limit (or with the
   * counters unreachable) the route counts it again and answers as it always does. A counted request is marked so.
   */
  function counted(req: LaneRequest, handOn: () => void, goOn: () => void): true {
    let counting: Promise<void> | undefined;
    try {
      counting = rateLimit(ctx, ['graphql', options.throttle.addressOf(req)]);
    } catch {
      handOn();
      return true;
    }
    if (counting === undefined) {
      req[COUNTED] = true;
      goOn();
      return true;
    }
    counting.then(() => {
      req[COUNTED] = true;
      goOn();
    }, handOn);
    return true;
  }

  /** Goes on with the body once it is all here; a body that never arrives whole (the client went away) ends it. */
  function whenBodyArrived(req: LaneRequest, res: ServerResponse, handOn: () => void, answer: LaneAnswer): void {
    readWholeBody(req)
      .then((body) => serve(body, req, res, handOn, answer))
      .catch(() => res.destroy());
  }

  function serve(bytes: Buffer, req: LaneRequest, res: ServerResponse, handOn: () => void, answer: LaneAnswer): void {
    const text = bytes.toString('utf8');
    const kept = options.cached.find('POST', text, req.headers.accept, ctx, req.socket);
    if (kept !== undefined) {
      answer(req, res, kept.status, kept.sentHeaders, kept.body);
      return;
    }
    coldOr('POST', text, req, res, answer, () => {
      let body: unknown;
      try {
        body = JSON.parse(text);
      } catch {
        body = undefined;
      }
      if (typeof body !== 'object' || body === null) req[BODY_NOT_JSON] = true;
      else {
        req.body = body;
        req[RAW_BODY] = text;
      }
      handOn();
    });
  }

  /** A cold read answered without Apollo when CachedQueries.answerCold can (src/graphql/cold-queries.ts); else goOn. */
  function coldOr(
    method: 'GET' | 'POST',
    asked: string,
    req: LaneRequest,
    res: ServerResponse,
    answer: LaneAnswer,
    goOn: () => void,
  ): void {
    const started = performance.now();
    const cold = options.cached.answerCold(method, asked, req.headers.accept, ctx);
    if (cold === undefined) return goOn();
    cold
      .then(
        (made) => (made === undefined ? goOn() : answer(req, res, made.status, made.headers, made.body, started)),
        goOn,
      )
      .catch(() => res.destroy());
  }
}

/**
 * A GET the lane may answer: /graphql with a query string, no body, no Content-Type, no conditional header, and a CSRF
 * preflight header Apollo asks a GET for (CSRF_PREFLIGHT_HEADERS), unless it names a trusted document.
 */
function takesGet(req: IncomingMessage): boolean {
  const { url, headers } = req;
  if (url === undefined || !url.startsWith('/graphql?')) return false;
  if (
    headers['content-length'] !== undefined ||
    headers['transfer-encoding'] !== undefined ||
    headers['content-type'] !== undefined ||
    headers['if-none-match'] !== undefined ||
    headers['if-modified-since'] !== undefined
  )
    return false;
  // A trusted query named first in the query string passes CSRF prevention without a header (page-documents.ts); a
  // kept answer to this very URL means the route took it as one (an unknown id or a `query` beside it is refused).
  if (url.startsWith(TRUSTED_GET_PREFIX)) return true;
  for (const name of CSRF_PREFLIGHT_HEADERS) {
    const value = headers[name];
    if (typeof value === 'string' && value.length > 0) return true;
  }
  return false;
}

const TRUSTED_GET_PREFIX = `/graphql?${DOCUMENT_ID}=`;
