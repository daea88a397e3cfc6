import { createHmac, timingSafeEqual } from 'node:crypto';
import { WebhookVerificationError } from './errors.js';
import type { Event } from './types.js';

/**
 * Kassa's signatures: of merchant calls (the body for create; method, path and query too for others:
 * docs/api/rest.md#signing-a-merchant-call) and webhooks.
 */

/**
 * Hex HMAC-SHA256 of `{timestamp}.{rawBody}`: Kassa's scheme for webhooks and for creating a session
 * (docs/api/rest.md#signing-a-merchant-call).
 */
export function sign(secret: string, timestamp: string, rawBody: string | Uint8Array): string {
  return createHmac('sha256', secret).update(`${timestamp}.`).update(rawBody).digest('hex');
}

/**
 * Hex HMAC-SHA256 of `{timestamp}.{METHOD}.{path?query}.{rawBody}`: Kassa's
 * scheme for every signed call but create (webhook endpoints, the events feed).
 * `target` is the path and query exactly as sent, e.g. `/events?limit=10`.
 */
export function signRequest(
  secret: string,
  timestamp: string,
  method: string,
  target: string,
  rawBody: string | Uint8Array,
): string {
  return createHmac('sha256', secret).update(`${timestamp}.${method}.${target}.`).update(rawBody).digest('hex');
}

function hexEqual(expectedHex: string, givenHex: string): boolean {
  const expected = Buffer.from(expectedHex, 'hex');
  const given = /^(?:[0-9a-fA-F]{2})+$/.test(givenHex) ? Buffer.from(givenHex, 'hex') : Buffer.alloc(0);
  // Compare equal lengths in constant time; a wrong length compares against zeros and fails.
  const comparable = given.length === expected.length ? given : Buffer.alloc(expected.length);
  return timingSafeEqual(expected, comparable) && given.length === expected.length;
}

export interface VerifyWebhookInput {
  /** The request body exactly as received (do not re-serialise parsed JSON). */
  rawBody: string | Uint8Array;
  /** The request headers (any case), or the three values. */
  headers: Record<string, string | string[] | undefined> | Headers;
  /** The endpoint secret(s); during your own rotation pass both. */
  secret: string | readonly string[];
  /** Accepted clock difference, default 5 minutes. */
  toleranceMs?: number;
  now?: number;
}

/**
 * Checks X-Service-Signature (one or more comma-separated signatures, any
 * matching one of `secret` is enough) and the X-Service-Timestamp window, in
 * constant time; returns the parsed event or throws WebhookVerificationError.
 */
export function verifyWebhook(input: VerifyWebhookInput): Event {
  const header = (name: string): string | undefined => {
    if (input.headers instanceof Headers) return input.headers.get(name) ?? undefined;
    const entry = Object.entries(input.headers).find(([key]) => key.toLowerCase() === name);
    const value = entry?.[1];
    return Array.isArray(value) ? value[0] : value;
  };
  const timestamp = header('x-service-timestamp');
  const signatures = header('x-service-signature');
  const eventId = header('x-service-event-id');
  if (!timestamp || !signatures) {
    throw new WebhookVerificationError('Missing X-Service-Timestamp or X-Service-Signature');
  }
  if (!/^\d{1,16}$/.test(timestamp)) throw new WebhookVerificationError('X-Service-Timestamp is not Unix milliseconds');
  const tolerance = input.toleranceMs ?? 5 * 60_000;
  if (Math.abs((input.now ?? Date.now()) - Number(timestamp)) > tolerance) {
    throw new WebhookVerificationError('X-Service-Timestamp is outside the tolerance');
  }
  const secrets = typeof input.secret === 'string' ? [input.secret] : input.secret;
  const presented = signatures.split(',').map((value) => value.trim());
  let valid = false;
  for (const secret of secrets) {
    const expected = sign(secret, timestamp, input.rawBody);
    // No early exit: every pair is compared.
    for (const candidate of presented) valid = hexEqual(expected, candidate) || valid;
  }
  if (!valid) throw new WebhookVerificationError('No signature in X-Service-Signature matches');
  const text = typeof input.rawBody === 'string' ? input.rawBody : Buffer.from(input.rawBody).toString('utf8');
  const event = JSON.parse(text) as Event;
  if (eventId !== undefined && eventId !== event.id) {
    throw new WebhookVerificationError('X-Service-Event-Id does not match the body');
  }
  return event;
}
