import type { DomainContext } from '../context.js';
import { DomainError, unauthorised } from '../shared/errors.js';
import { openSecret } from '../shared/secret-box.js';
import type { ApiKeyRecord } from './organisation-ports.js';
import { rateLimit } from './throttle.js';
import {
  parseTimestampMs,
  SIGNATURE_TOLERANCE_MS,
  signatureMatches,
  signPayload,
  signRequest,
  timestampWithinTolerance,
} from './signatures.js';

export interface SignedRequest {
  readonly apiKey: string | undefined;
  readonly timestamp: string | undefined;
  readonly signature: string | undefined;
  /** The request body exactly as received. */
  readonly rawBody: Buffer;
  /**
   * The method and request target (path and query as in the request line) the signature covers; null only for
   * create, signed as `{timestamp}.{rawBody}` (docs/api/rest.md#signing-a-merchant-call).
   */
  readonly request: { readonly method: string; readonly target: string } | null;
  /** Who is calling, as rate limits count it (docs/api/rest.md#rate-limits). */
  readonly clientAddress: string;
}

export interface Merchant {
  readonly organisationId: string;
  readonly apiKeyId: string;
}

/**
 * A valid signature not yet recorded as used: record it in the same write as the request's effect, or before any
 * effect (`recordSignature`), so it is accepted only once.
 */
export interface UnusedSignature {
  readonly apiKeyId: string;
  /** Lower-case hex: an upper-cased copy of a used signature is the same signature. */
  readonly signature: string;
  /** Kept until then: past its timestamp's window it is refused anyway. */
  readonly keepUntil: Date;
}

export const REPLAYED_MESSAGE =
  'Replayed request: this X-Service-Signature was already accepted once; sign every request afresh with a new ' +
  'X-Service-Timestamp';

export const MISSING_HEADERS_MESSAGE =
  'Missing signing headers: X-Service-Key, X-Service-Timestamp and X-Service-Signature are all required';

/** Longer than any public key Kassa issues (`pk_` and 32 hex digits): refused without a lookup. */
export const MAX_PUBLIC_KEY_LENGTH = 128;

// last_used_at is informational: write it at most once a minute per key to keep creates cheap.
const TOUCH_INTERVAL_MS = 60_000;
/**
 * A signature is remembered while its timestamp is acceptable (±5 minutes),
 * plus a minute for instances whose clocks differ a little.
 */
const REPLAY_MEMORY_MS = SIGNATURE_TOLERANCE_MS + 60_000;

/**
 * Checks a signed merchant call as docs/api/rest.md#signing-a-merchant-call says, the signature compared in constant
 * time; every refusal counts against the caller's address and the key id it names.
 */
export async function authenticateMerchant(ctx: DomainContext, request: SignedRequest): Promise<Merchant> {
  return countingAuthFailures(ctx, request, async () => {
    const { merchant, signature } = await checkSignedRequest(ctx, request);
    await recordSignature(ctx, signature);
    return merchant;
  });
}

/**
 * The caller records the signature with the request's effect (create: one round trip) and answers a replay when that
 * write finds it used; run that write inside `countingAuthFailures`, so a replay counts like any refusal.
 */
export async function authenticateMerchantDeferringReplayCheck(
  ctx: DomainContext,
  request: SignedRequest,
): Promise<{ merchant: Merchant; signature: UnusedSignature }> {
  return countingAuthFailures(ctx, request, () => checkSignedRequest(ctx, request));
}

/** Records the signature as used; throws `unauthorised` when it was used before (a replay). */
export async function recordSignature(ctx: DomainContext, signature: UnusedSignature): Promise<void> {
  if (!(await rememberSignature(ctx, signature))) throw unauthorised(REPLAYED_MESSAGE, 'signature_replayed');
}

/**
 * Records the signature as used, with the session a create signed with it is answered with, if any; false when it was
 * used before (a replay).
 */
export function rememberSignature(
  ctx: DomainContext,
  signature: UnusedSignature,
  sessionId: string | null = null,
): Promise<boolean> {
  const { apiKeyId, keepUntil } = signature;
  return ctx.requestGuard.signatures.remember(apiKeyId, signature.signature, keepUntil, ctx.clock(), sessionId);
}

