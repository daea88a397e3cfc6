import { Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger } from '../../src/logging.js';
import { checkoutRequest } from '../factories/checkout-request.js';
import { createMerchant, signed, type TestMerchant } from '../factories/merchant.js';
import { startTestKassa, type TestKassa } from '../support/kassa.js';
import { createSession } from '../support/rest-kassa.js';

/**
 * docs/operations.md#data-and-operations (Logs): one JSON line per request, under its X-Request-Id, with secrets
 * redacted.
 */

const lines: Array<Record<string, any>> = [];
const sink = new Writable({
  write(chunk, _encoding, done) {
    for (const line of String(chunk).split('\n').filter(Boolean)) lines.push(JSON.parse(line));
    done();
  },
});
let kassa: TestKassa;
let merchant: TestMerchant;

beforeAll(async () => {
  kassa = await startTestKassa({ logger: createLogger('info', sink) });
  merchant = await createMerchant(kassa.ctx);
});
afterAll(() => kassa?.close());

const logOf = async (requestId: string) => {
  const deadline = Date.now() + 2000;
  for (;;) {
    const line = lines.find((candidate) => candidate.reqId === requestId && candidate.msg === 'request completed');
    if (line || Date.now() > deadline) return line;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
};

describe('the request log', () => {
  it('writes one line per request with its id, method, path, status and time; the signature is redacted', async () => {
    const response = await signed(
      kassa.http.post('/checkout-sessions').set('X-Request-Id', 'log-test-1'),
      merchant,
      JSON.stringify(checkoutRequest()),
    );
    expect(response.status).toBe(201);
    const line = await logOf('log-test-1');
    expect(line).toMatchObject({
      level: 30,
      service: 'kassa',
      req: { id: 'log-test-1', method: 'POST', url: '/checkout-sessions' },
      res: { statusCode: 201 },
    });
    expect(typeof line!.responseTime).toBe('number');
    expect(line!.req.headers['x-service-signature']).toBe('[redacted]');
    expect(line!.req.headers['x-service-key']).toBe(merchant.apiKey);
    expect(
      lines.filter((candidate) => candidate.reqId === 'log-test-1' && candidate.msg === 'request completed'),
    ).toHaveLength(1);
  });

  it('logs a 4xx at warn, and a secret pasted as X-Service-Key never appears', async () => {
    const response = await kassa.http
      .get('/events')
      .set('X-Request-Id', 'log-test-2')
      .set('X-Service-Key', 'sk_live_pasted_secret');
    expect(response.status).toBe(401);
    const line = await logOf('log-test-2');
    expect(line).toMatchObject({ level: 40, res: { statusCode: 401 } });
    expect(line!.req.headers['x-service-key']).toBe('[redacted]');
    expect(JSON.stringify(lines)).not.toContain('sk_live_pasted_secret');
  });

  it('gives a request without a usable id a fresh one, logged and echoed', async () => {
    const response = await kassa.http.get('/health').set('X-Request-Id', 'not a safe id!');
    const id = response.headers['x-request-id'];
    expect(id).toMatch(/^[0-9a-f-]{36}$/);
    expect(await logOf(id)).toMatchObject({ req: { url: '/health' }, res: { statusCode: 200 } });
  });

  it('logs a read answered before Express (a cached session, a kept GraphQL answer) once, under its echoed id', async () => {
    const id = (await createSession(kassa, merchant, checkoutRequest())).session_id as string;
    await kassa.http.get(`/checkout-sessions/${id}`); // read through the route: cached from now on
    expect(kassa.ctx.store.sessions.peek?.(id)).toBeDefined();
    const rest = await kassa.http.get(`/checkout-sessions/${id}`).set('X-Request-Id', 'log-lane-rest');
    expect(rest.status).toBe(200);
    expect(rest.headers['x-request-id']).toBe('log-lane-rest');
    // The hosted page's query over GET; asked again until a kept answer serves it (one is kept per second it shows).
    const query = 'query($id: ID!) { checkoutSession(id: $id) { sessionId status secondsUntilExpiry } }';
    const url = `/graphql?${new URLSearchParams({ query, variables: JSON.stringify({ id }) })}`;
    let kept: string | undefined;
    for (let attempt = 0; attempt < 5 && kept === undefined; attempt++) {
      const hits = kassa.cachedQueries.hits;
      const given = `log-lane-graphql-${attempt}`;
      const response = await kassa.http.get(url).set('Apollo-Require-Preflight', 'true').set('X-Request-Id', given);
      expect(response.status).toBe(200);
      expect(response.headers['x-request-id']).toBe(given);
      if (kassa.cachedQueries.hits > hits) kept = given;
    }
    expect(kept).toBeDefined();
    expect(await logOf('log-lane-rest')).toMatchObject({
      level: 30,
      req: { id: 'log-lane-rest', method: 'GET', url: `/checkout-sessions/${id}` },
      res: { statusCode: 200 },
    });
    expect(await logOf(kept!)).toMatchObject({
      level: 30,
      req: { id: kept, method: 'GET', url },
      res: { statusCode: 200 },
    });
    for (const requestId of ['log-lane-rest', kept])
      expect(
        lines.filter((candidate) => candidate.reqId === requestId && candidate.msg === 'request completed'),
      ).toHaveLength(1);
  });
});
