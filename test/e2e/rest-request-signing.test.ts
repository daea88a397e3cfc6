import { createHmac } from 'node:crypto';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startTestKassa, type TestKassa } from '../support/kassa.js';
import { createTestDatabase, type TestDatabase } from '../support/databases.js';
import { createMerchant, type TestMerchant } from '../factories/merchant.js';
import { checkoutRequest } from '../factories/checkout-request.js';
import { controllableClock, expectErrorBody, expectErrorCode, isEmbedded, writtenRows } from '../support/rest-kassa.js';

/**
 * Issue 11 A: every signed route but create signs `{ts}.{METHOD}.{path?query}.{body}`,
 * create keeps `{ts}.{rawBody}` (docs/api/rest.md#signing-a-merchant-call), and no signature is accepted twice
 * (the replay cache is in the database, so it holds across instances and restarts).
 * Signatures here are computed independently of src/domain/organisations/signatures.ts.
 */

const BAD_REQUEST_SIGNATURE =
  'Invalid signature: X-Service-Signature does not match the timestamp, method, path and query, and body of this request';
const BAD_CREATE_SIGNATURE = 'Invalid signature: X-Service-Signature does not match the request body and timestamp';
const REPLAYED =
  'Replayed request: this X-Service-Signature was already accepted once; sign every request afresh with a new X-Service-Timestamp';

const hmac = (secret: string, text: string) => createHmac('sha256', secret).update(text, 'utf8').digest('hex');

interface Signed {
  readonly headers: Record<string, string>;
}

/** The management scheme: `{ts}.{METHOD}.{path?query}.{body}`. */
function signRequest(
  merchant: Pick<TestMerchant, 'apiKey' | 'apiSecret'>,
  method: string,
  target: string,
  body = '',
  timestamp = nextTimestamp(),
): Signed {
  return {
    headers: {
      'X-Service-Key': merchant.apiKey,
      'X-Service-Timestamp': String(timestamp),
      'X-Service-Signature': hmac(merchant.apiSecret, `${timestamp}.${method}.${target}.${body}`),
    },
  };
}

/** Create: `{ts}.{rawBody}` (docs/api/rest.md#signing-a-merchant-call). */
function signCreate(
  merchant: Pick<TestMerchant, 'apiKey' | 'apiSecret'>,
  body: string,
  timestamp = nextTimestamp(),
): Signed {
  return {
    headers: {
      'X-Service-Key': merchant.apiKey,
      'X-Service-Timestamp': String(timestamp),
      'X-Service-Signature': hmac(merchant.apiSecret, `${timestamp}.${body}`),
    },
  };
}

let last = 0;
/** Distinct timestamps, so no two requests of this file are signed alike by accident. */
function nextTimestamp(base = Date.now()): number {
  last = Math.max(base, last + 1);
  return last;
}

/** Sends exactly these headers and body (JSON content type when there is a body). */
function send(
  kassa: TestKassa,
  method: 'get' | 'post' | 'patch' | 'delete',
  target: string,
  signed: Signed,
  body?: string,
) {
  const request = kassa.http[method](target).set(signed.headers);
  return body === undefined ? request : request.set('Content-Type', 'application/json').send(body);
}

