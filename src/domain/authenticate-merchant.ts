import type { DomainContext } from './context.js';
import { unauthorised } from './errors.js';
import { openSecret } from './secret-box.js';
import { parseTimestampMs, signatureMatches, signPayload, timestampWithinTolerance } from './signatures.js';

export interface SignedRequest {
  readonly apiKey: string | undefined;
  readonly timestamp: string | undefined;
  readonly signature: string | undefined;
  /** The request body exactly as received. */
  readonly rawBody: Buffer;
}

export interface Merchant {
  readonly organisationId: string;
  readonly apiKeyId: string;
}

export const MISSING_HEADERS_MESSAGE =
  'Missing signing headers: X-Service-Key, X-Service-Timestamp and X-Service-Signature are all required';

// last_used_at is informational: write it at most once a minute per key to keep creates cheap.
const TOUCH_INTERVAL_MS = 60_000;

/**
 * Checks a signed merchant call (spec §5): all three headers, a known and
 * active key, a timestamp within ±5 minutes and an HMAC-SHA256 signature over
 * `{timestamp}.{rawBody}`, compared in constant time.
 */
export async function authenticateMerchant(ctx: DomainContext, request: SignedRequest): Promise<Merchant> {
  const { apiKey, timestamp, signature } = request;
  if (!apiKey || !timestamp || !signature) throw unauthorised(MISSING_HEADERS_MESSAGE);

  const now = ctx.clock();
  const key = await ctx.store.apiKeys.findByPublicKey(apiKey);
  if (!key) throw unauthorised('Invalid API key: X-Service-Key is not a known key');
  if (key.revokedAt && key.revokedAt <= now) throw unauthorised('API key has been revoked');
  if (key.expiresAt && key.expiresAt <= now) throw unauthorised('API key has expired (it was rotated)');

  const timestampMs = parseTimestampMs(timestamp);
  if (timestampMs === null) throw unauthorised('Invalid X-Service-Timestamp: expected a Unix timestamp in milliseconds');
  if (!timestampWithinTolerance(timestampMs, now.getTime())) {
    throw unauthorised('X-Service-Timestamp is outside the allowed window of ±5 minutes from the server time');
  }

  const secret = openSecret(key.secretCiphertext, ctx.masterKey);
  if (!signatureMatches(signPayload(secret, timestamp, request.rawBody), signature)) {
    throw unauthorised('Invalid signature: X-Service-Signature does not match the request body and timestamp');
  }

  if (!key.lastUsedAt || now.getTime() - key.lastUsedAt.getTime() > TOUCH_INTERVAL_MS) {
    await ctx.store.apiKeys.touch(key.id, now);
  }
  return { organisationId: key.organisationId, apiKeyId: key.id };
}
