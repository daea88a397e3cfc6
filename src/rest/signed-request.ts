import type { Request } from 'express';
import type { SignedRequest } from '../domain/authenticate-merchant.js';
import { clientAddressOf } from './client-address.js';
import { rawBytes } from './json-body.js';

/**
 * The signed parts of a merchant call. `covers: 'body'` is create's
 * scheme (`{timestamp}.{rawBody}`); `'request'` adds the method and the request
 * target, the path and query exactly as in the request line, not decoded.
 */
export function signedRequestOf(req: Request, covers: 'body' | 'request'): SignedRequest {
  return {
    apiKey: req.get('x-service-key'),
    timestamp: req.get('x-service-timestamp'),
    signature: req.get('x-service-signature'),
    rawBody: rawBytes(req),
    request: covers === 'request' ? { method: req.method, target: requestTarget(req) } : null,
    clientAddress: clientAddressOf(req),
  };
}

/**
 * `req.originalUrl` is the request line's target as Node received it. A client
 * talking to a proxy may send the absolute form (`http://host/path?q`): its
 * path and query are what the merchant signed.
 */
export function requestTarget(req: Request): string {
  const target = req.originalUrl;
  if (target.startsWith('/')) return target;
  const absolute = /^[a-z][a-z0-9+.-]*:\/\/[^/?#]*(.*)$/i.exec(target);
  return absolute ? absolute[1] || '/' : target;
}