describe('one instance', () => {
  let kassa: TestKassa;
  let merchant: TestMerchant;
  let endpointId: string;

  beforeAll(async () => {
    kassa = await startTestKassa();
    merchant = await createMerchant(kassa.ctx);
    const body = JSON.stringify({ url: 'http://127.0.0.1:9/hooks' });
    const created = await send(
      kassa,
      'post',
      '/webhook-endpoints',
      signRequest(merchant, 'POST', '/webhook-endpoints', body),
      body,
    );
    expect(created.status).toBe(201);
    endpointId = created.body.id;
  });
  afterAll(() => kassa?.close());

  describe('management routes sign {timestamp}.{METHOD}.{path?query}.{body}', () => {
    it('accepts GET, PATCH, POST and DELETE signed so', async () => {
      expect(
        (await send(kassa, 'get', '/webhook-endpoints', signRequest(merchant, 'GET', '/webhook-endpoints'))).status,
      ).toBe(200);
      const one = `/webhook-endpoints/${endpointId}`;
      expect((await send(kassa, 'get', one, signRequest(merchant, 'GET', one))).body.id).toBe(endpointId);
      const patch = JSON.stringify({ enabled: true });
      expect((await send(kassa, 'patch', one, signRequest(merchant, 'PATCH', one, patch), patch)).status).toBe(200);
      expect(
        (await send(kassa, 'get', '/events?limit=5', signRequest(merchant, 'GET', '/events?limit=5'))).status,
      ).toBe(200);
      const body = JSON.stringify({ url: 'http://127.0.0.1:9/other' });
      const other = (
        await send(kassa, 'post', '/webhook-endpoints', signRequest(merchant, 'POST', '/webhook-endpoints', body), body)
      ).body.id as string;
      const rotate = `/webhook-endpoints/${other}/rotate-secret`;
      expect((await send(kassa, 'post', rotate, signRequest(merchant, 'POST', rotate))).status).toBe(200);
      expect(
        (
          await send(
            kassa,
            'delete',
            `/webhook-endpoints/${other}`,
            signRequest(merchant, 'DELETE', `/webhook-endpoints/${other}`),
          )
        ).status,
      ).toBe(204);
    });

    it('refuses the create scheme {timestamp}.{body} there', async () => {
      expectErrorBody(await send(kassa, 'get', '/events', signCreate(merchant, '')), 401, BAD_REQUEST_SIGNATURE);
      expectErrorBody(
        await send(kassa, 'get', '/webhook-endpoints', signCreate(merchant, '')),
        401,
        BAD_REQUEST_SIGNATURE,
      );
      const body = JSON.stringify({ url: 'http://127.0.0.1:9/old-scheme' });
      expectErrorBody(
        await send(kassa, 'post', '/webhook-endpoints', signCreate(merchant, body), body),
        401,
        BAD_REQUEST_SIGNATURE,
      );
    });

    it('a captured GET /events signature fits no other route, method or query', async () => {
      const captured = signRequest(merchant, 'GET', '/events');
      const one = `/webhook-endpoints/${endpointId}`;
      const before = (await send(kassa, 'get', one, signRequest(merchant, 'GET', one))).body;
      const elsewhere: Array<[string, ReturnType<typeof send>]> = [
        ['GET /webhook-endpoints', send(kassa, 'get', '/webhook-endpoints', captured)],
        ['GET /webhook-endpoints/:id', send(kassa, 'get', one, captured)],
        ['DELETE /webhook-endpoints/:id', send(kassa, 'delete', one, captured)],
        ['POST …/rotate-secret', send(kassa, 'post', `${one}/rotate-secret`, captured)],
        ['GET /events?limit=100', send(kassa, 'get', '/events?limit=100', captured)],
        ['GET /events?session_id=…', send(kassa, 'get', `/events?session_id=${endpointId}`, captured)],
        ['GET /events/ (another spelling of the path)', send(kassa, 'get', '/events/', captured)],
      ];
      for (const [what, response] of elsewhere) {
        const answered = await response;
        expect(answered.status, what).toBe(401);
        expectErrorBody(answered, 401, BAD_REQUEST_SIGNATURE);
      }
      // Nothing happened to the endpoint: not deleted, secret not rotated.
      const after = await send(kassa, 'get', one, signRequest(merchant, 'GET', one));
      expect(after.status).toBe(200);
      expect(after.body).toEqual(before);
      expect(after.body.previous_secret_expires_at).toBeNull();
      // And the request it was made for still works once.
      expect((await send(kassa, 'get', '/events', captured)).status).toBe(200);
    });

    it('signs the path and query as sent, before any decoding, in their order', async () => {
      // %30 is "0": Express decodes the id, but the signature covers the bytes of the request line.
      const sent = `/webhook-endpoints/%${endpointId.charCodeAt(0).toString(16)}${endpointId.slice(1)}`;
      expect(sent).not.toBe(`/webhook-endpoints/${endpointId}`);
      expect((await send(kassa, 'get', sent, signRequest(merchant, 'GET', sent))).body.id).toBe(endpointId);
      expectErrorBody(
        await send(kassa, 'get', sent, signRequest(merchant, 'GET', `/webhook-endpoints/${endpointId}`)),
        401,
        BAD_REQUEST_SIGNATURE,
      );
      const query = `/events?limit=5&session_id=${endpointId}`;
      const reordered = `/events?session_id=${endpointId}&limit=5`;
      expect((await send(kassa, 'get', query, signRequest(merchant, 'GET', query))).status).toBe(200);
      expectErrorBody(
        await send(kassa, 'get', query, signRequest(merchant, 'GET', reordered)),
        401,
        BAD_REQUEST_SIGNATURE,
      );
    });

    it('refuses the management scheme on create, which keeps its own', async () => {
      const body = JSON.stringify(checkoutRequest());
      expectErrorBody(
        await send(
          kassa,
          'post',
          '/checkout-sessions',
          signRequest(merchant, 'POST', '/checkout-sessions', body),
          body,
        ),
        401,
        BAD_CREATE_SIGNATURE,
      );
      expect((await send(kassa, 'post', '/checkout-sessions', signCreate(merchant, body), body)).status).toBe(201);
    });
  });

  describe('a signature is accepted once', () => {
    it('the same GET replayed verbatim → 401; a freshly signed one → 200', async () => {
      const signed = signRequest(merchant, 'GET', '/webhook-endpoints');
      expect((await send(kassa, 'get', '/webhook-endpoints', signed)).status).toBe(200);
      expectErrorCode(await send(kassa, 'get', '/webhook-endpoints', signed), 401, 'signature_replayed', REPLAYED);
      expect(
        (await send(kassa, 'get', '/webhook-endpoints', signRequest(merchant, 'GET', '/webhook-endpoints'))).status,
      ).toBe(200);
    });

    it('a replayed rotate-secret (whose answer holds the new secret) → 401 and no second rotation', async () => {
      const rotate = `/webhook-endpoints/${endpointId}/rotate-secret`;
      const signed = signRequest(merchant, 'POST', rotate);
      const first = await send(kassa, 'post', rotate, signed);
      expect(first.status).toBe(200);
      const replay = await send(kassa, 'post', rotate, signed);
      expectErrorCode(replay, 401, 'signature_replayed', REPLAYED);
      expect(JSON.stringify(replay.body)).not.toContain('whsec_');
      const row = await kassa.runtime.db.prisma.webhookEndpoint.findUniqueOrThrow({ where: { id: endpointId } });
      expect(row.previousSecretExpiresAt).not.toBeNull();
    });

    it('the same signature in upper-case hex is the same signature', async () => {
      const signed = signRequest(merchant, 'GET', '/events');
      expect((await send(kassa, 'get', '/events', signed)).status).toBe(200);
      const shouted = {
        headers: { ...signed.headers, 'X-Service-Signature': signed.headers['X-Service-Signature']!.toUpperCase() },
      };
      expectErrorCode(await send(kassa, 'get', '/events', shouted), 401, 'signature_replayed', REPLAYED);
    });

    it("a create sent again verbatim with its Idempotency-Key → the same 201 (the spec's idempotent replay); without it, or with another key → 401, nothing written", async () => {
      const shop = await createMerchant(kassa.ctx);
      const body = JSON.stringify(checkoutRequest());
      const signed = signCreate(shop, body);
      const withKey = { headers: { ...signed.headers, 'Idempotency-Key': 'order-77' } };
      const first = await send(kassa, 'post', '/checkout-sessions', withKey, body);
      expect(first.status).toBe(201);
      const rows = await writtenRows(kassa, shop.organisationId);
      const again = await send(kassa, 'post', '/checkout-sessions', withKey, body);
      expect(again.status, JSON.stringify(again.body)).toBe(201);
      expect(again.headers['idempotent-replayed']).toBe('true');
      expect(again.body).toEqual(first.body);
      // Create's headers are not signed: a key added to (or changed on) a captured request proves nothing.
      expectErrorCode(
        await send(kassa, 'post', '/checkout-sessions', signed, body),
        401,
        'signature_replayed',
        REPLAYED,
      );
      const otherKey = { headers: { ...signed.headers, 'Idempotency-Key': 'order-78' } };
      expectErrorCode(
        await send(kassa, 'post', '/checkout-sessions', otherKey, body),
        401,
        'signature_replayed',
        REPLAYED,
      );
      expect(await writtenRows(kassa, shop.organisationId)).toEqual(rows);
      // Another session's key, same body: not the session this signature made.
      const other = signCreate(shop, body);
      const otherFirst = await send(
        kassa,
        'post',
        '/checkout-sessions',
        { headers: { ...other.headers, 'Idempotency-Key': 'order-79' } },
        body,
      );
      expect(otherFirst.status).toBe(201);
      const borrowed = { headers: { ...signed.headers, 'Idempotency-Key': 'order-79' } };
      expectErrorCode(
        await send(kassa, 'post', '/checkout-sessions', borrowed, body),
        401,
        'signature_replayed',
        REPLAYED,
      );
      const resigned = { headers: { ...signCreate(shop, body).headers, 'Idempotency-Key': 'order-77' } };
      const third = await send(kassa, 'post', '/checkout-sessions', resigned, body);
      expect(third.status).toBe(201);
      expect(third.headers['idempotent-replayed']).toBe('true');
      expect(third.body.session_id).toBe(first.body.session_id);
    });

    it('the same keyed create sent twice at once → one session, both 201', async () => {
      const shop = await createMerchant(kassa.ctx);
      const body = JSON.stringify(checkoutRequest());
      const withKey = { headers: { ...signCreate(shop, body).headers, 'Idempotency-Key': 'order-81' } };
      const answers = await Promise.all([1, 2].map(() => send(kassa, 'post', '/checkout-sessions', withKey, body)));
      expect(answers.map((answer) => answer.status)).toEqual([201, 201]);
      expect(answers[0]!.body.session_id).toBe(answers[1]!.body.session_id);
      expect(answers.map((answer) => answer.headers['idempotent-replayed'] ?? 'first').sort()).toEqual([
        'first',
        'true',
      ]);
    });

    it('a keyed create refused before it made a session (a bad body → 400) is a replay when sent again', async () => {
      const body = JSON.stringify({ items: [] });
      const signed = signCreate(merchant, body);
      const withKey = { headers: { ...signed.headers, 'Idempotency-Key': 'order-80' } };
      expectErrorBody(await send(kassa, 'post', '/checkout-sessions', withKey, body), 400);
      expectErrorCode(
        await send(kassa, 'post', '/checkout-sessions', withKey, body),
        401,
        'signature_replayed',
        REPLAYED,
      );
    });

    it('a request refused after the signature check (a bad body → 400) has used its signature', async () => {
      const body = JSON.stringify({ items: [] });
      const signed = signCreate(merchant, body);
      expectErrorBody(await send(kassa, 'post', '/checkout-sessions', signed, body), 400);
      expectErrorCode(
        await send(kassa, 'post', '/checkout-sessions', signed, body),
        401,
        'signature_replayed',
        REPLAYED,
      );
    });

    it('a wrong signature is not remembered', async () => {
      const signed = signRequest(merchant, 'GET', '/events?limit=3');
      expectErrorBody(await send(kassa, 'get', '/events?limit=4', signed), 401, BAD_REQUEST_SIGNATURE);
      expect((await send(kassa, 'get', '/events?limit=3', signed)).status).toBe(200);
    });
  });
});

