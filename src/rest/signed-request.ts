import type { IncomingHttpHeaders } from 'node:http';
import type { Request } from 'express';
import type { SignedRequest } from '../domain/organisations/authenticate-merchant.js';
import { clientAddressOf } from '../http/client-address.js';
import { rawBytes } from '../http/json-body.js';

/**
 * The signed parts of a merchant call: `'body'` is create's scheme (`{timestamp}.{rawBody}`); `'request'` adds the
 * method and the request target exactly as in the request line, not decoded.
 */
export function signedRequestOf(req: Request, covers: 'body' | 'request'): SignedRequest {
  return signedRequestFrom(
    { headers: req.headers, rawBody: rawBytes(req), clientAddress: clientAddressOf(req) },
    covers === 'request' ? { method: req.method, target: requestTarget(req) } : null,
  );
}

/** signedRequestOf for a request read outside Express (src/rest/create-lane.ts). */
export function signedRequestFrom(
  call: { readonly headers: IncomingHttpHeaders; readonly rawBody: Buffer; readonly clientAddress: string },
  request: SignedRequest['request'],
): SignedRequest {
  return {
    apiKey: header(call.headers, 'x-service-key'),
    timestamp: header(call.headers, 'x-service-timestamp'),
    signature: header(call.headers, 'x-service-signature'),
    rawBody: call.rawBody,
    request,
    clientAddress: call.clientAddress,
  };
}

// As Express's req.get reads it: Node joins a repeated header into one string.
function header(headers: IncomingHttpHeaders, name: string): string | undefined {
  const value = headers[name];
  return Array.isArray(value) ? value.join(', ') : value;
}

/**
 * The request line's target as Node received it: a client talking to a proxy may send the absolute form
 * (`http://host/path?q`), whose path and query are what the merchant signed.
 */
export function requestTarget(req: Request): string {
  const target = req.originalUrl;
  if (target.startsWith('/')) return target;
  const absolute = /^[a-z][a-z0-9+.-]*:\/\/[^/?#]*(.*)$/i.exec(target);
  return absolute ? absolute[1] || '/' : target;
}
