import { createHmac } from 'node:crypto';
import net from 'node:net';
import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestKassa, type TestKassa } from '../support/kassa.js';
import { createMerchant, freshTimestamp, signed, stringToSign, type TestMerchant } from '../factories/merchant.js';
import { checkoutRequest, PAYER, txHash } from '../factories/checkout-request.js';
import { createSession, expectErrorBody, postBind, writtenRows } from '../support/rest-kassa.js';
import { signedRequest } from '../support/webhooks.js';

/**
 * Inputs found by probing from outside that once produced a 500, a silent
 * change of data or an error without the spec body.
 */
let kassa: TestKassa;
let merchant: TestMerchant;

beforeAll(async () => {
  kassa = await startTestKassa();
  merchant = await createMerchant(kassa.ctx);
});
afterAll(() => kassa?.close());

const create = (text: string, headers: Record<string, string> = {}) => {
  const request = kassa.http.post('/checkout-sessions');
  for (const [name, value] of Object.entries(headers)) request.set(name, value);
  return signed(request, merchant, text, { contentType: headers['Content-Type'] });
};

describe('strings PostgreSQL cannot store', () => {
  it.each([
    ['a NUL in an item name', '{"name":"Tea\\u0000","quantity":1,"unit_price":1}', 'items.0.name'],
    ['an unpaired high surrogate', '{"name":"\\ud800","quantity":1,"unit_price":1}', 'items.0.name'],
    ['an unpaired low surrogate', '{"name":"x\\udc00y","quantity":1,"unit_price":1}', 'items.0.name'],
  ])('%s → 400 naming the field, nothing written', async (_what, item, field) => {
    const before = await writtenRows(kassa, merchant.organisationId);
    const body = `{"user":{"id":"c","email":"a@b.co"},"items":[${item}],"currency":"USD"}`;
    const response = await create(body);
    expectErrorBody(response, 400, [`${field} must not contain NUL characters or unpaired surrogates`]);
    expect(await writtenRows(kassa, merchant.organisationId)).toEqual(before);
  });

  it('a NUL in a metadata key or value → 400', async () => {
    const body = JSON.stringify(checkoutRequest({ metadata: { 'k\u0000': 'v', note: 'a\u0000b' } }));
    const response = await create(body);
    expectErrorBody(response, 400, [
      'property names in metadata must not contain NUL characters or unpaired surrogates',
      'metadata.note must not contain NUL characters or unpaired surrogates',
    ]);
  });

  it('a paired surrogate (an emoji) is fine', async () => {
    const response = await create(JSON.stringify(checkoutRequest({ user: { id: 'c-😀', email: 'a@b.co' } })));
    expect(response.status).toBe(201);
    expect(response.body.user.id).toBe('c-😀');
  });
});

