import type { Response } from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestKassa, type TestKassa } from '../support/kassa.js';
import { createMerchant, signed, type TestMerchant } from '../factories/merchant.js';
import { checkoutRequest, PAYER } from '../factories/checkout-request.js';
import type { RatesProvider } from '../../src/domain/rates/rates-ports.js';
import { UUID, createSession, expectErrorBody, expectErrorCode, postBind, postCreate } from '../support/rest-kassa.js';

/** docs/api/rest.md#errors: every error on every route has the error body; transport refusals; health; request ids. */

const INTERNAL_DETAIL = 'rates-db.internal:5432 refused: password=hunter2';
let kassa: TestKassa;
let merchant: TestMerchant;
let sessionId: string;

beforeAll(async () => {
  // The fixture rates, except that pricing in CHF blows up with an unexpected (non-domain) error.
  const ratesHolder: { real?: RatesProvider } = {};
  const rates: RatesProvider = {
    supportsCurrency: (fiat) => ratesHolder.real!.supportsCurrency(fiat),
    quoteRates: async (fiat, tickers, now) => {
      if (fiat === 'CHF') throw new Error(INTERNAL_DETAIL);
      return ratesHolder.real!.quoteRates(fiat, tickers, now);
    },
  };
  kassa = await startTestKassa({ override: { rates } });
  ratesHolder.real = kassa.runtime.ctx.rates;
  merchant = await createMerchant(kassa.ctx);
  sessionId = (await createSession(kassa, merchant, checkoutRequest())).session_id;
});
afterAll(() => kassa?.close());

const BODY_LIMIT = 100 * 1024;

describe('unknown routes and methods', () => {
  it.each([
    ['GET', '/'],
    ['GET', '/nope'],
    ['POST', '/checkout-session'],
    ['GET', '/checkout-sessions/0f8fad5b-d9cb-469f-a165-70867728950e/extra'],
    ['POST', '/checkout-sessions/0f8fad5b-d9cb-469f-a165-70867728950e/bind'],
    ['DELETE', '/health/now'],
  ])('%s %s → 404 with the error body', async (method, path) => {
    const response = await kassa.http[method.toLowerCase() as 'get'](path);
    expectErrorBody(response, 404, `Cannot ${method} ${path}`);
  });

  it.each([
    ['get', '/checkout-sessions', 'POST'],
    ['put', '/checkout-sessions', 'POST'],
    ['delete', '/checkout-sessions', 'POST'],
    ['patch', '/checkout-sessions', 'POST'],
    ['post', '/checkout-sessions/0f8fad5b-d9cb-469f-a165-70867728950e', 'GET'],
    ['put', '/checkout-sessions/0f8fad5b-d9cb-469f-a165-70867728950e', 'GET'],
    ['delete', '/checkout-sessions/0f8fad5b-d9cb-469f-a165-70867728950e', 'GET'],
    ['get', '/checkout-sessions/0f8fad5b-d9cb-469f-a165-70867728950e/bind-tx', 'POST'],
    ['put', '/checkout-sessions/0f8fad5b-d9cb-469f-a165-70867728950e/bind-tx', 'POST'],
  ] as const)('%s %s → 405 with Allow: %s', async (method, path, allow) => {
    const response = await kassa.http[method](path);
    expectErrorCode(response, 405, 'method_not_allowed', `Method ${method.toUpperCase()} is not allowed on ${path}`);
    expect(response.headers.allow).toBe(allow);
  });

  // Known defect, see the report: src/http/error-handler.ts (bodyParserStatus, default branch) calls
  // every other 4xx "Request body could not be read", here Express's failure to decode the path.
  it('a path that is not valid percent-encoding → 400 that blames the path, not the body', async () => {
    for (const path of ['/checkout-sessions/%E0%A4%A', '/checkout-sessions/%zz/bind-tx']) {
      const response = await kassa.http.get(path);
      expectErrorCode(response, 400, 'validation_failed');
      // A 400 always lists its problems.
      expect(response.body.message).toEqual([expect.stringMatching(/path|URL|percent|decode/i)]);
      expect(response.body.message[0]).not.toMatch(/body/i);
    }
  });

  it('405 comes before authentication and body checks', async () => {
    const response = await kassa.http.delete('/checkout-sessions').set('Content-Type', 'text/plain').send('x');
    expectErrorCode(response, 405, 'method_not_allowed', 'Method DELETE is not allowed on /checkout-sessions');
  });
});