/**
 * Counts each `unauthorised` from `work` against the address and the named key id, answering 429 past either limit;
 * only failures count, so a call whose signature checks out is never refused by these limits.
 */
export async function countingAuthFailures<T>(
  ctx: DomainContext,
  request: Pick<SignedRequest, 'clientAddress' | 'apiKey'>,
  work: () => Promise<T>,
): Promise<T> {
  try {
    return await work();
  } catch (error) {
    if (error instanceof DomainError && error.code === 'unauthorised') {
      const { apiKey, clientAddress } = request;
      // A key id no key can have is counted by address only (it would only fill the counters).
      if (apiKey && apiKey.length <= MAX_PUBLIC_KEY_LENGTH)
        await rateLimit(ctx, ['auth_failures', clientAddress], ['auth_failures_key', apiKey]);
      else await rateLimit(ctx, ['auth_failures', clientAddress]);
    }
    throw error;
  }
}

/**
 * Each key record's secret, decrypted once: a cached record (src/db/cached-stores.ts) is the
 * same object until the key changes, and a changed key is a new record with its own entry.
 */
const openedSecrets = new WeakMap<ApiKeyRecord, string>();
function openedSecret(ctx: DomainContext, key: ApiKeyRecord): string {
  let secret = openedSecrets.get(key);
  if (secret === undefined) openedSecrets.set(key, (secret = openSecret(key.secretCiphertext, ctx.masterKey)));
  return secret;
}

async function checkSignedRequest(
  ctx: DomainContext,
  request: SignedRequest,
): Promise<{ merchant: Merchant; signature: UnusedSignature }> {
  const { apiKey, timestamp, signature } = request;
  if (!apiKey || !timestamp || !signature) throw unauthorised(MISSING_HEADERS_MESSAGE, 'signature_missing');

  const now = ctx.clock();
  const key = apiKey.length <= MAX_PUBLIC_KEY_LENGTH ? await ctx.store.apiKeys.findByPublicKey(apiKey) : null;
  if (!key) throw unauthorised('Invalid API key: X-Service-Key is not a known key', 'key_unknown');
  // Revoked is revoked, whatever time the revoking host's clock wrote.
  if (key.revokedAt) throw unauthorised('API key has been revoked', 'key_revoked');
  if (key.expiresAt && key.expiresAt <= now) throw unauthorised('API key has expired (it was rotated)', 'key_expired');

  const timestampMs = parseTimestampMs(timestamp);
  if (timestampMs === null)
    throw unauthorised('Invalid X-Service-Timestamp: expected a Unix timestamp in milliseconds', 'timestamp_invalid');
  if (!timestampWithinTolerance(timestampMs, now.getTime())) {
    throw unauthorised(
      'X-Service-Timestamp is outside the allowed window of ±5 minutes from the server time',
      'timestamp_stale',
    );
  }

  const secret = openedSecret(ctx, key);
  const covered = request.request;
  const expected = covered
    ? signRequest(secret, timestamp, covered.method, covered.target, request.rawBody)
    : signPayload(secret, timestamp, request.rawBody);
  if (!signatureMatches(expected, signature)) {
    throw unauthorised(
      covered
        ? 'Invalid signature: X-Service-Signature does not match the timestamp, method, path and query, and body of ' +
            'this request'
        : 'Invalid signature: X-Service-Signature does not match the request body and timestamp',
      'signature_invalid',
    );
  }
  if (!key.lastUsedAt || now.getTime() - key.lastUsedAt.getTime() > TOUCH_INTERVAL_MS) {
    await ctx.store.apiKeys.touch(key.id, now);
  }
  return {
    merchant: { organisationId: key.organisationId, apiKeyId: key.id },
    // The expected (lower-case) form: an upper-cased copy of a used signature is the same signature.
    signature: { apiKeyId: key.id, signature: expected, keepUntil: new Date(timestampMs + REPLAY_MEMORY_MS) },
  };
}
