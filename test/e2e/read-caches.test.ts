import { readFileSync } from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { parse, type OperationDefinitionNode } from 'graphql';
import pg from 'pg';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { ChangeChannel, ChangeFeed } from '../../src/db/change-feed/change-feed.js';
import { createPrismaStore } from '../../src/db/prisma-store.js';
import {
  cachedCheckoutSession,
  getCheckoutSession,
  settleExpiry,
} from '../../src/domain/sessions/get-checkout-session.js';
import { CachedQueries } from '../../src/graphql/cached-queries.js';
import { PAGE_DOCUMENT_DATA } from '../../src/graphql/page-documents.js';
import { checkoutRequest } from '../factories/checkout-request.js';
import { createMerchant, type TestMerchant } from '../factories/merchant.js';
import { runKassaInProcess } from '../support/cli-process.js';
import { startTestKassa, TEST_ENV, type TestKassa } from '../support/kassa.js';
import { controllableClock, createSession, expectErrorBody, isEmbedded, postCreate } from '../support/rest-kassa.js';

/**
 * Issue 10: each `kassa serve` caches sessions (for GET and GraphQL), API keys and
 * organisations. A change made anywhere else (another instance, the CLI, plain SQL)
 * is never served stale once this instance has heard of it: NOTIFY on PostgreSQL,
 * the change log on the embedded database. An open session is never served past
 * its expires_at. A lost LISTEN connection stops the caches serving until it is back.
 */

const time = controllableClock();
let a: TestKassa;
let b: TestKassa | null = null;
let merchant: TestMerchant;
let other: pg.Client;

beforeAll(async () => {
  a = await startTestKassa({ clock: time.clock });
  if (!isEmbedded) b = await startTestKassa({ database: a.database });
  merchant = await createMerchant(a.ctx);
  // Another writer: its own connection (on the embedded database, through the server's socket).
  other = new pg.Client({ connectionString: a.database.databaseUrl ?? embeddedSocketUrl(a.database.dataDir) });
  await other.connect();
  await until(() => a.runtime.changes.live);
});
afterAll(async () => {
  await other?.end();
  await b?.close();
  await a?.close();
});
afterEach(() => time.release());

function embeddedSocketUrl(dataDir: string): string {
  const { socket } = JSON.parse(readFileSync(path.join(dataDir, 'embedded.json'), 'utf8')) as { socket: string };
  return `postgresql://postgres@localhost/postgres?host=${encodeURIComponent(socket)}`;
}