describe('malformed JSON → 400', () => {
  const malformed = [
    ['truncated', '{"tx_hash": '],
    ['single quotes', "{'tx_hash': 'x'}"],
    ['a trailing comma', '{"chain_id": "1",}'],
    ['a duplicate key', '{"chain_id": "1", "chain_id": "56"}'],
    ['NaN', '{"chain_id": NaN}'],
    ['two documents', '{} {}'],
    ['a bare word', 'hello'],
  ];

  it.each(malformed)('on bind: %s', async (_what, text) => {
    const response = await postBind(kassa, sessionId, text);
    expectErrorCode(response, 400, 'validation_failed');
    expect(response.body.message).toHaveLength(1);
    expect(response.body.message[0]).toMatch(/^Malformed JSON: /);
  });

  it.each(malformed)('on a signed create: %s', async (_what, text) => {
    const response = await postCreate(kassa, merchant, text);
    expectErrorCode(response, 400, 'validation_failed');
    expect(response.body.message[0]).toMatch(/^Malformed JSON: /);
  });

  it('an empty body with a JSON content type', async () => {
    const response = await kassa.http
      .post(`/checkout-sessions/${sessionId}/bind-tx`)
      .set('Content-Type', 'application/json');
    expectErrorCode(response, 400, 'validation_failed', ['Request body must be a JSON object']);
    expectErrorCode(await postCreate(kassa, merchant, ''), 400, 'validation_failed', [
      'Request body must be a JSON object',
    ]);
  });
});

describe('content types', () => {
  const UNSUPPORTED = 'Content-Type must be application/json';

  it.each([
    ['text/plain'],
    ['application/x-www-form-urlencoded'],
    ['application/jsonp'],
    ['text/json'],
    ['multipart/form-data; boundary=x'],
  ])('bind with %s → 415', async (type) => {
    const body = JSON.stringify({ tx_hash: `0x${'1'.repeat(64)}`, chain_id: '1', crypto_currency: 'ETH' });
    const response = await kassa.http
      .post(`/checkout-sessions/${sessionId}/bind-tx`)
      .set('Content-Type', type)
      .send(body);
    expectErrorCode(response, 415, 'unsupported_media_type', UNSUPPORTED);
  });

  it('bind without any content type → 415', async () => {
    expectErrorCode(
      await kassa.http.post(`/checkout-sessions/${sessionId}/bind-tx`),
      415,
      'unsupported_media_type',
      UNSUPPORTED,
    );
  });

  it('a signed create whose valid signature covers a text/plain body → 415', async () => {
    const response = await postCreate(kassa, merchant, JSON.stringify(checkoutRequest()), {
      contentType: 'text/plain',
    });
    expectErrorCode(response, 415, 'unsupported_media_type', UNSUPPORTED);
  });

  it.each([['application/json; charset=utf-8'], ['Application/JSON'], ['application/vnd.kassa+json']])(
    '%s is JSON',
    async (type) => {
      const response = await postCreate(kassa, merchant, JSON.stringify(checkoutRequest()), { contentType: type });
      expect(response.status).toBe(201);
    },
  );
});

describe('body size', () => {
  const padded = (bytes: number) => {
    const text = `{"foo":"${'x'.repeat(bytes - 10)}"}`;
    expect(Buffer.byteLength(text)).toBe(bytes);
    return text;
  };

  it('a bind body over 100 KB → 413', async () => {
    expectErrorCode(
      await postBind(kassa, sessionId, padded(BODY_LIMIT + 1)),
      413,
      'body_too_large',
      'Request body is larger than the limit of 100 KB',
    );
  });

  it('a create body over 100 KB → 413, signed or not', async () => {
    expectErrorCode(
      await postCreate(kassa, merchant, padded(BODY_LIMIT + 1)),
      413,
      'body_too_large',
      'Request body is larger than the limit of 100 KB',
    );
    const unsigned = await kassa.http
      .post('/checkout-sessions')
      .set('Content-Type', 'application/json')
      .send(padded(2 * BODY_LIMIT));
    expectErrorCode(unsigned, 413, 'body_too_large', 'Request body is larger than the limit of 100 KB');
  });

  it('exactly 100 KB is read (and then judged on its content)', async () => {
    expectErrorCode(await postBind(kassa, sessionId, padded(BODY_LIMIT)), 400, 'validation_failed', [
      'property foo should not exist',
      'tx_hash is required',
      'chain_id is required',
    ]);
  });
});