describe('body encoding', () => {
  it('bytes that are not UTF-8 → 400', async () => {
    const bytes = Buffer.concat([
      Buffer.from('{"user":{"id":"'),
      Buffer.from([0xff, 0xfe, 0xc3]),
      Buffer.from('","email":"a@b.co"},"items":[],"currency":"USD"}'),
    ]);
    const timestamp = String(Date.now());
    const { signPayload } = await import('../../src/domain/organisations/signatures.js');
    const raw = await fetch(`${kassa.url}/checkout-sessions`, {
      method: 'POST',
      headers: {
        'Content-Type': 'application/json',
        'X-Service-Key': merchant.apiKey,
        'X-Service-Timestamp': timestamp,
        'X-Service-Signature': signPayload(merchant.apiSecret, timestamp, bytes),
      },
      body: bytes,
    });
    expect(raw.status).toBe(400);
    expect(await raw.json()).toEqual({
      statusCode: 400,
      message: ['Request body is not valid UTF-8'],
      error: 'Bad Request',
      code: 'validation_failed',
    });
  });

  it('a charset other than UTF-8 → 415', async () => {
    const response = await create(JSON.stringify(checkoutRequest()), {
      'Content-Type': 'application/json; charset=utf-16',
    });
    expectErrorBody(response, 415, 'Unsupported charset utf-16: send UTF-8 JSON');
  });

  it('charset=utf-8 is accepted', async () => {
    const response = await create(JSON.stringify(checkoutRequest()), {
      'Content-Type': 'application/json; charset=UTF-8',
    });
    expect(response.status).toBe(201);
  });

  it('a compressed body is refused (415): the signature covers the bytes exactly as sent', async () => {
    const text = JSON.stringify(checkoutRequest());
    const response = await kassa.http
      .post(`/checkout-sessions/${'0'.repeat(8)}-0000-4000-8000-000000000000/bind-tx`)
      .set('Content-Type', 'application/json')
      .set('Content-Encoding', 'gzip')
      .send(gzipSync(text));
    expectErrorBody(response, 415);
  });

  it('nesting deeper than 32 levels → 400 before parsing, for objects and arrays', async () => {
    const deepObject = `{"user":{"id":"c","email":"a@b.co"},"items":[{"name":"x","quantity":1,"unit_price":1}],"currency":"USD","metadata":${'{"a":'.repeat(3000)}1${'}'.repeat(3000)}}`;
    expectErrorBody(await create(deepObject), 400, ['Request body is nested deeper than 32 levels']);
    const deepArray = `${'['.repeat(5000)}${']'.repeat(5000)}`;
    expectErrorBody(await create(deepArray), 400, ['Request body is nested deeper than 32 levels']);
    // Brackets inside strings do not count.
    const bracketsInText = JSON.stringify(checkoutRequest({ metadata: { note: '['.repeat(100) } }));
    expect((await create(bracketsInText)).status).toBe(201);
  });
});

describe('metadata numbers', () => {
  it('a number a double cannot hold exactly → 400 naming its path; exact ones are kept', async () => {
    const body =
      `{"user":{"id":"c","email":"a@b.co"},"items":[{"name":"x","quantity":1,"unit_price":1}],"currency":"USD",` +
      `"metadata":{"big":1e400,"long":12345678901234567890123,"nested":{"list":[1,0.1]},"ok":42.5,"negzero":-0}}`;
    expectErrorBody(await create(body), 400, [
      'metadata.big number 1e+400 cannot be stored exactly; send it as a string',
      'metadata.long number 12345678901234567890123 cannot be stored exactly; send it as a string',
    ]);
    const fine = await create(body.replace('"big":1e400,"long":12345678901234567890123,', ''));
    expect(fine.status).toBe(201);
    expect(fine.body.metadata).toEqual({ nested: { list: [1, 0.1] }, ok: 42.5, negzero: 0 });
  });
});

describe('bind replays must say the same thing', () => {
  it('same hash with another ticker, chain or payer → 409; the same details → 200 idempotent', async () => {
    const session = await createSession(kassa, merchant, checkoutRequest());
    const hash = txHash(0xbeef);
    const first = { tx_hash: hash, chain_id: '56', crypto_currency: 'USDT', payer_wallet_address: PAYER };
    expect((await postBind(kassa, session.session_id, first)).status).toBe(200);
    expectErrorBody(
      await postBind(kassa, session.session_id, { ...first, crypto_currency: 'ETH' }),
      409,
      'crypto_currency ETH differs from USDT, the asset this transaction was bound for',
    );
    expectErrorBody(
      await postBind(kassa, session.session_id, { ...first, chain_id: '1' }),
      409,
      'chain_id 1 differs from 56, the chain this transaction was bound on',
    );
    expectErrorBody(
      await postBind(kassa, session.session_id, { ...first, payer_wallet_address: `0x${'1'.repeat(40)}` }),
      409,
      'payer_wallet_address differs from the one bound with this transaction',
    );
    const replay = await postBind(kassa, session.session_id, {
      tx_hash: hash.toUpperCase().replace('0X', '0x'),
      chain_id: '0x38',
    });
    expect(replay.status).toBe(200);
    expect(replay.body).toMatchObject({ idempotent: true, crypto_currency: 'USDT' });
  });
});

