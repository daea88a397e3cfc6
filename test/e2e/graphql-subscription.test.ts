import type { IncomingMessage } from 'node:http';
import { once } from 'node:events';
import WebSocket from 'ws';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { startTestKassa, type TestKassa } from '../support/kassa.js';
import { createMerchant, type TestMerchant } from '../factories/merchant.js';
import { checkoutRequest, PAYER } from '../factories/checkout-request.js';
import { controllableClock, createSession, isEmbedded, postBind } from '../support/rest-kassa.js';
import {
  BIND_MUTATION,
  UPDATES_SUBSCRIPTION,
  boundIn,
  graphqlData,
  openSocket,
  restViewOf,
  subscribe,
  withoutPayerIdentity,
  type LiveSocket,
  type LiveSubscription,
} from '../support/graphql-kassa.js';

/**
 * checkoutSessionUpdated over a real WebSocket. On PostgreSQL the change is
 * made by a second Kassa instance on the same database (LISTEN/NOTIFY); on the
 * embedded database (one instance only) the polling fallback carries it.
 */

const timeB = controllableClock();
let a: TestKassa;
let b: TestKassa | null = null;
let merchant: TestMerchant;
const open: Array<LiveSubscription | LiveSocket> = [];

beforeAll(async () => {
  a = await startTestKassa();
  if (!isEmbedded) b = await startTestKassa({ database: a.database, clock: timeB.clock });
  merchant = await createMerchant(a.ctx);
});
afterAll(async () => {
  await Promise.all(open.map((s) => s.dispose()));
  await b?.close();
  await a?.close();
});

let hashes = 0;
const newHash = () => `0x${(0x5b0000 + ++hashes).toString(16).padStart(64, 'f')}`;
const live = (kassa: TestKassa, id: string) => {
  const subscription = subscribe(kassa, UPDATES_SUBSCRIPTION, { id });
  open.push(subscription);
  return subscription;
};
const session = (result: { data?: Record<string, any> | null }) =>
  result.data?.checkoutSessionUpdated as Record<string, any> | undefined;

