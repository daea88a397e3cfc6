import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestKassa, type TestKassa } from '../support/kassa.js';
import { createMerchant, signed, type TestMerchant } from '../factories/merchant.js';
import { checkoutRequest } from '../factories/checkout-request.js';
import { createApiKey, revokeApiKey, rotateApiKey } from '../../src/domain/organisations/api-keys.js';
import { signPayload } from '../../src/domain/organisations/signatures.js';
import { createHmac } from 'node:crypto';
import { createSession, expectErrorBody, expectErrorCode, postCreate, writtenRows } from '../support/rest-kassa.js';

/** docs/api/rest.md#signing-a-merchant-call: the signed headers of POST /checkout-sessions. */

const MISSING = 'Missing signing headers: X-Service-Key, X-Service-Timestamp and X-Service-Signature are all required';
const UNKNOWN_KEY = 'Invalid API key: X-Service-Key is not a known key';
const REVOKED = 'API key has been revoked';
const EXPIRED = 'API key has expired (it was rotated)';
const BAD_TIMESTAMP = 'Invalid X-Service-Timestamp: expected a Unix timestamp in milliseconds';
const OUTSIDE_WINDOW = 'X-Service-Timestamp is outside the allowed window of ±5 minutes from the server time';
const BAD_SIGNATURE = 'Invalid signature: X-Service-Signature does not match the request body and timestamp';

let kassa: TestKassa;
let merchant: TestMerchant;
const body = JSON.stringify(checkoutRequest());

beforeAll(async () => {
  kassa = await startTestKassa();
  merchant = await createMerchant(kassa.ctx);
});
afterAll(() => kassa?.close());

/** An independent HMAC-SHA256 over `{timestamp}.{rawBody}` (not src/domain/organisations/signatures.ts). */
function hmac(secret: string, timestamp: string, rawBody: string): string {
  return createHmac('sha256', secret).update(`${timestamp}.${rawBody}`, 'utf8').digest('hex');
}

/** A create request with exactly the headers given (none added). */
function post(headers: Record<string, string>, rawBody = body) {
  const request = kassa.http.post('/checkout-sessions').set('Content-Type', 'application/json');
  for (const [name, value] of Object.entries(headers)) request.set(name, value);
  return request.send(rawBody);
}

function signedHeaders(
  key: Pick<TestMerchant, 'apiKey' | 'apiSecret'>,
  timestamp = String(Date.now()),
  rawBody = body,
) {
  return {
    'X-Service-Key': key.apiKey,
    'X-Service-Timestamp': timestamp,
    'X-Service-Signature': hmac(key.apiSecret, timestamp, rawBody),
  };
}

describe('a correctly signed call', () => {
  it('is accepted, and the signature is the hex HMAC-SHA256 of "{timestamp}.{rawBody}"', async () => {
    const timestamp = String(Date.now());
    // Our own HMAC and the service's agree, so the scheme is the one docs/api/rest.md#signing-a-merchant-call states.
    expect(hmac(merchant.apiSecret, timestamp, body)).toBe(signPayload(merchant.apiSecret, timestamp, body));
    const response = await post(signedHeaders(merchant, timestamp));
    expect(response.status).toBe(201);
    expect(response.body.organisation_id).toBe(merchant.organisationId);
  });

  it('records when the key was last used', async () => {
    const fresh = await createMerchant(kassa.ctx);
    const before = Date.now();
    await createSession(kassa, fresh, checkoutRequest());
    const key = await kassa.runtime.db.prisma.apiKey.findUniqueOrThrow({ where: { publicKey: fresh.apiKey } });
    expect(key.lastUsedAt).not.toBeNull();
    expect(key.lastUsedAt!.getTime()).toBeGreaterThanOrEqual(before - 1);
    expect(key.lastUsedAt!.getTime()).toBeLessThanOrEqual(Date.now());
  });

  it('accepts the signature in upper-case hex (hex is case-insensitive)', async () => {
    const headers = signedHeaders(merchant);
    headers['X-Service-Signature'] = headers['X-Service-Signature'].toUpperCase();
    expect((await post(headers)).status).toBe(201);
  });

  it('accepts a timestamp 4 minutes old and 4 minutes ahead', async () => {
    expect((await post(signedHeaders(merchant, String(Date.now() - 4 * 60_000)))).status).toBe(201);
    expect((await post(signedHeaders(merchant, String(Date.now() + 4 * 60_000)))).status).toBe(201);
  });

  it('signs the raw bytes: any body formatting works when it is signed as sent', async () => {
    const pretty = JSON.stringify(checkoutRequest(), null, 2);
    expect((await post(signedHeaders(merchant, String(Date.now()), pretty), pretty)).status).toBe(201);
    const unicode = JSON.stringify(checkoutRequest({ items: [{ name: 'Café ☕ 咖啡', quantity: 1, unit_price: 3 }] }));
    const response = await post(signedHeaders(merchant, String(Date.now()), unicode), unicode);
    expect(response.status).toBe(201);
    expect(response.body.items[0].name).toBe('Café ☕ 咖啡');
  });
});