describe('the replay cache is in the database', () => {
  let database: TestDatabase;
  const opened: TestKassa[] = [];
  const open = async (options: Parameters<typeof startTestKassa>[0] = {}) => {
    const kassa = await startTestKassa({ database, ...options });
    opened.push(kassa);
    return kassa;
  };

  beforeAll(async () => {
    database = await createTestDatabase();
  });
  afterEach(async () => {
    for (const kassa of opened.splice(0)) await kassa.close();
  });
  afterAll(() => database?.drop());

  it.skipIf(isEmbedded)(
    'two instances on one PostgreSQL: a request accepted by one is refused by the other',
    async () => {
      const [first, second] = [await open(), await open()];
      const merchant = await createMerchant(first.ctx);
      const signed = signRequest(merchant, 'GET', '/events');
      expect((await send(first, 'get', '/events', signed)).status).toBe(200);
      expectErrorCode(await send(second, 'get', '/events', signed), 401, 'signature_replayed', REPLAYED);

      const body = JSON.stringify(checkoutRequest());
      const create = signCreate(merchant, body);
      expect((await send(second, 'post', '/checkout-sessions', create, body)).status).toBe(201);
      expectErrorCode(
        await send(first, 'post', '/checkout-sessions', create, body),
        401,
        'signature_replayed',
        REPLAYED,
      );
      expect((await writtenRows(first, merchant.organisationId)).sessions).toBe(1);
    },
  );

  it.skipIf(isEmbedded)(
    'two instances at once: of 10 copies of one request sent to both, exactly one is accepted',
    async () => {
      const [first, second] = [await open(), await open()];
      const merchant = await createMerchant(first.ctx);
      const signed = signRequest(merchant, 'GET', '/webhook-endpoints');
      const answers = await Promise.all(
        Array.from({ length: 10 }, (_, i) => send(i % 2 ? first : second, 'get', '/webhook-endpoints', signed)),
      );
      expect(answers.map((answer) => answer.status).sort()).toEqual([200, ...Array(9).fill(401)]);
    },
  );

  it.skipIf(isEmbedded)(
    'two instances at once: of 10 copies of one signed create, exactly one creates; the rest are replays and write nothing',
    async () => {
      const [first, second] = [await open(), await open()];
      const merchant = await createMerchant(first.ctx);
      const body = JSON.stringify(checkoutRequest());
      const create = signCreate(merchant, body);
      const answers = await Promise.all(
        Array.from({ length: 10 }, (_, i) => send(i % 2 ? first : second, 'post', '/checkout-sessions', create, body)),
      );
      expect(answers.map((answer) => answer.status).sort()).toEqual([201, ...Array(9).fill(401)]);
      for (const refused of answers.filter((answer) => answer.status === 401))
        expectErrorCode(refused, 401, 'signature_replayed', REPLAYED);
      expect(await writtenRows(first, merchant.organisationId)).toMatchObject({ sessions: 1, history: 1, outbox: 1 });
    },
  );

  it('a restarted instance still refuses a signature accepted before the restart', async () => {
    const before = await open();
    const merchant = await createMerchant(before.ctx);
    const signed = signRequest(merchant, 'GET', '/events');
    expect((await send(before, 'get', '/events', signed)).status).toBe(200);
    await opened.pop()!.close();
    const after = await open();
    expectErrorCode(await send(after, 'get', '/events', signed), 401, 'signature_replayed', REPLAYED);
  });

  it('an entry lives as long as its timestamp is acceptable, and is then deleted', async () => {
    const time = controllableClock();
    const start = Date.now();
    time.freeze(start);
    const kassa = await open({ clock: time.clock });
    const merchant = await createMerchant(kassa.ctx);
    const signed = signRequest(merchant, 'GET', '/events', '', start);
    expect((await send(kassa, 'get', '/events', signed)).status).toBe(200);
    const signatures = () =>
      kassa.runtime.db.prisma.requestSignature.count({ where: { signature: signed.headers['X-Service-Signature'] } });
    expect(await signatures()).toBe(1);
    // Five minutes on, the timestamp is still acceptable: still a replay.
    time.freeze(start + 5 * 60_000);
    expectErrorCode(await send(kassa, 'get', '/events', signed), 401, 'signature_replayed', REPLAYED);
    // Past the window (and the minute allowed for clocks of instances that differ), the entry goes with the next signed call.
    time.freeze(start + 6 * 60_000 + 1_000);
    expect(
      (await send(kassa, 'get', '/events', signRequest(merchant, 'GET', '/events', '', start + 6 * 60_000 + 1_000)))
        .status,
    ).toBe(200);
    await expect.poll(signatures).toBe(0);
    // The old signature now fails on its timestamp, as any stale one does.
    expectErrorBody(
      await send(kassa, 'get', '/events', signed),
      401,
      'X-Service-Timestamp is outside the allowed window of ±5 minutes from the server time',
    );
  });
});
