import { createHmac, timingSafeEqual } from 'node:crypto';

/** ±5 minutes (docs/api/rest.md#signing-a-merchant-call). */
export const SIGNATURE_TOLERANCE_MS = 5 * 60 * 1000;

/** Hex HMAC-SHA256 of `{timestamp}.{rawBody}`: the scheme of merchant create, and of webhooks
 * (docs/api/rest.md#signing-a-merchant-call, docs/api/webhooks.md#webhooks). */
export function signPayload(secret: string, timestamp: string, rawBody: Buffer | string): string {
  return createHmac('sha256', secret).update(`${timestamp}.`).update(rawBody).digest('hex');
}

/**
 * Every signed route but create, so a signature fits one request only; `target` is not decoded. A create body is JSON,
 * never a method name, so a signature of one scheme never verifies under the other.
 */
export function signRequest(
  secret: string,
  timestamp: string,
  method: string,
  target: string,
  rawBody: Buffer | string,
): string {
  return createHmac('sha256', secret).update(`${timestamp}.${method}.${target}.`).update(rawBody).digest('hex');
}

/** Compares a presented hex signature with the expected one in constant time. */
export function signatureMatches(expectedHex: string, presented: string): boolean {
  const expected = Buffer.from(expectedHex, 'hex');
  // Whole bytes only: Buffer.from(hex) silently drops a trailing odd digit.
  const given = /^(?:[0-9a-fA-F]{2})*$/.test(presented) ? Buffer.from(presented, 'hex') : Buffer.alloc(0);
  // timingSafeEqual needs equal lengths; compare against a same-length buffer so a length mismatch takes the same time.
  const comparable = given.length === expected.length ? given : Buffer.alloc(expected.length);
  return timingSafeEqual(expected, comparable) && given.length === expected.length;
}

/** Parses a Unix timestamp in milliseconds as sent in X-Service-Timestamp; null when it is not one. */
export function parseTimestampMs(value: string): number | null {
  if (!/^\d{1,16}$/.test(value)) return null;
  return Number(value);
}

/** Whether a timestamp lies within ±5 minutes of now. */
export function timestampWithinTolerance(timestampMs: number, nowMs: number): boolean {
  return Math.abs(nowMs - timestampMs) <= SIGNATURE_TOLERANCE_MS;
}