describe('401 with a message that says which check failed', () => {
  const headerNames = ['X-Service-Key', 'X-Service-Timestamp', 'X-Service-Signature'] as const;

  it.each(headerNames)('without %s', async (missing) => {
    const headers: Record<string, string> = signedHeaders(merchant);
    delete headers[missing];
    const response = await post(headers);
    expectErrorCode(response, 401, 'signature_missing', MISSING);
    expect(response.body.error).toBe('Unauthorized');
    for (const name of headerNames) expect(response.body.message).toContain(name);
  });

  it.each(headerNames)('with an empty %s', async (empty) => {
    const headers: Record<string, string> = signedHeaders(merchant);
    headers[empty] = '';
    expectErrorCode(await post(headers), 401, 'signature_missing', MISSING);
  });

  it('without any of the three headers', async () => {
    expectErrorCode(await post({}), 401, 'signature_missing', MISSING);
  });

  it('with an unknown key', async () => {
    const stranger = { apiKey: `pk_${'0'.repeat(32)}`, apiSecret: merchant.apiSecret };
    expectErrorCode(await post(signedHeaders(stranger)), 401, 'key_unknown', UNKNOWN_KEY);
  });

  it("with one organisation's key and another's secret", async () => {
    const other = await createMerchant(kassa.ctx);
    expectErrorCode(
      await post(signedHeaders({ apiKey: merchant.apiKey, apiSecret: other.apiSecret })),
      401,
      'signature_invalid',
      BAD_SIGNATURE,
    );
  });

  it('with a revoked key, from the moment of revocation', async () => {
    const victim = await createMerchant(kassa.ctx);
    expect((await post(signedHeaders(victim))).status).toBe(201);
    await revokeApiKey(kassa.ctx, victim.apiKey);
    expectErrorCode(await post(signedHeaders(victim)), 401, 'key_revoked', REVOKED);
  });

  // Found by an attacker-minded review: revoked_at and a rotation's expires_at were the revoking host's clock, and a key
  // revoked from a host 10 minutes fast kept working for those 10 minutes (revoking it again changed nothing).
  it('with a key revoked or rotated without grace from a host whose clock runs 10 minutes fast, at once', async () => {
    const fast = { ...kassa.ctx, clock: () => new Date(Date.now() + 10 * 60_000) };
    const revoked = await createMerchant(kassa.ctx);
    await revokeApiKey(fast, revoked.apiKey);
    expectErrorCode(await post(signedHeaders(revoked)), 401, 'key_revoked', REVOKED);
    const rotated = await createMerchant(kassa.ctx);
    const issued = await rotateApiKey(fast, rotated.apiKey, 0);
    expect(Math.abs(issued.oldKeyExpiresAt.getTime() - Date.now())).toBeLessThan(60_000);
    expectErrorCode(await post(signedHeaders(rotated)), 401, 'key_expired', EXPIRED);
  });

  it('with a key rotated without grace; the new key works', async () => {
    const rotating = await createMerchant(kassa.ctx);
    const issued = await rotateApiKey(kassa.ctx, rotating.apiKey, 0);
    expectErrorCode(await post(signedHeaders(rotating)), 401, 'key_expired', EXPIRED);
    const response = await post(signedHeaders({ apiKey: issued.apiKey, apiSecret: issued.apiSecret }));
    expect(response.status).toBe(201);
    expect(response.body.organisation_id).toBe(rotating.organisationId);
  });

  it.each([
    ['not a number', 'yesterday'],
    ['a decimal', `${Date.now()}.5`],
    ['negative', `-${Date.now()}`],
    ['an ISO date', new Date().toISOString()],
    ['in exponent notation', '1.7e12'],
    ['hexadecimal', `0x${Date.now().toString(16)}`],
    ['17 digits long', '1'.repeat(17)],
  ])('with a timestamp that is %s', async (_what, timestamp) => {
    expectErrorCode(await post(signedHeaders(merchant, timestamp)), 401, 'timestamp_invalid', BAD_TIMESTAMP);
  });

  it.each([
    ['6 minutes old', () => Date.now() - 6 * 60_000],
    ['6 minutes ahead', () => Date.now() + 6 * 60_000],
    ['in seconds instead of milliseconds', () => Math.floor(Date.now() / 1000)],
    ['zero', () => 0],
  ])('with a timestamp %s', async (_what, timestamp) => {
    expectErrorCode(await post(signedHeaders(merchant, String(timestamp()))), 401, 'timestamp_stale', OUTSIDE_WINDOW);
  });

  it('with a signature that is wrong, truncated, not hex or over another timestamp', async () => {
    const headers = signedHeaders(merchant);
    const good = headers['X-Service-Signature'];
    const flipped = `${good.slice(0, -1)}${good.endsWith('0') ? '1' : '0'}`;
    for (const signature of [
      flipped,
      good.slice(0, 63),
      good.slice(0, 62),
      `${good}00`,
      'z'.repeat(64),
      `sha256=${good}`,
    ]) {
      expectErrorCode(
        await post({ ...headers, 'X-Service-Signature': signature }),
        401,
        'signature_invalid',
        BAD_SIGNATURE,
      );
    }
    const otherTimestamp = String(Number(headers['X-Service-Timestamp']) - 1);
    expectErrorCode(
      await post({ ...headers, 'X-Service-Timestamp': otherTimestamp }),
      401,
      'signature_invalid',
      BAD_SIGNATURE,
    );
  });

  it('with a signature over a differently formatted body (the raw bytes count)', async () => {
    const compact = JSON.stringify(checkoutRequest());
    const spaced = JSON.stringify(checkoutRequest(), null, 1);
    expectErrorCode(
      await post(signedHeaders(merchant, String(Date.now()), compact), spaced),
      401,
      'signature_invalid',
      BAD_SIGNATURE,
    );
    expectErrorCode(
      await post(signedHeaders(merchant, String(Date.now()), compact), `${compact}\n`),
      401,
      'signature_invalid',
      BAD_SIGNATURE,
    );
  });

  it('and a refused call writes nothing', async () => {
    const quiet = await createMerchant(kassa.ctx);
    await post({ ...signedHeaders(quiet), 'X-Service-Signature': 'ab'.repeat(32) });
    expect(await writtenRows(kassa, quiet.organisationId)).toMatchObject({
      sessions: 0,
      outbox: 0,
      idempotencyKeys: 0,
    });
  });
});

