import type { CheckoutSession } from '../domain/sessions/checkout-session.js';
import { toPublicView } from '../domain/sessions/checkout-session.views.js';
import type { FlatHeaders } from '../metrics.js';
import { CHECKED_EACH_TIME } from '../http/cache-control.js';
import { jsonHeaders } from '../http/lane.js';
import { weakEtag } from '../http/weak-etag.js';

/** GET /checkout-sessions/:id's body and its ETag. */
export interface PublicViewResponse {
  readonly body: Buffer;
  readonly etag: string;
  /** Content-Type, Content-Length, ETag, Cache-Control, as the route sends them (for the cached lane's writeHead). */
  readonly headers: FlatHeaders;
}

/**
 * Made once per session object: a cached session (src/db/sessions/read-cache.ts) is the same object until it changes,
 * so its JSON and ETag are too. Both the route and src/rest/cached-session-reads.ts send these.
 */
const responses = new WeakMap<CheckoutSession, PublicViewResponse>();

export function publicViewResponse(session: CheckoutSession): PublicViewResponse {
  let response = responses.get(session);
  if (response === undefined) {
    const body = Buffer.from(JSON.stringify(toPublicView(session)), 'utf8');
    const etag = weakEtag(body);
    const headers = [...jsonHeaders(body, etag), 'Cache-Control', CHECKED_EACH_TIME];
    responses.set(session, (response = { body, etag, headers }));
  }
  return response;
}