describe('checkoutSessionUpdated', () => {
  it.skipIf(isEmbedded)(
    'sends the session now, then the bind and the expiry made by another Kassa instance on the same database',
    async () => {
      const created = await createSession(a, merchant, checkoutRequest({ expires_in_minutes: 5 }));
      const updates = live(a, created.session_id);
      const first = session(await updates.waitFor((r) => session(r) !== undefined))!;
      expect(restViewOf(first)).toEqual(
        withoutPayerIdentity((await a.http.get(`/checkout-sessions/${created.session_id}`)).body),
      );
      expect(first.transactions).toEqual([]);

      const tx = newHash();
      await graphqlData(b!, BIND_MUTATION, {
        sessionId: created.session_id,
        input: { txHash: tx, chainId: '1', cryptoCurrency: 'USDC', payerWalletAddress: PAYER },
      });
      const bound = session(await updates.waitFor((r) => boundIn(session(r), tx) !== undefined))!;
      // A hash no chain knows: a candidate the payer sees, nothing locked.
      expect(bound).toMatchObject({ status: 'WAITING_PAYMENT', cryptoCurrency: null, boundTxHash: null });
      expect(boundIn(bound, tx)).toEqual({
        txHash: tx,
        chainId: '1',
        cryptoCurrency: 'USDC',
        state: 'UNVERIFIED',
        reason: null,
      });

      // Instance B's clock passes expiry and the in-flight grace; its read settles the session as expired.
      timeB.freeze(Date.parse(created.expires_at) + 61 * 60_000);
      expect((await b!.http.get(`/checkout-sessions/${created.session_id}`)).body.status).toBe('expired');
      timeB.release();
      const expired = session(await updates.waitFor((r) => session(r)?.status === 'EXPIRED'))!;
      expect(expired.secondsUntilExpiry).toBe(0);
      // One message per change: the first, the bind, the expiry.
      expect(updates.results.map((r) => [session(r)?.status, session(r)?.transactions.length])).toEqual([
        ['WAITING_PAYMENT', 0],
        ['WAITING_PAYMENT', 1],
        ['EXPIRED', 1],
      ]);
    },
  );

  it.skipIf(isEmbedded)(
    'keeps delivering after the LISTEN connection is cut (it reconnects and looks again)',
    async () => {
      const created = await createSession(a, merchant, checkoutRequest());
      const updates = live(a, created.session_id);
      await updates.waitFor((r) => session(r) !== undefined);
      const cut = await a.runtime.db.prisma.$queryRaw<Array<{ cut: boolean }>>`
      SELECT pg_terminate_backend(pid) AS cut FROM pg_stat_activity
       WHERE application_name = 'kassa-changes' AND datname = current_database()`;
      expect(cut.length).toBeGreaterThanOrEqual(1);
      const tx = newHash();
      expect(
        (await postBind(b!, created.session_id, { tx_hash: tx, chain_id: '56', crypto_currency: 'BNB' })).status,
      ).toBe(200);
      expect(
        boundIn(session(await updates.waitFor((r) => boundIn(session(r), tx) !== undefined)), tx)!.cryptoCurrency,
      ).toBe('BNB');
      // And later changes arrive over the new connection.
      timeB.freeze(Date.parse(created.expires_at) + 61 * 60_000);
      await b!.http.get(`/checkout-sessions/${created.session_id}`);
      timeB.release();
      await updates.waitFor((r) => session(r)?.status === 'EXPIRED');
    },
  );

  it('sends EXPIRED when expires_at comes, without waiting for the expiry sweep (none runs here)', async () => {
    const created = await createSession(a, merchant, checkoutRequest({ expires_in_minutes: 5 }));
    // Brought forward in the database, as if created five minutes ago: it expires 1.5 s from now.
    const expiresAt = new Date(Date.now() + 1500);
    await a.runtime.db.prisma.checkoutSession.update({ where: { id: created.session_id }, data: { expiresAt } });
    const updates = live(a, created.session_id);
    expect(session(await updates.waitFor((r) => session(r) !== undefined))!.status).toBe('WAITING_PAYMENT');
    const expired = session(await updates.waitFor((r) => session(r)?.status === 'EXPIRED', 4000))!;
    expect(expired.secondsUntilExpiry).toBe(0);
    expect(Date.now()).toBeGreaterThanOrEqual(expiresAt.getTime());
  });

  it('pushes a bind made over REST to every subscriber of that session, and nothing to others', async () => {
    const created = await createSession(a, merchant, checkoutRequest());
    const other = await createSession(a, merchant, checkoutRequest());
    const [first, second, bystander] = [
      live(a, created.session_id),
      live(a, created.session_id),
      live(a, other.session_id),
    ];
    for (const s of [first, second, bystander]) await s.waitFor((r) => session(r) !== undefined);
    const tx = newHash();
    expect(
      (await postBind(b ?? a, created.session_id, { tx_hash: tx, chain_id: '31337', crypto_currency: 'ETH' })).status,
    ).toBe(200);
    for (const s of [first, second])
      expect(boundIn(session(await s.waitFor((r) => boundIn(session(r), tx) !== undefined)), tx)!.cryptoCurrency).toBe(
        'ETH',
      );
    // The poll interval (embedded) or a notification round trip (PostgreSQL) has long passed.
    await new Promise((resolve) => setTimeout(resolve, 700));
    expect(bystander.results).toHaveLength(1);
    expect(session(bystander.results[0]!)!.sessionId).toBe(other.session_id);
  });

  it('an unknown or malformed id ends the subscription with NOT_FOUND or BAD_USER_INPUT, not a hang', async () => {
    const unknown = live(a, '7d444840-9dc0-11d1-b245-5ffdce74fad2');
    const malformed = live(a, 'nope');
    await Promise.all([unknown.completed, malformed.completed]);
    expect(unknown.results).toEqual([
      expect.objectContaining({
        errors: [
          expect.objectContaining({
            message: 'Checkout session 7d444840-9dc0-11d1-b245-5ffdce74fad2 not found',
            extensions: expect.objectContaining({ code: 'NOT_FOUND' }),
          }),
        ],
      }),
    ]);
    expect(malformed.results).toEqual([
      expect.objectContaining({
        errors: [
          expect.objectContaining({
            message: 'id must be a UUID',
            extensions: expect.objectContaining({ code: 'BAD_USER_INPUT' }),
          }),
        ],
      }),
    ]);
    expect(JSON.stringify([unknown.results, malformed.results])).not.toMatch(/stacktrace|node_modules/);
  });

  it('the same limits apply over WebSocket: a deep operation is refused', async () => {
    let selection = 'name';
    for (let i = 0; i < 12; i++) selection = `ofType { ${selection} }`;
    const deep = subscribe(a, `query { __type(name: "CheckoutSession") { ${selection} } }`, {});
    open.push(deep);
    await deep.completed.catch(() => {});
    await deep.waitFor((r) => Boolean(r.errors));
    expect(deep.results[0]!.errors![0]!.message).toMatch(/depth limit of 10 exceeded/i);
    expect(deep.results[0]!.errors![0]!.extensions).toEqual({ code: 'GRAPHQL_VALIDATION_FAILED' });
  });

  it('a subscribe that does not parse gets an error message (GRAPHQL_PARSE_FAILED, as over HTTP); the socket stays open and serves the next one', async () => {
    const consoleError = vi.spyOn(console, 'error');
    const stderr = vi.spyOn(process.stderr, 'write');
    try {
      const socket = openSocket(a);
      open.push(socket);
      // A subscription already running on the socket (the client would close an idle lazy socket itself).
      const created = await createSession(a, merchant, checkoutRequest());
      const running = socket.subscribe(UPDATES_SUBSCRIPTION, { id: created.session_id });
      await running.waitFor((r) => session(r) !== undefined);
      const cases: Array<[string, string]> = [
        ['{', 'Syntax Error: Expected Name, found <EOF>.'],
        ['subscription { checkoutSessionUpdated(id: "x") { status }', 'Syntax Error: Expected Name, found <EOF>.'],
        ['}', 'Syntax Error: Unexpected "}".'],
        [`{ ${'networks { slug } '.repeat(500)}}`, 'Syntax Error: Token limit of 2000 exceeded.'],
      ];
      for (const [query, message] of cases) {
        const bad = socket.subscribe(query, {});
        await bad.completed.catch(() => {});
        expect(bad.results).toEqual([
          { errors: [expect.objectContaining({ message, extensions: { code: 'GRAPHQL_PARSE_FAILED' } })] },
        ]);
      }
      // The running subscription still gets updates, and the socket takes new ones.
      const tx = newHash();
      expect(
        (await postBind(b ?? a, created.session_id, { tx_hash: tx, chain_id: '31337', crypto_currency: 'ETH' })).status,
      ).toBe(200);
      await running.waitFor((r) => boundIn(session(r), tx) !== undefined);
      const next = socket.subscribe(UPDATES_SUBSCRIPTION, { id: created.session_id });
      expect(boundIn(session(await next.waitFor((r) => session(r) !== undefined)), tx)?.txHash).toBe(tx);
      expect(socket.closeCodes).toEqual([]);
      expect(consoleError).not.toHaveBeenCalled();
      expect(JSON.stringify(stderr.mock.calls)).not.toMatch(/Syntax Error|Internal error|at .*\.js:\d+/);
    } finally {
      consoleError.mockRestore();
      stderr.mockRestore();
    }
  });

  it('a message over 100 KB closes that socket with 1009 (message too big), quietly; other sockets carry on', async () => {
    const consoleError = vi.spyOn(console, 'error');
    try {
      const created = await createSession(a, merchant, checkoutRequest());
      const bystander = live(a, created.session_id);
      await bystander.waitFor((r) => session(r) !== undefined);
      const raw = new WebSocket(`${a.url.replace(/^http/, 'ws')}/graphql`, 'graphql-transport-ws');
      await once(raw, 'open');
      raw.send(JSON.stringify({ type: 'connection_init' }));
      const [ack] = await once(raw, 'message');
      expect(JSON.parse(String(ack))).toEqual({ type: 'connection_ack' });
      const closed = once(raw, 'close');
      raw.send(
        JSON.stringify({
          id: '1',
          type: 'subscribe',
          payload: { query: `{ networks { slug } } # ${'x'.repeat(101 * 1024)}` },
        }),
      );
      const [code] = await closed;
      expect(code).toBe(1009);
      expect(consoleError).not.toHaveBeenCalled();
      // The other socket is untouched and still gets updates.
      const tx = newHash();
      expect(
        (await postBind(b ?? a, created.session_id, { tx_hash: tx, chain_id: '31337', crypto_currency: 'ETH' })).status,
      ).toBe(200);
      await bystander.waitFor((r) => boundIn(session(r), tx) !== undefined);
      expect(bystander.closeCodes).toEqual([]);
    } finally {
      consoleError.mockRestore();
    }
  });

  it('at most 20 subscriptions per socket: the 21st is refused with a clear message, the socket stays open and the 20 still get updates', async () => {
    const created = await createSession(a, merchant, checkoutRequest());
    const socket = openSocket(a);
    open.push(socket);
    const twenty = Array.from({ length: 20 }, () => socket.subscribe(UPDATES_SUBSCRIPTION, { id: created.session_id }));
    for (const s of twenty) await s.waitFor((r) => session(r) !== undefined);

    const extra = socket.subscribe(UPDATES_SUBSCRIPTION, { id: created.session_id });
    await extra.completed.catch(() => {});
    expect(extra.results).toEqual([
      {
        errors: [
          expect.objectContaining({
            message:
              'Too many subscriptions on this connection: at most 20 may run at once; complete one before starting another',
            extensions: { code: 'TOO_MANY_SUBSCRIPTIONS' },
          }),
        ],
      },
    ]);

    const tx = newHash();
    expect(
      (await postBind(b ?? a, created.session_id, { tx_hash: tx, chain_id: '56', crypto_currency: 'BNB' })).status,
    ).toBe(200);
    for (const s of twenty)
      expect(boundIn(session(await s.waitFor((r) => boundIn(session(r), tx) !== undefined)), tx)!.cryptoCurrency).toBe(
        'BNB',
      );
    for (const s of twenty) expect(s.results).toHaveLength(2);
    expect(socket.closeCodes).toEqual([]);

    // Completing one frees a place on that socket.
    twenty[0]!.unsubscribe();
    const again = socket.subscribe(UPDATES_SUBSCRIPTION, { id: created.session_id });
    expect(boundIn(session(await again.waitFor((r) => session(r) !== undefined)), tx)?.txHash).toBe(tx);
    // The limit is per socket: another socket has its own.
    const other = live(a, created.session_id);
    await other.waitFor((r) => session(r) !== undefined);
  });

  // The per-address cap was found by an attacker-minded review: only new connections were limited per address (60 a
  // minute), so one address holding its sockets open filled every slot of the instance and left every payer's page
  // polling.
  it.each([
    [
      'KASSA_GRAPHQL_MAX_CONNECTIONS caps the sockets of one instance: one more is refused with 503',
      { KASSA_GRAPHQL_MAX_CONNECTIONS: '2' },
      503,
      'Too many GraphQL WebSocket connections on this server; try again later',
      'Service Unavailable',
    ],
    [
      'KASSA_GRAPHQL_MAX_CONNECTIONS_PER_ADDRESS caps the sockets one address holds: one more is refused with 429',
      { KASSA_GRAPHQL_MAX_CONNECTIONS: '100', KASSA_GRAPHQL_MAX_CONNECTIONS_PER_ADDRESS: '2' },
      429,
      'Too many GraphQL WebSocket connections from this address; close one first',
      'Too Many Requests',
    ],
  ])('%s, with the error body; a place frees when one closes', async (_what, env, status, message, error) => {
    const c = await startTestKassa({ database: isEmbedded ? undefined : a.database, env });
    try {
      const viewer = await createMerchant(c.ctx);
      const created = await createSession(c, viewer, checkoutRequest());
      const [first, second] = [
        subscribe(c, UPDATES_SUBSCRIPTION, { id: created.session_id }),
        subscribe(c, UPDATES_SUBSCRIPTION, { id: created.session_id }),
      ];
      for (const s of [first, second]) await s.waitFor((r) => session(r) !== undefined);
      /** The HTTP answer refusing a new socket, or null when it opens (it is closed again at once). */
      const refusal = async () => {
        const raw = new WebSocket(`${c.url.replace(/^http/, 'ws')}/graphql`, 'graphql-transport-ws');
        raw.on('error', () => {});
        const [, response] = (await Promise.race([
          once(raw, 'unexpected-response'),
          once(raw, 'open').then(() => [null, null]),
        ])) as [unknown, IncomingMessage | null];
        const body = response ? (await response.toArray()).join('') : '';
        raw.terminate();
        return response && { status: response.statusCode, type: response.headers['content-type'], body };
      };
      // Refused with the REST error body, as the rate limit's 429 is.
      const refused = await refusal();
      expect(refused?.status).toBe(status);
      expect(refused?.type).toMatch(/^application\/json/);
      expect(JSON.parse(refused!.body)).toEqual({ statusCode: status, message, error });
      await first.dispose();
      // The server drops the socket once the close handshake is done.
      const deadline = Date.now() + 3000;
      let again = await refusal();
      while (again?.status === status && Date.now() < deadline) {
        await new Promise((resolve) => setTimeout(resolve, 50));
        again = await refusal();
      }
      expect(again).toBeNull();
      await second.dispose();
    } finally {
      await c.close();
    }
  });

  it('closing Kassa closes its WebSockets (1001) at once instead of waiting for subscribers', async () => {
    const c = await startTestKassa({ database: isEmbedded ? undefined : a.database });
    const viewer = await createMerchant(c.ctx);
    const created = await createSession(c, viewer, checkoutRequest());
    const updates = subscribe(c, UPDATES_SUBSCRIPTION, { id: created.session_id });
    await updates.waitFor((r) => session(r) !== undefined);
    // The subscriber answers pings, so a close that waited for it would never end: the bound only needs to sit
    // well inside the test's timeout, not to time the close (which also closes the database, slow under load).
    const started = Date.now();
    await c.close();
    expect(Date.now() - started).toBeLessThan(15_000);
    await updates.waitFor(() => updates.closeCodes.length > 0, 2000).catch(() => {});
    expect(updates.closeCodes).toEqual([1001]);
    await updates.dispose();
  });
});