describe('authentication runs before anything looks at the body', () => {
  const badSignature = () => ({ ...signedHeaders(merchant), 'X-Service-Signature': 'ab'.repeat(32) });

  it('a bad signature with an invalid body → 401, not 400', async () => {
    const invalid = JSON.stringify({ items: [] });
    expectErrorCode(await post(badSignature(), invalid), 401, 'signature_invalid', BAD_SIGNATURE);
  });

  it('a bad signature with malformed JSON → 401, not 400', async () => {
    expectErrorCode(await post(badSignature(), '{"user": '), 401, 'signature_invalid', BAD_SIGNATURE);
  });

  it('a bad signature with a non-JSON content type → 401, not 415', async () => {
    const response = await kassa.http
      .post('/checkout-sessions')
      .set('Content-Type', 'text/plain')
      .set(badSignature())
      .send('hello');
    expectErrorCode(response, 401, 'signature_invalid', BAD_SIGNATURE);
  });

  it('missing headers with an empty body → 401', async () => {
    expectErrorCode(await kassa.http.post('/checkout-sessions'), 401, 'signature_missing', MISSING);
  });

  it('a valid signature over an invalid body → 400 (then validation runs)', async () => {
    const invalid = JSON.stringify({ items: [] });
    const response = await post(signedHeaders(merchant, String(Date.now()), invalid), invalid);
    expectErrorBody(response, 400, [
      'user is required',
      'items must contain at least 1 element',
      'currency is required',
    ]);
  });
});

