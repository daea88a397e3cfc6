import http from 'node:http';
import https from 'node:https';
import type { LookupFunction } from 'node:net';
import { DomainError } from '../domain/shared/errors.js';
import { HTTPS_ONLY_PROBLEM } from '../domain/webhooks/webhook-endpoint.schema.js';
import type { ReceiverResponse } from '../domain/webhooks/webhook-ports.js';
import { resolveWebhookHost, type HostResolver } from '../domain/webhooks/webhook-url.js';

/** The start of a receiver's answer kept for good in the attempt log. */
export const RESPONSE_EXCERPT_BYTES = 1024;
/** At most this much of a receiver's answer is read and kept whole (docs/dashboard.md#webhooks). */
export const RESPONSE_BODY_BYTES = 64 * 1024;

export interface PostResult {
  readonly statusCode: number | null;
  readonly error: string | null;
  readonly responseExcerpt: string | null;
  /** Null when the receiver did not answer. */
  readonly response: ReceiverResponse | null;
  readonly latencyMs: number;
}

/**
 * One delivery attempt: resolves the host once, applies the SSRF rule to that address and connects to exactly it (TLS
 * still verifies the name); never follows redirects, and gives up after `timeoutMs` in total.
 */
export async function postJson(
  target: string,
  body: string,
  headers: Record<string, string>,
  options: { timeoutMs: number; allowPrivate: boolean; httpsOnly?: boolean; resolveHost: HostResolver },
): Promise<PostResult> {
  const started = performance.now();
  const elapsed = () => performance.now() - started;
  const url = new URL(target);
  // An endpoint registered before production: refused at every attempt (and so, in time, given up).
  if (options.httpsOnly && url.protocol !== 'https:')
    return {
      statusCode: null,
      error: `refused: ${HTTPS_ONLY_PROBLEM}`,
      responseExcerpt: null,
      response: null,
      latencyMs: 0,
    };
  let resolved: { address: string; family: 4 | 6 };
  let dnsTimer: NodeJS.Timeout | undefined;
  try {
    // Name resolution counts against the attempt's timeout too, so an attempt never outlives its lease.
    const timedOut = new Promise<never>((_resolve, reject) => {
      dnsTimer = setTimeout(
        () => reject(new Error(`timeout after ${options.timeoutMs} ms resolving ${url.hostname}`)),
        options.timeoutMs,
      );
    });
    resolved = await Promise.race([resolveWebhookHost(url, options.allowPrivate, options.resolveHost), timedOut]);
  } catch (error) {
    // The SSRF rule and unresolvable names are refusals; a slow resolver is a timeout.
    const message = error instanceof DomainError ? `refused: ${error.messages.join('; ')}` : (error as Error).message;
    return { statusCode: null, error: message, responseExcerpt: null, response: null, latencyMs: elapsed() };
  } finally {
    clearTimeout(dnsTimer);
  }
  const remainingMs = Math.max(1, options.timeoutMs - elapsed());
  // Connect to the address that passed the check, not to a second DNS answer.
  const pinned: LookupFunction = (_hostname, lookupOptions, callback) => {
    if ((lookupOptions as { all?: boolean }).all)
      (callback as (e: null, a: Array<{ address: string; family: number }>) => void)(null, [resolved]);
    else callback(null, resolved.address, resolved.family);
  };
  const client = url.protocol === 'https:' ? https : http;
  return new Promise<PostResult>((resolve) => {
    let settled = false;
    const finish = (result: Omit<PostResult, 'latencyMs'>) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      request.destroy();
      resolve({ ...result, latencyMs: elapsed() });
    };
    const request = client.request(
      url,
      {
        method: 'POST',
        headers: {
          ...headers,
          'Content-Type': 'application/json',
          'Content-Length': String(Buffer.byteLength(body)),
          'User-Agent': 'Kassa-Webhooks/1.0',
        },
        lookup: pinned,
        agent: false,
      },
      (response) => {
        const chunks: Buffer[] = [];
        let size = 0;
        const done = () => {
          const bytes = Buffer.concat(chunks);
          const truncated = size > RESPONSE_BODY_BYTES;
          const declared = Number(response.headers['content-length']);
          finish({
            statusCode: response.statusCode ?? null,
            error: null,
            responseExcerpt: size > 0 ? storable(bytes.subarray(0, RESPONSE_EXCERPT_BYTES).toString('utf8')) : null,
            response: {
              body: storable(bytes.subarray(0, RESPONSE_BODY_BYTES).toString('utf8')),
              size: !truncated ? size : Number.isSafeInteger(declared) && declared > 0 ? declared : null,
              truncated,
              headers: headersOf(response.headers),
            },
          });
        };
        response.on('data', (chunk: Buffer) => {
          if (size <= RESPONSE_BODY_BYTES) chunks.push(chunk);
          size += chunk.length;
          // One byte past the cap tells a cut answer from one of exactly the cap.
          if (size > RESPONSE_BODY_BYTES) done();
        });
        response.on('end', done);
        response.on('error', done);
      },
    );
    const timer = setTimeout(
      () =>
        finish({
          statusCode: null,
          error: `timeout after ${options.timeoutMs} ms`,
          responseExcerpt: null,
          response: null,
        }),
      remainingMs,
    );
    request.on('error', (error: NodeJS.ErrnoException) =>
      finish({
        statusCode: null,
        error: storable(error.code ? `${error.code}: ${error.message}` : error.message),
        responseExcerpt: null,
        response: null,
      }),
    );
    request.end(body);
  });
}

/**
 * `text` as PostgreSQL's text type can store it (no NUL): each NUL becomes U+FFFD, as invalid UTF-8 already does, so a
 * receiver's binary answer cannot fail the attempt's record.
 */
function storable(text: string): string {
  return text.includes('\u0000') ? text.replaceAll('\u0000', '\uFFFD') : text;
}

function headersOf(headers: http.IncomingHttpHeaders): Record<string, string> {
  const kept: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers))
    if (value !== undefined) kept[name] = storable(Array.isArray(value) ? value.join(', ') : value);
  return kept;
}