describe('errors outside the routes', () => {
  it('a known path with another method → 405 with Allow, also for /health, /ready and /metrics', async () => {
    for (const path of ['/health', '/ready', '/metrics']) {
      const response = await kassa.http.post(path);
      expectErrorBody(response, 405);
      expect(response.headers.allow).toBe('GET');
    }
  });

  it('requests never matched to a route are labelled "unmatched" in /metrics, never by their path', async () => {
    await kassa.http
      .post('/nope-123')
      .set('Content-Type', 'application/json')
      .send('x'.repeat(150 * 1024))
      .expect(413);
    await kassa.http.get('/checkout-sessions/%ZZ').expect(400);
    const metrics = (await kassa.http.get('/metrics')).text;
    expect(metrics).not.toContain('nope-123');
    expect(metrics).not.toContain('%ZZ');
    expect(metrics).toMatch(
      /kassa_http_request_duration_seconds_count\{method="POST",route="unmatched",status="413"\} 1/,
    );
  });

  const rawRequest = (text: string) =>
    new Promise<string>((resolve, reject) => {
      const { port } = new URL(kassa.url);
      const socket = net.connect({ host: '127.0.0.1', port: Number(port) }, () => socket.write(text));
      let received = '';
      socket.on('data', (chunk) => (received += chunk.toString()));
      socket.on('end', () => resolve(received));
      socket.on('error', reject);
    });

  it('headers over Node’s limit → 431 with the spec body', async () => {
    const answer = await rawRequest(`GET /health HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`);
    expect(answer).toMatch(/^HTTP\/1.1 431 Request Header Fields Too Large\r\n/);
    expect(JSON.parse(answer.split('\r\n\r\n')[1]!)).toEqual({
      statusCode: 431,
      message: 'Request headers are too large',
      error: 'Request Header Fields Too Large',
    });
  });

  it('a GraphQL request in absolute form whose authority is no valid URL is answered as GraphQL, not 500', async () => {
    const query = encodeURIComponent('{ networks { slug } }');
    const get = await rawRequest(
      `GET http://h:99999/graphql?query=${query} HTTP/1.1\r\nHost: x\r\nApollo-Require-Preflight: 1\r\nConnection: close\r\n\r\n`,
    );
    expect(get).toMatch(/^HTTP\/1.1 200 OK\r\n/);
    expect(JSON.parse(get.split('\r\n\r\n')[1]!).data.networks.length).toBeGreaterThan(0);
    const body = JSON.stringify({ query: '{ networks { slug } }' });
    const post = await rawRequest(
      `POST http://h:99999/graphql HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n` +
        `Content-Length: ${body.length}\r\nConnection: close\r\n\r\n${body}`,
    );
    expect(post).toMatch(/^HTTP\/1.1 200 OK\r\n/);
  });

  it('a garbage request line → 400 with the spec body', async () => {
    const answer = await rawRequest('HELLO THERE\r\n\r\n');
    expect(answer).toMatch(/^HTTP\/1.1 400 Bad Request\r\n/);
    expect(JSON.parse(answer.split('\r\n\r\n')[1]!)).toEqual({
      statusCode: 400,
      message: ['Malformed HTTP request'],
      error: 'Bad Request',
    });
  });
});