describe('several keys and rotation', () => {
  it('an organisation may hold several keys, all working for the same organisation', async () => {
    const shop = await createMerchant(kassa.ctx);
    const second = await createApiKey(kassa.ctx, shop.organisationId);
    const third = await createApiKey(kassa.ctx, shop.organisationId);
    for (const key of [shop, second, third]) {
      const view = await createSession(kassa, key, checkoutRequest());
      expect(view.organisation_id).toBe(shop.organisationId);
    }
    // Revoking one leaves the others working.
    await revokeApiKey(kassa.ctx, second.apiKey);
    expectErrorCode(await postCreate(kassa, second, checkoutRequest()), 401, 'key_revoked', REVOKED);
    expect((await postCreate(kassa, shop, checkoutRequest())).status).toBe(201);
    expect((await postCreate(kassa, third, checkoutRequest())).status).toBe(201);
  });

  it('rotation with a grace period keeps the old key working beside the new one', async () => {
    const shop = await createMerchant(kassa.ctx);
    const issued = await rotateApiKey(kassa.ctx, shop.apiKey, 10);
    expect(issued.oldKeyExpiresAt.getTime() - Date.now()).toBeGreaterThan(9 * 60_000);
    expect((await createSession(kassa, shop, checkoutRequest())).organisation_id).toBe(shop.organisationId);
    expect((await createSession(kassa, issued, checkoutRequest())).organisation_id).toBe(shop.organisationId);
    const row = await kassa.runtime.db.prisma.apiKey.findUniqueOrThrow({ where: { publicKey: issued.apiKey } });
    const old = await kassa.runtime.db.prisma.apiKey.findUniqueOrThrow({ where: { publicKey: shop.apiKey } });
    expect(row.rotatedFromId).toBe(old.id);
  });

  it('the secret is stored encrypted, never in clear', async () => {
    const shop = await createMerchant(kassa.ctx);
    const row = await kassa.runtime.db.prisma.apiKey.findUniqueOrThrow({ where: { publicKey: shop.apiKey } });
    expect(row.secretCiphertext).not.toContain(shop.apiSecret);
    expect(row.secretCiphertext).not.toContain(shop.apiSecret.slice(3));
  });
});

// The factory's helper and the explicit headers above must agree, or every other suite signs wrongly.
it('test/factories signed() produces the same accepted call', async () => {
  const response = await signed(kassa.http.post('/checkout-sessions'), merchant, body);
  expect(response.status).toBe(201);
});
