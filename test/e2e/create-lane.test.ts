import { createHmac } from 'node:crypto';
import http from 'node:http';
import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestKassa, type TestKassa } from '../support/kassa.js';
import { createMerchant, freshTimestamp, type TestMerchant } from '../factories/merchant.js';
import { checkoutRequest } from '../factories/checkout-request.js';
import { writtenRows } from '../support/rest-kassa.js';

/**
 * POST /checkout-sessions is answered before Express when its body has a known length (src/rest/create-lane.ts)
 * and by Express's route otherwise (a chunked body); both call answerCreate and map errors the same way, so a
 * merchant cannot tell them apart: same statuses, bodies and headers, the same log line and metrics.
 */

let kassa: TestKassa;
let merchant: TestMerchant;

beforeAll(async () => {
  kassa = await startTestKassa();
  merchant = await createMerchant(kassa.ctx);
});
afterAll(() => kassa?.close());

interface Answer {
  readonly status: number;
  readonly headers: http.IncomingHttpHeaders;
  readonly body: Record<string, unknown>;
}

/** A create over plain HTTP, its body sent with a Content-Length (the lane) or in chunks (Express's route). */
function post(
  body: string,
  how: 'lane' | 'chunked',
  headers: Record<string, string> = signedHeaders(body),
  path = '/checkout-sessions',
): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const request = http.request(`${kassa.url}${path}`, { method: 'POST', headers }, (response) => {
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.on('end', () =>
        resolve({
          status: response.statusCode!,
          headers: response.headers,
          body: JSON.parse(Buffer.concat(chunks).toString('utf8')),
        }),
      );
    });
    request.on('error', reject);
    if (how === 'lane') {
      request.setHeader('Content-Length', Buffer.byteLength(body));
      request.end(body);
    } else {
      // No Content-Length: Node sends Transfer-Encoding: chunked.
      const middle = Math.floor(body.length / 2);
      request.write(body.slice(0, middle));
      request.end(body.slice(middle));
    }
  });
}

function signedHeaders(body: string, contentType = 'application/json'): Record<string, string> {
  const timestamp = String(freshTimestamp());
  return {
    'Content-Type': contentType,
    'X-Service-Key': merchant.apiKey,
    'X-Service-Timestamp': timestamp,
    'X-Service-Signature': createHmac('sha256', merchant.apiSecret).update(`${timestamp}.${body}`).digest('hex'),
  };
}

/** The headers that must agree; per-response ones (date, id, length and ETag of differing bodies) left out. */
function comparable(headers: http.IncomingHttpHeaders) {
  const { date: _d, 'x-request-id': id, 'content-length': _l, etag, ...rest } = headers;
  expect(id).toMatch(/^[0-9a-f-]{36}$/);
  expect(etag).toMatch(/^W\/"[0-9a-f]+-[A-Za-z0-9+/]{27}"$/);
  return rest;
}

describe('the create lane and the route agree', () => {
  it('201: same shape of answer and the same headers either way', async () => {
    const body = JSON.stringify(checkoutRequest());
    const viaLane = await post(body, 'lane');
    const viaRoute = await post(body, 'chunked');
    expect([viaLane.status, viaRoute.status]).toEqual([201, 201]);
    expect(Object.keys(viaLane.body).sort()).toEqual(Object.keys(viaRoute.body).sort());
    expect(viaLane.body.session_id).not.toBe(viaRoute.body.session_id);
    expect(comparable(viaLane.headers)).toEqual(comparable(viaRoute.headers));
    expect(viaLane.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(Number(viaLane.headers['content-length'])).toBe(Buffer.byteLength(JSON.stringify(viaLane.body)));
  });

  it.each([
    ['a wrong signature (401)', 401, () => ({ ...signedHeaders('{}'), 'Content-Type': 'application/json' })],
    ['malformed JSON (400)', 400, () => signedHeaders('{"user":')],
    ['a body that is not JSON (415)', 415, () => signedHeaders('{"user":', 'text/plain')],
    ['no signing headers (401)', 401, () => ({ 'Content-Type': 'application/json' })],
  ])('%s: the same status, error body and headers either way', async (_name, status, headers) => {
    const body = '{"user":';
    const viaLane = await post(body, 'lane', headers());
    const viaRoute = await post(body, 'chunked', headers());
    expect([viaLane.status, viaRoute.status]).toEqual([status, status]);
    expect(viaLane.body).toEqual(viaRoute.body);
    expect(viaLane.body).toMatchObject({ statusCode: status });
    expect(comparable(viaLane.headers)).toEqual(comparable(viaRoute.headers));
  });

  it('an Idempotency-Key replay says so in the lane as in the route', async () => {
    const body = JSON.stringify(checkoutRequest({ metadata: { order: 'lane-replay' } }));
    const first = await post(body, 'lane', { ...signedHeaders(body), 'Idempotency-Key': 'lane-replay' });
    const viaLane = await post(body, 'lane', { ...signedHeaders(body), 'Idempotency-Key': 'lane-replay' });
    const viaRoute = await post(body, 'chunked', { ...signedHeaders(body), 'Idempotency-Key': 'lane-replay' });
    expect(first.headers['idempotent-replayed']).toBeUndefined();
    expect(viaLane.headers['idempotent-replayed']).toBe('true');
    expect(viaRoute.headers['idempotent-replayed']).toBe('true');
    expect(viaLane.body).toEqual(first.body);
    expect(viaRoute.body).toEqual(first.body);
  });

  it('a query string or a chunked body goes to the route, which answers it the same', async () => {
    const body = JSON.stringify(checkoutRequest());
    const answer = await post(body, 'lane', signedHeaders(body), '/checkout-sessions?ref=campaign');
    expect(answer.status).toBe(201);
  });

  it('counts lane answers in the metrics under the route', async () => {
    const body = JSON.stringify(checkoutRequest());
    expect((await post(body, 'lane')).status).toBe(201);
    const counted = async () =>
      Number(
        /kassa_http_request_duration_seconds_count\{method="POST",route="\/checkout-sessions",status="201"\} (\d+)/.exec(
          (await kassa.http.get('/metrics')).text,
        )?.[1] ?? 0,
      );
    await expect.poll(counted).toBeGreaterThanOrEqual(1);
  });

  it('a client gone before its body arrived leaves nothing written, and the next create is answered', async () => {
    const before = await writtenRows(kassa, merchant.organisationId);
    const body = JSON.stringify(checkoutRequest());
    const headers = signedHeaders(body);
    const port = Number(new URL(kassa.url).port);
    await new Promise<void>((resolve) => {
      const socket = net.connect(port, '127.0.0.1', () => {
        socket.write(
          `POST /checkout-sessions HTTP/1.1\r\nHost: x\r\nContent-Length: ${Buffer.byteLength(body)}\r\n` +
            Object.entries(headers)
              .map(([name, value]) => `${name}: ${value}\r\n`)
              .join('') +
            `\r\n${body.slice(0, 10)}`,
        );
        setTimeout(() => socket.destroy(), 50);
      });
      socket.on('close', () => resolve());
      socket.on('error', () => resolve());
    });
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(await writtenRows(kassa, merchant.organisationId)).toEqual(before);
    expect((await post(body, 'lane', signedHeaders(body))).status).toBe(201);
  });
});
