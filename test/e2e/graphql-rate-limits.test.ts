import { createHash } from 'node:crypto';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { startTestKassa, type TestKassa } from '../support/kassa.js';
import { createMerchant } from '../factories/merchant.js';
import { checkoutRequest, txHash } from '../factories/checkout-request.js';
import { createSession, expectErrorBody, postBind } from '../support/rest-kassa.js';
import {
  BIND_MUTATION,
  graphqlError,
  openSocket,
  postGraphql,
  SESSION_QUERY,
  UPDATES_SUBSCRIPTION,
} from '../support/graphql-kassa.js';

/**
 * Issue 11 B on the payer's GraphQL surface: operations and WebSocket
 * connections per address, and binds sharing one limit with REST bind-tx.
 * Refusals are TOO_MANY_REQUESTS, with HTTP 429 and Retry-After where HTTP answers.
 */

const opened: TestKassa[] = [];
/** A clock one second into a fresh minute window: fixed windows must not roll over mid-test (see rest-rate-limits.test.ts). */
function freshWindowClock(): () => Date {
  const now = Date.now();
  const offset = Math.ceil(now / 60_000) * 60_000 + 1_000 - now;
  return () => new Date(Date.now() + offset);
}
let testClock = freshWindowClock();
beforeEach(() => {
  testClock = freshWindowClock();
});
async function open(env: Record<string, string>): Promise<TestKassa> {
  const kassa = await startTestKassa({ env, clock: testClock });
  opened.push(kassa);
  return kassa;
}
afterEach(async () => {
  for (const kassa of opened.splice(0)) await kassa.close();
});

const bindInput = (n: number) => ({ txHash: txHash(n), chainId: '31337', cryptoCurrency: 'ETH' });

describe('GraphQL operations per address', () => {
  it('a burst over HTTP → HTTP 429, Retry-After, TOO_MANY_REQUESTS', async () => {
    const kassa = await open({ KASSA_RATE_LIMIT_GRAPHQL: '3/1m' });
    const session = await createSession(kassa, await createMerchant(kassa.ctx), checkoutRequest());
    for (let i = 0; i < 3; i++)
      expect((await postGraphql(kassa, SESSION_QUERY, { id: session.session_id })).status).toBe(200);
    const response = await postGraphql(kassa, SESSION_QUERY, { id: session.session_id });
    expect(response.status).toBe(429);
    const retryAfter = Number(response.headers['retry-after']);
    expect(retryAfter).toBeGreaterThanOrEqual(1);
    expect(retryAfter).toBeLessThanOrEqual(60);
    const message = `Too many GraphQL operations from this address: at most 3 per 60 s; retry after ${retryAfter} s`;
    expect(response.body).toEqual({
      errors: [
        {
          message,
          extensions: {
            code: 'TOO_MANY_REQUESTS',
            reason: 'rate_limited',
            messages: [message],
            retryAfterSeconds: retryAfter,
          },
        },
      ],
    });
    // REST reads are not GraphQL operations.
    expect((await kassa.http.get(`/checkout-sessions/${session.session_id}`)).status).toBe(200);
  });

  it('operations over a WebSocket count too: one too many is that operation’s error, the socket stays open', async () => {
    const kassa = await open({ KASSA_RATE_LIMIT_GRAPHQL: '2/1m' });
    const session = await createSession(kassa, await createMerchant(kassa.ctx), checkoutRequest());
    const socket = openSocket(kassa);
    try {
      const first = socket.subscribe(UPDATES_SUBSCRIPTION, { id: session.session_id });
      await first.waitFor((result) => Boolean(result.data));
      const second = socket.subscribe(UPDATES_SUBSCRIPTION, { id: session.session_id });
      await second.waitFor((result) => Boolean(result.data));
      const third = socket.subscribe(UPDATES_SUBSCRIPTION, { id: session.session_id });
      const refused = await third.waitFor((result) => Boolean(result.errors));
      expect(refused.errors![0]).toMatchObject({
        message: expect.stringMatching(/^Too many GraphQL operations from this address/),
        extensions: { code: 'TOO_MANY_REQUESTS' },
      });
      expect(socket.closeCodes).toEqual([]);
      // HTTP from the same address is over the limit as well.
      expect((await postGraphql(kassa, SESSION_QUERY, { id: session.session_id })).status).toBe(429);
    } finally {
      await socket.dispose();
    }
  });

  it('WebSocket operations that do not parse or validate count too', async () => {
    const kassa = await open({ KASSA_RATE_LIMIT_GRAPHQL: '3/1m' });
    const session = await createSession(kassa, await createMerchant(kassa.ctx), checkoutRequest());
    const socket = openSocket(kassa);
    try {
      // A live subscription keeps the client's (lazy) socket open.
      const live = socket.subscribe(UPDATES_SUBSCRIPTION, { id: session.session_id });
      await live.waitFor((result) => Boolean(result.data));
      const broken = socket.subscribe('subscription { checkoutSessionUpdated(id: ', {});
      expect((await broken.waitFor((result) => Boolean(result.errors))).errors![0]!.extensions).toMatchObject({
        code: 'GRAPHQL_PARSE_FAILED',
      });
      const invalid = socket.subscribe('subscription { noSuchField }', {});
      expect((await invalid.waitFor((result) => Boolean(result.errors))).errors![0]!.extensions).toMatchObject({
        code: 'GRAPHQL_VALIDATION_FAILED',
      });
      const third = socket.subscribe(UPDATES_SUBSCRIPTION, { id: session.session_id });
      const refused = await third.waitFor((result) => Boolean(result.errors));
      expect(refused.errors![0]).toMatchObject({
        message: expect.stringMatching(/^Too many GraphQL operations from this address/),
        extensions: { code: 'TOO_MANY_REQUESTS' },
      });
      expect(socket.closeCodes).toEqual([]);
    } finally {
      await socket.dispose();
    }
  });

  it('HTTP bodies that are not JSON count too', async () => {
    const kassa = await open({ KASSA_RATE_LIMIT_GRAPHQL: '2/1m' });
    const session = await createSession(kassa, await createMerchant(kassa.ctx), checkoutRequest());
    for (let i = 0; i < 2; i++) {
      const malformed = await kassa.http
        .post('/graphql')
        .set('Content-Type', 'application/json')
        .send('{"query": "{ __typename ');
      expect(malformed.status).toBe(400);
      expect(malformed.body.errors[0].extensions.code).toBe('BAD_REQUEST');
    }
    expect((await postGraphql(kassa, SESSION_QUERY, { id: session.session_id })).status).toBe(429);
  });
});