async function until(condition: () => boolean, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error('timed out waiting');
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

/**
 * Resolves when `kassa`'s change feed announces `key` on `channel`. Listeners run in the
 * order they subscribed, so by then the caches (subscribed when the store was made) have
 * dropped the entry: the moment "after the NOTIFY arrives".
 */
function heard(kassa: TestKassa, channel: ChangeChannel, key: string): Promise<void> {
  return new Promise((resolve) => {
    const stop = kassa.runtime.changes.subscribe(channel, (announced) => {
      if (announced !== key) return;
      stop();
      resolve();
    });
  });
}

const getSession = (kassa: TestKassa, id: string) => kassa.http.get(`/checkout-sessions/${id}`);

/**
 * Binds `hash` to session `id` through instance B (A itself on the embedded database, where one server runs) and
 * resolves once A has heard of the change.
 */
async function bindThroughB(id: string, hash: string): Promise<void> {
  const announced = heard(a, 'kassa_checkout_session', id);
  const bound = await (b ?? a).http
    .post(`/checkout-sessions/${id}/bind-tx`)
    .send({ tx_hash: hash, chain_id: '31337', crypto_currency: 'ETH' });
  expect(bound.status).toBe(200);
  await announced;
}

describe('the session cache', () => {
  it('serves a change made by another writer as soon as the instance hears of it, never the cached copy', async () => {
    const created = await createSession(a, merchant, checkoutRequest());
    const id = created.session_id as string;
    expect((await getSession(a, id)).body.expires_at).toBe(created.expires_at);
    expect((await getSession(a, id)).body.expires_at).toBe(created.expires_at);

    const later = new Date(Date.parse(created.expires_at) + 3_600_000);
    const announced = heard(a, 'kassa_checkout_session', id);
    await other.query('UPDATE checkout_sessions SET expires_at = $2, updated_at = now() WHERE id = $1', [id, later]);
    await announced;
    expect((await getSession(a, id)).body.expires_at).toBe(later.toISOString());
  });

  it.skipIf(isEmbedded)(
    'a status change made by instance B (it settles the expiry) is served by A at once, though A’s own clock says open',
    async () => {
      const created = await createSession(a, merchant, checkoutRequest({ expires_in_minutes: 5 }));
      const id = created.session_id as string;
      expect((await getSession(a, id)).body.status).toBe('waiting_payment');
      // B reads after expires_at by its clock and settles the expiry; A's clock is still before it.
      await other.query(`UPDATE checkout_sessions SET expires_at = now() - interval '1 second' WHERE id = $1`, [id]);
      time.freeze(Date.parse(created.expires_at) - 60_000);
      const announced = heard(a, 'kassa_checkout_session', id);
      expect((await getSession(b!, id)).body.status).toBe('expired');
      await announced;
      expect((await getSession(a, id)).body.status).toBe('expired');
      const graphql = await a.http.post('/graphql').send({ query: `{ checkoutSession(id: "${id}") { status } }` });
      expect(graphql.body.data.checkoutSession.status).toBe('EXPIRED');
    },
  );

  it('expiry is exact at read time: open until the millisecond before expires_at, expired from it, cached or not', async () => {
    const created = await createSession(a, merchant, checkoutRequest({ expires_in_minutes: 5 }));
    const id = created.session_id as string;
    const expiresAt = Date.parse(created.expires_at);
    time.freeze(expiresAt - 1);
    expect((await getSession(a, id)).body.status).toBe('waiting_payment');
    expect((await getSession(a, id)).body.status).toBe('waiting_payment');
    time.freeze(expiresAt);
    expect((await getSession(a, id)).body.status).toBe('expired');
    const graphql = await a.http.post('/graphql').send({ query: `{ checkoutSession(id: "${id}") { status } }` });
    expect(graphql.body.data.checkoutSession.status).toBe('EXPIRED');
  });

  it('a change this instance makes itself is dropped from its cache when it commits, with no announcement needed', async () => {
    const { store, ctx } = quietStore();
    const created = await createSession(a, merchant, checkoutRequest({ expires_in_minutes: 5 }));
    const id = created.session_id as string;
    expect((await getCheckoutSession(ctx, id)).status).toBe('waiting_payment');
    expect((await store.sessions.findById(id))!.status).toBe('waiting_payment');
    // Settles the expiry in its own transaction: the cached open copy must be gone when it commits.
    expect((await settleExpiry(ctx, id, new Date(Date.parse(created.expires_at) + 1))).status).toBe('expired');
    expect((await store.sessions.findById(id))!.status).toBe('expired');
  });
});

describe('reads answered from the cache before Express (src/rest/cached-session-reads.ts)', () => {
  it("are the route's own answer: same status, body, headers and ETag; a conditional GET still gets its 304; metrics and logs count them", async () => {
    const created = await createSession(a, merchant, checkoutRequest());
    const id = created.session_id as string;
    const viaRoute = await getSession(a, id); // not cached yet: Express's route reads it
    const viaCache = await getSession(a, id);
    expect(a.ctx.store.sessions.peek?.(id)).toBeDefined();
    const comparable = (headers: Record<string, string>) => {
      const { date: _date, 'x-request-id': requestId, ...rest } = headers;
      expect(requestId).toMatch(/^[0-9a-f-]{36}$/);
      return rest;
    };
    expect(viaCache.status).toBe(200);
    expect(viaCache.text).toBe(viaRoute.text);
    expect(comparable(viaCache.headers)).toEqual(comparable(viaRoute.headers));
    expect(viaCache.headers.etag).toMatch(/^W\/"[0-9a-f]+-[A-Za-z0-9+/]{27}"$/);
    const given = await a.http.get(`/checkout-sessions/${id}`).set('X-Request-Id', 'trace-1');
    expect(given.headers['x-request-id']).toBe('trace-1');
    expect((await a.http.get(`/checkout-sessions/${id}`).set('If-None-Match', viaCache.headers.etag!)).status).toBe(
      304,
    );
    // Counted when each response finished: poll, the last one may finish just after the client has it.
    const counted = async () => {
      const text = (await a.http.get('/metrics')).text;
      return Number(
        /kassa_http_request_duration_seconds_count\{method="GET",route="\/checkout-sessions\/:id",status="200"\} (\d+)/.exec(
          text,
        )?.[1] ?? 0,
      );
    };
    await expect.poll(counted).toBeGreaterThanOrEqual(3);
  });
});

const KEPT_QUERY =
  'query Pay($id: ID!) { checkoutSession(id: $id) { sessionId status expiresAt secondsUntilExpiry cryptoOptions { ticker amount } transactions { txHash state } } }';

/** Requests over one keep-alive connection to `kassa` (as a browser polls), and the sockets they went over. */
function oneConnection(kassa: TestKassa) {
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  const sockets = new Set<unknown>();
  const send = (method: string, path: string, headers: Record<string, string>, body?: string) =>
    new Promise<{ status: number; headers: http.IncomingHttpHeaders; text: string }>((resolve, reject) => {
      const request = http.request(`${kassa.url}${path}`, { method, agent, headers }, (response) => {
        sockets.add(response.socket);
        let text = '';
        response.setEncoding('utf8');
        response.on('data', (chunk: string) => (text += chunk));
        response.on('end', () => resolve({ status: response.statusCode!, headers: response.headers, text }));
      });
      request.on('error', reject);
      request.end(body);
    });
  return { send, sockets, close: () => agent.destroy() };
}

/** The query as the hosted page sends it over GET (web/checkout-live.js): in the query string, with Apollo's preflight header. */
const keptQueryUrl = (id: string) =>
  `/graphql?${new URLSearchParams({ query: KEPT_QUERY, variables: JSON.stringify({ id }) })}`;

describe.each(['POST', 'GET'] as const)(
  'GraphQL answers kept and served before Express, over %s (src/graphql/cached-queries.ts, graphql-lane.ts)',
  (method) => {
    const askQuery = (kassa: TestKassa, id: string, query: string, extra: Record<string, string> = {}) =>
      method === 'GET'
        ? kassa.http
            .get(`/graphql?${new URLSearchParams({ query, variables: JSON.stringify({ id }) })}`)
            .set('Apollo-Require-Preflight', 'true')
            .set(extra)
        : kassa.http
            .post('/graphql')
            .set('Content-Type', 'application/json')
            .set(extra)
            .send(JSON.stringify({ query, variables: { id } }));
    const ask = (kassa: TestKassa, id: string, extra: Record<string, string> = {}) =>
      askQuery(kassa, id, KEPT_QUERY, extra);
    /** An answer's headers but those that differ on every request (Date, X-Request-Id). */
    const comparable = (headers: Record<string, string>) => {
      const { date: _date, 'x-request-id': _id, ...rest } = headers;
      return rest;
    };

    it("are Apollo's own answer, byte for byte and header for header, and are served again without Apollo", async () => {
      const created = await createSession(a, merchant, checkoutRequest());
      const id = created.session_id as string;
      time.freeze(Date.now());
      await getSession(a, id); // cached for reads
      const hits = a.cachedQueries.hits;
      const fromApollo = await ask(a, id);
      const kept = await ask(a, id);
      expect(a.cachedQueries.hits).toBe(hits + 1);
      expect(kept.status).toBe(200);
      expect(kept.text).toBe(fromApollo.text);
      expect(comparable(kept.headers)).toEqual(comparable(fromApollo.headers));
      expect(kept.body.data.checkoutSession).toMatchObject({
        sessionId: id,
        status: 'WAITING_PAYMENT',
        transactions: [],
      });
    });

    it('never outlive a change (here a bind, made through instance B), a tick of the time left, or expiry', async () => {
      const created = await createSession(a, merchant, checkoutRequest({ expires_in_minutes: 5 }));
      const id = created.session_id as string;
      const expiresAt = Date.parse(created.expires_at);
      time.freeze(expiresAt - 90_500);
      await getSession(a, id);
      await ask(a, id);
      expect((await ask(a, id)).body.data.checkoutSession.secondsUntilExpiry).toBe(90);
      time.freeze(expiresAt - 90_000); // still 90 s left: kept
      const hits = a.cachedQueries.hits;
      expect((await ask(a, id)).body.data.checkoutSession.secondsUntilExpiry).toBe(90);
      expect(a.cachedQueries.hits).toBe(hits + 1);
      time.freeze(expiresAt - 89_999); // 89 s left: written again (see the next test)
      expect((await ask(a, id)).body.data.checkoutSession.secondsUntilExpiry).toBe(89);

      const hash = `0x${'ab'.repeat(32)}`;
      await bindThroughB(id, hash);
      expect((await ask(a, id)).body.data.checkoutSession.transactions).toEqual([
        { txHash: hash, state: 'UNVERIFIED' },
      ]);

      time.freeze(expiresAt);
      expect((await ask(a, id)).body.data.checkoutSession).toMatchObject({ status: 'EXPIRED', secondsUntilExpiry: 0 });
    });

    it('write the time left in again as Apollo would, without Apollo, when it changes (a page polls every 5 s)', async () => {
      const created = await createSession(a, merchant, checkoutRequest({ expires_in_minutes: 5 }));
      const id = created.session_id as string;
      const expiresAt = Date.parse(created.expires_at);
      time.freeze(expiresAt - 90_500);
      await getSession(a, id);
      await ask(a, id);
      for (const [at, left] of [
        [expiresAt - 85_000, 85],
        [expiresAt - 9_999, 9],
        [expiresAt - 1, 0],
      ] as const) {
        time.freeze(at);
        const hits = a.cachedQueries.hits;
        const kept = await ask(a, id);
        expect(a.cachedQueries.hits).toBe(hits + (left > 0 ? 1 : 0));
        // The same query written otherwise: Apollo answers it.
        const fromApollo = await askQuery(a, id, `${KEPT_QUERY} `);
        expect(kept.body.data.checkoutSession.secondsUntilExpiry).toBe(left);
        expect(kept.text).toBe(fromApollo.text);
        expect(comparable(kept.headers)).toEqual(comparable(fromApollo.headers));
      }
    });

    it('an answer without the time left is kept until the session changes; one that may hide it, for a second; aliases are written in', async () => {
      const created = await createSession(a, merchant, checkoutRequest({ expires_in_minutes: 5 }));
      const id = created.session_id as string;
      const expiresAt = Date.parse(created.expires_at);
      const timeless = 'query($id: ID!) { checkoutSession(id: $id) { sessionId status cryptoOptions { ticker } } }';
      const hidden =
        'query($id: ID!) { checkoutSession(id: $id) { sessionId ...Left } } ' +
        'fragment Left on CheckoutSession { secondsUntilExpiry }';
      const twice =
        'query($id: ID!) { s: checkoutSession(id: $id) { left: secondsUntilExpiry status secondsUntilExpiry } }';
      time.freeze(expiresAt - 200_000);
      await getSession(a, id);
      await askQuery(a, id, timeless);
      await askQuery(a, id, hidden);
      await askQuery(a, id, twice);
      time.freeze(expiresAt - 100_000);
      let hits = a.cachedQueries.hits;
      expect((await askQuery(a, id, timeless)).body.data.checkoutSession.sessionId).toBe(id);
      expect(a.cachedQueries.hits).toBe(hits + 1);
      hits = a.cachedQueries.hits;
      expect((await askQuery(a, id, hidden)).body.data.checkoutSession.secondsUntilExpiry).toBe(100);
      expect(a.cachedQueries.hits).toBe(hits);
      // Aliased, and asked twice: both counts written in.
      const kept = await askQuery(a, id, twice);
      expect(a.cachedQueries.hits).toBe(hits + 1);
      expect(kept.text).toBe((await askQuery(a, id, `${twice} `)).text);
      expect(kept.body.data.s).toEqual({ left: 100, status: 'WAITING_PAYMENT', secondsUntilExpiry: 100 });
    });

    it('on one keep-alive connection, as a page polls, are still never served past a change, another query or Accept asked in between, a second of the time left, or expiry', async () => {
      const created = await createSession(a, merchant, checkoutRequest({ expires_in_minutes: 5 }));
      const id = created.session_id as string;
      const expiresAt = Date.parse(created.expires_at);
      time.freeze(expiresAt - 90_500);
      await getSession(a, id);
      const connection = oneConnection(a);
      try {
        const poll = (query = KEPT_QUERY, accept = 'application/json') =>
          method === 'GET'
            ? connection.send('GET', `/graphql?${new URLSearchParams({ query, variables: JSON.stringify({ id }) })}`, {
                accept,
                'apollo-require-preflight': 'true',
              })
            : connection.send(
                'POST',
                '/graphql',
                { accept, 'content-type': 'application/json' },
                JSON.stringify({ query, variables: { id } }),
              );
        const session = async (query?: string, accept?: string) => {
          const answer = await poll(query, accept);
          expect(answer.status).toBe(200);
          return JSON.parse(answer.text).data.checkoutSession;
        };
        let hits = a.cachedQueries.hits;
        const servedAgain = () => {
          const served = a.cachedQueries.hits > hits;
          hits = a.cachedQueries.hits;
          return served;
        };
        expect(await session()).toMatchObject({ sessionId: id, secondsUntilExpiry: 90, transactions: [] });
        expect(servedAgain()).toBe(false);
        expect(await session()).toMatchObject({ secondsUntilExpiry: 90, transactions: [] });
        expect(servedAgain()).toBe(true);

        // Another query on the same connection is its own question, then the first is served again.
        const other = 'query Pay($id: ID!) { checkoutSession(id: $id) { status } }';
        expect(await session(other)).toEqual({ status: 'WAITING_PAYMENT' });
        expect(servedAgain()).toBe(false);
        expect(await session(other)).toEqual({ status: 'WAITING_PAYMENT' });
        expect(servedAgain()).toBe(true);
        expect(await session()).toMatchObject({ sessionId: id, secondsUntilExpiry: 90 });
        expect(servedAgain()).toBe(true);

        // Another Accept: Apollo answers in its own type, and the first Accept is still answered in its own.
        const graphqlResponse = await poll(KEPT_QUERY, 'application/graphql-response+json');
        expect(graphqlResponse.headers['content-type']).toMatch(/^application\/graphql-response\+json/);
        expect(servedAgain()).toBe(false);
        expect((await poll()).headers['content-type']).toMatch(/^application\/json/);

        // A bind through instance B: the next poll shows it.
        const hash = `0x${'ef'.repeat(32)}`;
        await bindThroughB(id, hash);
        hits = a.cachedQueries.hits;
        expect((await session()).transactions).toEqual([{ txHash: hash, state: 'UNVERIFIED' }]);
        expect(servedAgain()).toBe(false);
        expect((await session()).transactions).toEqual([{ txHash: hash, state: 'UNVERIFIED' }]);
        expect(servedAgain()).toBe(true);

        time.freeze(expiresAt - 89_999);
        expect((await session()).secondsUntilExpiry).toBe(89);
        time.freeze(expiresAt);
        expect(await session()).toMatchObject({ status: 'EXPIRED', secondsUntilExpiry: 0 });
        // Every poll went over the one connection.
        expect(connection.sockets.size).toBe(1);
      } finally {
        connection.close();
      }
    });

    // Found by an attacker-minded review: every distinct request was kept (10,000 of them, whatever their size), and a
    // query padded with an unused variable of 100 KB filled the 256 MB heap of `npm start` in 1,557 requests.
    it('are never kept for a request padded past 4 KB (an unused variable), however many come', async () => {
      const created = await createSession(a, merchant, checkoutRequest());
      const id = created.session_id as string;
      await getSession(a, id);
      const size = a.cachedQueries.size;
      const held = a.cachedQueries.heldBytes;
      // Within a URL's limit for GET (16 KB of headers); 100 KB for POST.
      const pad = 'A'.repeat(method === 'GET' ? 5_000 : 100_000);
      for (let i = 0; i < 20; i++) {
        const variables = JSON.stringify({ id, pad: `${i}${pad}` });
        const answer =
          method === 'GET'
            ? await a.http
                .get(`/graphql?${new URLSearchParams({ query: KEPT_QUERY, variables })}`)
                .set('Apollo-Require-Preflight', 'true')
            : await a.http
                .post('/graphql')
                .set('Content-Type', 'application/json')
                .send(`{"query":${JSON.stringify(KEPT_QUERY)},"variables":${variables}}`);
        expect(answer.status).toBe(200);
        expect(answer.body.data.checkoutSession.sessionId).toBe(id);
      }
      expect(a.cachedQueries.size).toBe(size);
      expect(a.cachedQueries.heldBytes).toBe(held);
      // The page's own request still is.
      await ask(a, id);
      expect(a.cachedQueries.size).toBe(size + 1);
    });

    /** Runs `check` on a Kassa whose GraphQL limit is 4 a minute, with a session read once (cached for reads). */
    async function withLimitedSession(check: (limited: TestKassa, id: string) => Promise<void>): Promise<void> {
      const limited = await startTestKassa({ env: { KASSA_RATE_LIMIT_GRAPHQL: '4/1m' } });
      try {
        // The change feed's first read drops what the caches learnt before it (on the embedded database a poll a few
        // ms after start): a session cached earlier would be dropped mid-test, and its next read counted.
        await until(() => limited.runtime.changes.live);
        // The session is cached only once the new organisation's announcement is heard (polled every 100 ms on the
        // embedded database): heard after, it drops the organisation's cached sessions and their kept answers.
        const announced = new Set<string>();
        const stop = limited.runtime.changes.subscribe('kassa_organisation', (key) => announced.add(key));
        const owner = await createMerchant(limited.ctx);
        await until(() => announced.has(owner.organisationId));
        stop();
        const id = (await createSession(limited, owner, checkoutRequest())).session_id as string;
        await getSession(limited, id);
        await check(limited, id);
      } finally {
        await limited.close();
      }
    }

    if (method === 'POST')
      it('count against the GraphQL limit like any other request, and never twice', () =>
        withLimitedSession(async (limited, id) => {
          const statuses = [];
          for (let i = 0; i < 6; i++) statuses.push((await ask(limited, id)).status);
          expect(statuses).toEqual([200, 200, 200, 200, 429, 429]);
          expect(limited.cachedQueries.hits).toBeGreaterThanOrEqual(2);
        }));
    else
      it('are not counted against the GraphQL limit, as REST GET is not; what goes on to Apollo is, once', () =>
        withLimitedSession(async (limited, id) => {
          const networks = () =>
            limited.http
              .get(`/graphql?${new URLSearchParams({ query: '{ networks { slug } }' })}`)
              .set('Apollo-Require-Preflight', 'true');
          // Each request, and whether a kept answer served it: what the limit (4) must have made of them is then
          // known exactly, whichever asks Apollo answered (the first, and on the embedded database now and then
          // another, when its polled change feed replaces the cached session).
          const seen: Array<{ status: number; kept: boolean }> = [];
          const send = async (request: () => ReturnType<typeof networks>) => {
            const hits = limited.cachedQueries.hits;
            const status = (await request()).status;
            seen.push({ status, kept: limited.cachedQueries.hits > hits });
          };
          for (let i = 0; i < 6; i++) await send(() => ask(limited, id));
          // A query whose answer is never kept goes on to Apollo each time, counted once each, until over the limit.
          for (let i = 0; i < 4; i++) await send(networks);
          // Over the limit, a kept answer is still served (as a REST GET of the session would be); Apollo's are not.
          await send(() => ask(limited, id));
          await send(networks);
          let counted = 0;
          const expected = seen.map(({ kept }) => (kept || ++counted <= 4 ? 200 : 429));
          expect(seen.map(({ status }) => status)).toEqual(expected);
          // Most asks were served kept, the one after the limit included; the limit was reached.
          expect(seen.filter(({ kept }) => kept).length).toBeGreaterThanOrEqual(5);
          expect(seen[10]).toEqual({ status: 200, kept: true });
          expect(seen.at(-1)).toEqual({ status: 429, kept: false });
        }));
  },
);

describe('kept GraphQL answers, in all (src/graphql/cached-queries.ts)', () => {
  it('hold at most their byte budget: the oldest go first', async () => {
    const created = await createSession(a, merchant, checkoutRequest());
    const id = created.session_id as string;
    await getSession(a, id);
    const session = cachedCheckoutSession(a.ctx, id)!;
    expect(session).toBeDefined();
    const operation = parse('query($id: ID!) { checkoutSession(id: $id) { sessionId status } }')
      .definitions[0] as OperationDefinitionNode;
    // 1,000 bytes asked and 2,000 answered: 3,000 each, six of them within 20,000.
    const queries = new CachedQueries(10_000, 20_000);
    const asked = (i: number) => `${String(i).padStart(4, '0')}${'q'.repeat(996)}`;
    const now = a.ctx.clock();
    for (let i = 0; i < 20; i++)
      queries.keep(
        { method: 'POST', asked: asked(i), accept: undefined },
        a.ctx,
        { operation, errors: false, status: 200, headers: [], body: 'a'.repeat(2_000) },
        [session],
        now,
      );
    expect(queries.size).toBe(6);
    expect(queries.heldBytes).toBe(18_000);
    expect(queries.find('POST', asked(13), undefined, a.ctx)).toBeUndefined();
    expect(queries.find('POST', asked(14), undefined, a.ctx)?.body.length).toBe(2_000);
    expect(queries.find('POST', asked(19), undefined, a.ctx)).toBeDefined();
    // An answer larger than 64 KB is never kept.
    queries.keep(
      { method: 'POST', asked: 'large', accept: undefined },
      a.ctx,
      { operation, errors: false, status: 200, headers: [], body: 'a'.repeat(65 * 1024) },
      [session],
      now,
    );
    expect(queries.find('POST', 'large', undefined, a.ctx)).toBeUndefined();
    expect(queries.heldBytes).toBe(18_000);
  });
});

describe('GraphQL GETs the lane leaves to Express (src/graphql/graphql-lane.ts: takesGet)', () => {
  async function kept(): Promise<{ id: string; etag: string }> {
    const id = (await createSession(a, merchant, checkoutRequest())).session_id as string;
    await getSession(a, id);
    const first = await a.http.get(keptQueryUrl(id)).set('Apollo-Require-Preflight', 'true');
    expect(first.status).toBe(200);
    const hits = a.cachedQueries.hits;
    const again = await a.http.get(keptQueryUrl(id)).set('X-Apollo-Operation-Name', 'Pay');
    expect(again.text).toBe(first.text);
    expect(a.cachedQueries.hits).toBe(hits + 1);
    return { id, etag: again.headers.etag! };
  }

  it("a GET without Apollo's preflight header is refused as a possible CSRF, though its answer is kept", async () => {
    const { id } = await kept();
    const hits = a.cachedQueries.hits;
    for (const extra of [{}, { 'Apollo-Require-Preflight': '' }, { 'Content-Type': 'text/plain' }]) {
      const refused = await a.http.get(keptQueryUrl(id)).set(extra);
      expect(refused.status).toBe(400);
      expect(refused.text).toContain('Cross-Site Request Forgery');
    }
    expect(a.cachedQueries.hits).toBe(hits);
  });

  it.each(['CheckoutSession', 'CheckoutPoll'] as const)(
    "the page's %s by documentId is served from its kept answer with no preflight header; named second, by Express",
    async (name) => {
      const id = (await createSession(a, merchant, checkoutRequest())).session_id as string;
      await getSession(a, id);
      const variables = JSON.stringify({ id });
      const documentId = PAGE_DOCUMENT_DATA[name].id;
      const url = `/graphql?${new URLSearchParams({ documentId, variables })}`;
      time.freeze(Date.now());
      const first = await a.http.get(url);
      expect(first.status, first.text).toBe(200);
      const hits = a.cachedQueries.hits;
      const again = await a.http.get(url);
      expect(a.cachedQueries.hits).toBe(hits + 1);
      expect(again.text).toBe(first.text);
      // The same question with the id second: not what the lane takes without a header, so Express answers it (kept
      // under its own URL, and then served from there only with a preflight header).
      const second = await a.http.get(`/graphql?${new URLSearchParams({ variables, documentId })}`);
      expect(second.status).toBe(200);
      expect(second.text).toBe(first.text);
      expect(a.cachedQueries.hits).toBe(hits + 1);
    },
  );

  it('a conditional GET is answered by Express: 304 when the ETag still matches, the whole answer when not', async () => {
    const { id, etag } = await kept();
    const hits = a.cachedQueries.hits;
    const notModified = await a.http
      .get(keptQueryUrl(id))
      .set('Apollo-Require-Preflight', 'true')
      .set('If-None-Match', etag);
    expect(notModified.status).toBe(304);
    const changed = await a.http
      .get(keptQueryUrl(id))
      .set('Apollo-Require-Preflight', 'true')
      .set('If-None-Match', 'W/"other"');
    expect(changed.status).toBe(200);
    expect(changed.body.data.checkoutSession.sessionId).toBe(id);
    expect(a.cachedQueries.hits).toBe(hits);
  });

  it('an answer kept for one Accept header is not served for another', async () => {
    const { id } = await kept();
    const hits = a.cachedQueries.hits;
    const other = await a.http
      .get(keptQueryUrl(id))
      .set('Apollo-Require-Preflight', 'true')
      .set('Accept', 'application/graphql-response+json');
    expect(other.status).toBe(200);
    expect(other.headers['content-type']).toMatch(/^application\/graphql-response\+json/);
    expect(a.cachedQueries.hits).toBe(hits);
  });

  it('a mutation over GET is refused (405), never run', async () => {
    const id = (await createSession(a, merchant, checkoutRequest())).session_id as string;
    const mutation = `mutation { bindTransaction(sessionId: "${id}", input: { txHash: "0x${'cd'.repeat(32)}", chainId: "31337", cryptoCurrency: ETH }) { sessionId } }`;
    const refused = await a.http
      .get(`/graphql?${new URLSearchParams({ query: mutation })}`)
      .set('Apollo-Require-Preflight', 'true');
    expect(refused.status).toBe(405);
    const after = await a.http
      .post('/graphql')
      .send({ query: 'query($id: ID!) { checkoutSession(id: $id) { transactions { txHash } } }', variables: { id } });
    expect(after.body.data.checkoutSession.transactions).toEqual([]);
  });
});

/** A store over A's database whose feed is live but announces nothing: what it serves fresh, it owes to its own bookkeeping. */
function quietStore() {
  const feed: ChangeFeed = {
    live: true,
    subscribe: () => () => {},
    onReset: () => () => {},
    watch: () => () => {},
    close: async () => {},
  };
  const store = createPrismaStore(a.runtime.db, { feed, sessionCacheSize: 100 });
  return { store, ctx: { ...a.ctx, store } };
}

describe('the API key cache', () => {
  it('a key revoked elsewhere (another instance or the CLI) is refused as soon as the instance hears of it', async () => {
    const key = await createMerchant(a.ctx);
    expect((await postCreate(a, key, checkoutRequest())).status).toBe(201);
    const announced = heard(a, 'kassa_api_key', key.apiKey);
    if (b) {
      expect(await b.ctx.store.apiKeys.revoke(key.apiKey, new Date())).toBe(true);
    } else {
      const run = await runKassaInProcess(['keys', 'revoke', key.apiKey], {
        ...TEST_ENV,
        KASSA_DATA_DIR: a.database.dataDir,
      });
      expect(run.code, run.stderr).toBe(0);
    }
    await announced;
    expectErrorBody(await postCreate(a, key, checkoutRequest()), 401, 'API key has been revoked');
  });

  it('a key this instance revokes is dropped from its cache at once, with no announcement needed', async () => {
    const { store } = quietStore();
    const key = await createMerchant(a.ctx);
    expect((await store.apiKeys.findByPublicKey(key.apiKey))!.revokedAt).toBeNull();
    expect(await store.apiKeys.revoke(key.apiKey, new Date())).toBe(true);
    expect((await store.apiKeys.findByPublicKey(key.apiKey))!.revokedAt).not.toBeNull();
  });
});

describe('the organisation cache', () => {
  it('a wallet changed elsewhere is what the next session is paid to, as soon as the instance hears of it', async () => {
    const shop = await createMerchant(a.ctx, { network: 'local' });
    expect((await createSession(a, shop, checkoutRequest())).wallet_address).toBe(shop.wallet);
    const moved = `0x${'5'.repeat(39)}${Math.floor(Math.random() * 10)}`;
    const announced = heard(a, 'kassa_organisation', shop.organisationId);
    await other.query(`UPDATE organisation_wallets SET address = $2 WHERE organisation_id = $1 AND network = 'local'`, [
      shop.organisationId,
      moved,
    ]);
    await announced;
    expect((await createSession(a, shop, checkoutRequest())).wallet_address).toBe(moved);
  });
});

describe.skipIf(isEmbedded)('a lost LISTEN connection', () => {
  it('stops the caches serving until it is back, so nothing changed meanwhile is served stale', async () => {
    const created = await createSession(a, merchant, checkoutRequest());
    const id = created.session_id as string;
    await getSession(a, id);
    const { rows } = await other.query(`
      SELECT pg_terminate_backend(pid) AS cut FROM pg_stat_activity
       WHERE application_name = 'kassa-changes' AND datname = current_database() AND pid <> pg_backend_pid()`);
    expect(rows.length).toBeGreaterThanOrEqual(1);
    await until(() => !a.runtime.changes.live);

    const later = new Date(Date.parse(created.expires_at) + 7_200_000);
    await other.query('UPDATE checkout_sessions SET expires_at = $2, updated_at = now() WHERE id = $1', [id, later]);
    expect((await getSession(a, id)).body.expires_at).toBe(later.toISOString());
    await until(() => a.runtime.changes.live);
    expect((await getSession(a, id)).body.expires_at).toBe(later.toISOString());
  });
});