// Found by review: no answer said whether it may be stored. A merchant's signed reads have the same URL for every
// merchant and no Authorization header, so a shared cache in front of Kassa (Varnish keeps such answers two minutes by
// default) could hand one merchant's events or webhook endpoints to another (docs/api/rest.md#caching).
describe('requests that offer to switch protocols (Upgrade) other than the GraphQL WebSocket', () => {
  /** Sends `text` on a new connection; resolves with everything received until the server closes it. */
  const exchange = (parts: readonly string[]) =>
    new Promise<string>((resolve, reject) => {
      const { port } = new URL(kassa.url);
      const socket = net.connect({ host: '127.0.0.1', port: Number(port) }, async () => {
        // The body in a later packet too: it follows the headers on the connection Node's parser let go of.
        for (const part of parts) {
          socket.write(part);
          await new Promise((later) => setTimeout(later, 20));
        }
      });
      let received = '';
      socket.on('data', (chunk) => (received += chunk.toString()));
      socket.on('end', () => resolve(received));
      socket.on('error', reject);
    });
  const H2C = 'Connection: Upgrade, HTTP2-Settings\r\nUpgrade: h2c\r\nHTTP2-Settings: AAMAAABkAAQAoAAAAAIAAAAA\r\n';
  const headOf = (answer: string) => answer.split('\r\n\r\n')[0]!;
  const bodyOf = (answer: string) => JSON.parse(answer.split('\r\n\r\n').slice(1).join('\r\n\r\n'));

  it('a signed create offering h2c (curl --http2 on http://) is served over HTTP/1.1: 201, then the connection closes', async () => {
    const body = JSON.stringify(checkoutRequest());
    const timestamp = String(freshTimestamp());
    const signature = createHmac('sha256', merchant.apiSecret)
      .update(stringToSign(timestamp, 'POST', '/checkout-sessions', body), 'utf8')
      .digest('hex');
    const head =
      `POST /checkout-sessions HTTP/1.1\r\nHost: x\r\n${H2C}Content-Type: application/json\r\n` +
      `X-Service-Key: ${merchant.apiKey}\r\nX-Service-Timestamp: ${timestamp}\r\nX-Service-Signature: ${signature}\r\n` +
      `Content-Length: ${Buffer.byteLength(body)}\r\n\r\n`;
    const answer = await exchange([head + body.slice(0, 40), body.slice(40)]);
    expect(answer).toMatch(/^HTTP\/1.1 201 Created\r\n/);
    expect(headOf(answer)).toMatch(/\r\nX-Request-Id: [0-9a-f-]{36}\r\n/i);
    expect(headOf(answer)).toMatch(/\r\nConnection: close(\r\n|$)/i);
    const created = bodyOf(answer);
    expect(created.status).toBe('waiting_payment');
    expect((await kassa.http.get(`/checkout-sessions/${created.session_id}`)).status).toBe(200);
  });

  it('a POST offering a WebSocket is served as the POST it is; a malformed WebSocket handshake gets the spec body', async () => {
    const query = JSON.stringify({ query: '{ networks { slug } }' });
    const post = await exchange([
      'POST /graphql HTTP/1.1\r\nHost: x\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n' +
        `Content-Type: application/json\r\nContent-Length: ${query.length}\r\n\r\n${query}`,
    ]);
    expect(post).toMatch(/^HTTP\/1.1 200 OK\r\n/);
    expect(bodyOf(post).data.networks.length).toBeGreaterThan(0);

    const noKey = await exchange([
      'GET /graphql HTTP/1.1\r\nHost: x\r\nConnection: Upgrade\r\nUpgrade: websocket\r\nSec-WebSocket-Version: 13\r\n\r\n',
    ]);
    expect(noKey).toMatch(/^HTTP\/1.1 400 Bad Request\r\n/);
    expect(headOf(noKey)).toMatch(/\r\nContent-Type: application\/json/i);
    expect(bodyOf(noKey)).toMatchObject({ statusCode: 400, error: 'Bad Request' });
  });

  it('a client that waits for 100 Continue before its body gets it, then its answer', async () => {
    const { port } = new URL(kassa.url);
    const query = JSON.stringify({ query: '{ networks { slug } }' });
    const answer = await new Promise<string>((resolve, reject) => {
      const socket = net.connect({ host: '127.0.0.1', port: Number(port) }, () =>
        socket.write(
          `POST /graphql HTTP/1.1\r\nHost: x\r\n${H2C}Content-Type: application/json\r\n` +
            `Expect: 100-continue\r\nContent-Length: ${query.length}\r\n\r\n`,
        ),
      );
      let received = '';
      socket.on('data', (chunk) => {
        const first = received === '';
        received += chunk.toString();
        if (first && received.startsWith('HTTP/1.1 100 Continue\r\n\r\n')) socket.write(query);
      });
      socket.on('end', () => resolve(received));
      socket.on('error', reject);
    });
    const final = answer.replace('HTTP/1.1 100 Continue\r\n\r\n', '');
    expect(answer.startsWith('HTTP/1.1 100 Continue\r\n\r\n')).toBe(true);
    expect(final).toMatch(/^HTTP\/1.1 200 OK\r\n/);
  });

  it('a read offering h2c gets the same answer as without; an Upgrade: websocket elsewhere gets the spec body', async () => {
    const id = (await createSession(kassa, merchant, checkoutRequest())).session_id as string;
    const plain = await kassa.http.get(`/checkout-sessions/${id}`);
    const read = await exchange([`GET /checkout-sessions/${id} HTTP/1.1\r\nHost: x\r\n${H2C}\r\n`]);
    expect(read).toMatch(/^HTTP\/1.1 200 OK\r\n/);
    expect(bodyOf(read)).toEqual(plain.body);

    const elsewhere = await exchange([
      'GET /nowhere HTTP/1.1\r\nHost: x\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n' +
        'Sec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n',
    ]);
    expect(elsewhere).toMatch(/^HTTP\/1.1 404 Not Found\r\n/);
    expect(bodyOf(elsewhere)).toMatchObject({ statusCode: 404, error: 'Not Found' });
  });
});