describe('binds: one limit for REST bind-tx and the bindTransaction mutation', () => {
  it('per session, whichever surface binds', async () => {
    const kassa = await open({ KASSA_RATE_LIMIT_BIND_SESSION: '3/1m' });
    const session = await createSession(kassa, await createMerchant(kassa.ctx), checkoutRequest());
    expect(
      (await postBind(kassa, session.session_id, { tx_hash: txHash(1), chain_id: '31337', crypto_currency: 'ETH' }))
        .status,
    ).toBe(200);
    expect(
      (await postGraphql(kassa, BIND_MUTATION, { sessionId: session.session_id, input: bindInput(1) })).body.data
        .bindTransaction.idempotent,
    ).toBe(true);
    expect((await postBind(kassa, session.session_id, { tx_hash: txHash(1), chain_id: '31337' })).status).toBe(200);
    const refused = await graphqlError(
      kassa,
      BIND_MUTATION,
      { sessionId: session.session_id, input: bindInput(1) },
      'TOO_MANY_REQUESTS',
      { status: 429 },
    );
    expect(refused.message).toMatch(/^Too many binds of this checkout session: at most 3 per 60 s; retry after \d+ s$/);
    expectErrorBody(await postBind(kassa, session.session_id, { tx_hash: txHash(1), chain_id: '31337' }), 429);
    // Reading the session is not a bind.
    expect((await postGraphql(kassa, SESSION_QUERY, { id: session.session_id })).status).toBe(200);
  });

  it('per address, however the mutation is spelled (aliases, literals, fragments)', async () => {
    const kassa = await open({ KASSA_RATE_LIMIT_BIND_ADDRESS: '3/1m' });
    const merchant = await createMerchant(kassa.ctx);
    const sessions = [];
    for (let i = 0; i < 3; i++)
      sessions.push((await createSession(kassa, merchant, checkoutRequest())).session_id as string);
    const literal = `mutation { a: bindTransaction(sessionId: "${sessions[0]}", input: { txHash: "${txHash(21)}", chainId: "31337", cryptoCurrency: ETH }) { idempotent } }`;
    expect((await postGraphql(kassa, literal)).body.data.a.idempotent).toBe(false);
    const fragment = `mutation($id: ID!, $input: BindTransactionInput!) { ...Bind } fragment Bind on Mutation { bindTransaction(sessionId: $id, input: $input) { idempotent } }`;
    expect(
      (await postGraphql(kassa, fragment, { id: sessions[1], input: bindInput(22) })).body.data.bindTransaction
        .idempotent,
    ).toBe(false);
    // Two binds in one operation count twice, each when it runs: x is the third and binds, y is one too many.
    const twice = `mutation { x: bindTransaction(sessionId: "${sessions[2]}", input: { txHash: "${txHash(23)}", chainId: "31337", cryptoCurrency: ETH }) { idempotent }
      y: bindTransaction(sessionId: "${sessions[2]}", input: { txHash: "${txHash(24)}", chainId: "31337" }) { idempotent } }`;
    const response = await postGraphql(kassa, twice);
    expect(response.status).toBe(429);
    expect(Number(response.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    // bindTransaction is non-null: y's refusal nulls the whole `data`, though x ran.
    expect(response.body.data).toBeNull();
    expect(response.body.errors).toHaveLength(1);
    expect(response.body.errors[0]).toMatchObject({
      path: ['y'],
      message: expect.stringMatching(/^Too many binds from this address: at most 3 per 60 s/),
      extensions: { code: 'TOO_MANY_REQUESTS' },
    });
    expect(response.body.errors[0].extensions).not.toHaveProperty('http');
    const bound = await kassa.runtime.db.prisma.checkoutSessionTransaction.findMany({
      where: { sessionId: sessions[2] },
    });
    expect(bound.map((row) => row.txHash)).toEqual([txHash(23)]);
  });

  it('aliased binds in one request each count against the session as they run', async () => {
    const kassa = await open({ KASSA_RATE_LIMIT_BIND_SESSION: '3/1m' });
    const session = (await createSession(kassa, await createMerchant(kassa.ctx), checkoutRequest()))
      .session_id as string;
    const aliases = Array.from(
      { length: 5 },
      (_, i) =>
        `b${i}: bindTransaction(sessionId: $s, input: { txHash: "${txHash(40 + i)}", chainId: "31337", cryptoCurrency: ETH }) { idempotent }`,
    );
    const response = await postGraphql(kassa, `mutation($s: ID!) { ${aliases.join('\n')} }`, { s: session });
    expect(response.status).toBe(429);
    expect(response.body.data).toBeNull();
    // Mutation fields run one after another; the refusal of b3 (non-null) ends the operation, so b4 never runs.
    expect(
      response.body.errors.map((error: { path: string[]; extensions: { code: string } }) => [
        error.path[0],
        error.extensions.code,
      ]),
    ).toEqual([['b3', 'TOO_MANY_REQUESTS']]);
    expect(await kassa.runtime.db.prisma.checkoutSessionTransaction.count({ where: { sessionId: session } })).toBe(3);
  });

  it('a session named only by a variable’s default value is counted per session', async () => {
    const kassa = await open({ KASSA_RATE_LIMIT_BIND_SESSION: '2/1m' });
    const session = (await createSession(kassa, await createMerchant(kassa.ctx), checkoutRequest()))
      .session_id as string;
    const hidden = (n: number) =>
      `mutation($s: ID! = "${session}") { bindTransaction(sessionId: $s, input: { txHash: "${txHash(n)}", chainId: "31337", cryptoCurrency: ETH }) { idempotent } }`;
    expect((await postGraphql(kassa, hidden(51))).body.data.bindTransaction.idempotent).toBe(false);
    expect((await postGraphql(kassa, hidden(52))).body.data.bindTransaction.idempotent).toBe(false);
    const refused = await graphqlError(kassa, hidden(53), undefined, 'TOO_MANY_REQUESTS', { status: 429 });
    expect(refused.message).toMatch(/^Too many binds of this checkout session: at most 2 per 60 s/);
    expectErrorBody(await postBind(kassa, session, { tx_hash: txHash(54), chain_id: '31337' }), 429);
  });

  it('over a WebSocket each executed bind counts, a default value too', async () => {
    const kassa = await open({ KASSA_RATE_LIMIT_BIND_SESSION: '1/1m' });
    const session = (await createSession(kassa, await createMerchant(kassa.ctx), checkoutRequest()))
      .session_id as string;
    const hidden = (n: number) =>
      `mutation($s: ID! = "${session}") { bindTransaction(sessionId: $s, input: { txHash: "${txHash(n)}", chainId: "31337", cryptoCurrency: ETH }) { idempotent } }`;
    const socket = openSocket(kassa);
    try {
      const live = socket.subscribe(UPDATES_SUBSCRIPTION, { id: session });
      await live.waitFor((result) => Boolean(result.data));
      const first = socket.subscribe(hidden(61), {});
      expect((await first.waitFor((result) => Boolean(result.data || result.errors))).data).toEqual({
        bindTransaction: { idempotent: false },
      });
      const second = socket.subscribe(hidden(62), {});
      const refused = await second.waitFor((result) => Boolean(result.errors));
      expect(refused.errors![0]).toMatchObject({
        message: expect.stringMatching(/^Too many binds of this checkout session/),
        extensions: { code: 'TOO_MANY_REQUESTS' },
      });
      expect(refused.errors![0]!.extensions).not.toHaveProperty('http');
      expect(socket.closeCodes).toEqual([]);
    } finally {
      await socket.dispose();
    }
  });

  it('automatic persisted queries are off: a mutation cannot be registered and replayed by its hash', async () => {
    const kassa = await open({ KASSA_RATE_LIMIT_BIND_SESSION: '100/1m' });
    const session = (await createSession(kassa, await createMerchant(kassa.ctx), checkoutRequest()))
      .session_id as string;
    const query = `mutation { bindTransaction(sessionId: "${session}", input: { txHash: "${txHash(71)}", chainId: "31337", cryptoCurrency: ETH }) { idempotent } }`;
    const persistedQuery = { version: 1, sha256Hash: createHash('sha256').update(query).digest('hex') };
    for (const body of [{ query, extensions: { persistedQuery } }, { extensions: { persistedQuery } }]) {
      const response = await kassa.http
        .post('/graphql')
        .set('Content-Type', 'application/json')
        .send(JSON.stringify(body));
      expect(response.body.data, JSON.stringify(response.body)).toBeUndefined();
      expect(response.body.errors.map((error: { extensions: { code: string } }) => error.extensions.code)).toEqual([
        'PERSISTED_QUERY_NOT_SUPPORTED',
      ]);
    }
    expect(await kassa.runtime.db.prisma.checkoutSessionTransaction.count({ where: { sessionId: session } })).toBe(0);
  });
});

describe('WebSocket connections per address', () => {
  it('one connection too many is refused at the upgrade with HTTP 429, Retry-After and the error body', async () => {
    const kassa = await open({ KASSA_RATE_LIMIT_WEBSOCKET: '2/1m' });
    const url = `${kassa.url.replace(/^http/, 'ws')}/graphql`;
    const connect = () =>
      new Promise<{
        status: number;
        headers: Record<string, string | string[] | undefined>;
        body: string;
        socket?: WebSocket;
      }>((resolve, reject) => {
        const socket = new WebSocket(url, 'graphql-transport-ws');
        socket.once('open', () => resolve({ status: 101, headers: {}, body: '', socket }));
        socket.once('unexpected-response', (_request, response) => {
          let body = '';
          response.on('data', (chunk: Buffer) => (body += chunk.toString()));
          response.on('end', () => resolve({ status: response.statusCode ?? 0, headers: response.headers, body }));
        });
        socket.once('error', (error) => (socket.readyState === WebSocket.CLOSED ? undefined : reject(error)));
      });
    const accepted = [await connect(), await connect()];
    try {
      expect(accepted.map((answer) => answer.status)).toEqual([101, 101]);
      const refused = await connect();
      expect(refused.status).toBe(429);
      const retryAfter = Number(refused.headers['retry-after']);
      expect(retryAfter).toBeGreaterThanOrEqual(1);
      expect(refused.headers['content-type']).toMatch(/^application\/json/);
      expect(JSON.parse(refused.body)).toEqual({
        statusCode: 429,
        message: `Too many GraphQL WebSocket connections from this address: at most 2 per 60 s; retry after ${retryAfter} s`,
        error: 'Too Many Requests',
      });
    } finally {
      for (const answer of accepted) answer.socket?.close();
    }
  });
});