describe('500', () => {
  it('an unexpected failure is a generic 500 that shows no internals', async () => {
    const response = await postCreate(kassa, merchant, checkoutRequest({ currency: 'CHF' }));
    expectErrorCode(response, 500, 'internal_error', 'Internal server error');
    expect(JSON.stringify(response.body)).not.toContain('hunter2');
    expect(JSON.stringify(response.body)).not.toContain('rates-db');
    expect(response.headers['x-request-id']).toMatch(UUID);
  });
});

describe('every error answer has the same shape', () => {
  it('400, 401, 404, 405, 409, 413, 415, 422 and 500 alike', async () => {
    const walletless = await createMerchant(kassa.ctx, { wallet: null });
    const bound = await createSession(kassa, merchant, checkoutRequest());
    await postBind(kassa, bound.session_id, { tx_hash: `0x${'2'.repeat(64)}`, chain_id: '1', crypto_currency: 'ETH' });
    const answers: Array<[number, Response]> = [
      [400, await postCreate(kassa, merchant, { items: [] })],
      [400, await kassa.http.get('/checkout-sessions/123')],
      [401, await kassa.http.post('/checkout-sessions').set('Content-Type', 'application/json').send('{}')],
      [404, await kassa.http.get('/checkout-sessions/0f8fad5b-d9cb-469f-a165-70867728950e')],
      [404, await kassa.http.get('/unknown')],
      [405, await kassa.http.patch('/checkout-sessions')],
      // The same transaction again, for another asset.
      [
        409,
        await postBind(kassa, bound.session_id, {
          tx_hash: `0x${'2'.repeat(64)}`,
          chain_id: '1',
          crypto_currency: 'USDT',
          payer_wallet_address: PAYER,
        }),
      ],
      [413, await postBind(kassa, bound.session_id, `"${'x'.repeat(BODY_LIMIT)}"`)],
      [
        415,
        await kassa.http
          .post(`/checkout-sessions/${bound.session_id}/bind-tx`)
          .set('Content-Type', 'text/xml')
          .send('<a/>'),
      ],
      [422, await postCreate(kassa, walletless, checkoutRequest())],
      [500, await postCreate(kassa, merchant, checkoutRequest({ currency: 'chf' }))],
    ];
    for (const [status, response] of answers) {
      expectErrorBody(response, status);
      expect(response.headers['x-request-id']).toBeTruthy();
    }
  });
});

describe('health, readiness and request ids', () => {
  it('/health → 200 {status: ok}; /ready → 200 {status: ready}', async () => {
    const health = await kassa.http.get('/health');
    expect(health.status).toBe(200);
    expect(health.headers['content-type']).toMatch(/^application\/json/);
    expect(health.body).toEqual({ status: 'ok' });
    const ready = await kassa.http.get('/ready');
    expect(ready.status).toBe(200);
    expect(ready.body).toEqual({ status: 'ready' });
  });

  it('echoes a given X-Request-Id, on success and on error', async () => {
    const ok = await kassa.http.get('/health').set('X-Request-Id', 'req-123.abc:def_9');
    expect(ok.headers['x-request-id']).toBe('req-123.abc:def_9');
    const error = await kassa.http.get('/nope').set('X-Request-Id', 'trace-42');
    expect(error.status).toBe(404);
    expect(error.headers['x-request-id']).toBe('trace-42');
    const created = await signed(
      kassa.http.post('/checkout-sessions').set('X-Request-Id', 'merchant-call-1'),
      merchant,
      JSON.stringify(checkoutRequest()),
    );
    expect(created.status).toBe(201);
    expect(created.headers['x-request-id']).toBe('merchant-call-1');
  });

  it('generates a fresh UUID when none (or an unusable one) is given', async () => {
    const first = await kassa.http.get('/health');
    const second = await kassa.http.get('/health');
    expect(first.headers['x-request-id']).toMatch(UUID);
    expect(second.headers['x-request-id']).toMatch(UUID);
    expect(first.headers['x-request-id']).not.toBe(second.headers['x-request-id']);
    for (const unusable of ['has spaces in it', 'x'.repeat(129), 'semi;colon', '<script>']) {
      const response = await kassa.http.get('/health').set('X-Request-Id', unusable);
      expect(response.headers['x-request-id']).toMatch(UUID);
    }
  });

  it('does not advertise the framework', async () => {
    expect((await kassa.http.get('/health')).headers['x-powered-by']).toBeUndefined();
  });
});
