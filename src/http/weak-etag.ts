import { createHash } from 'node:crypto';

/**
 * The weak ETag Express computes for a response body (the `etag` package's format), for
 * answers sent without Express's `res.send` that must carry the very same one.
 */
export function weakEtag(body: Buffer): string {
  return `W/"${body.length.toString(16)}-${createHash('sha1').update(body).digest('base64').substring(0, 27)}"`;
}