describe('what caches may keep', () => {
  it("the API's answers are not stored: signed reads, creates (lane and route), errors, GraphQL", async () => {
    const session = await createSession(kassa, merchant, checkoutRequest());
    const answers = [
      await signedRequest(kassa, merchant, 'get', '/events'),
      await signedRequest(kassa, merchant, 'get', '/webhook-endpoints'),
      await signedRequest(kassa, merchant, 'get', '/payment-links'),
      await create(JSON.stringify(checkoutRequest())),
      await create(JSON.stringify(checkoutRequest()), { 'Content-Type': 'application/json; charset=utf-8' }),
      await create('{'),
      await kassa.http.post('/checkout-sessions').set('Content-Type', 'application/json').send('{}'),
      await postBind(kassa, session.session_id, { tx_hash: txHash(77), chain_id: '31337', crypto_currency: 'USDT' }),
      await kassa.http.post('/graphql').send({ query: '{ networks { slug } }' }),
      await kassa.http.get('/graphql').query({ query: '{ networks { slug } }' }).set('apollo-require-preflight', '1'),
      await kassa.http.get('/nothing-here'),
    ];
    expect(answers.map((answer) => [answer.status, answer.headers['cache-control']])).toEqual([
      [200, 'no-store'],
      [200, 'no-store'],
      [200, 'no-store'],
      [201, 'no-store'],
      [201, 'no-store'],
      [400, 'no-store'],
      [401, 'no-store'],
      [expect.any(Number), 'no-store'],
      [200, 'no-store'],
      [200, 'no-store'],
      [404, 'no-store'],
    ]);
  });

  it("a session's public view may be kept but is checked each time, however it is answered", async () => {
    const session = await createSession(kassa, merchant, checkoutRequest());
    const path = `/checkout-sessions/${session.session_id}`;
    // The first read may come from the route, the next from the cached lane (src/rest/cached-session-reads.ts).
    const reads = [await kassa.http.get(path), await kassa.http.get(path), await kassa.http.get(`${path}?x=1`)];
    expect(reads.map((read) => [read.status, read.headers['cache-control']])).toEqual([
      [200, 'no-cache'],
      [200, 'no-cache'],
      [200, 'no-cache'],
    ]);
    const again = await kassa.http.get(path).set('If-None-Match', reads[0]!.headers.etag!);
    expect([again.status, again.headers['cache-control']]).toEqual([304, 'no-cache']);
  });
});
