import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkoutRequest } from '../factories/checkout-request.js';
import { createMerchant, type TestMerchant } from '../factories/merchant.js';
import { createTestDatabase, type TestDatabase } from '../support/databases.js';
import { startDatabaseProxy, type DatabaseProxy } from '../support/database-proxy.js';
import { startTestKassa, type TestKassa } from '../support/kassa.js';
import { createSession, expectErrorBody, isEmbedded, postCreate } from '../support/rest-kassa.js';

/**
 * Found by a review of production defaults: with the database refusing connections every request answered 500, and
 * with the database stalled every request (and /ready) waited as long as it did. Kassa now answers 503 with
 * Retry-After when the database is away, within its connection timeout (5 s), and /ready says 503 within 2 s.
 * PostgreSQL only: a TCP proxy in front of it plays the outage (the embedded database is in the process).
 */

describe.skipIf(isEmbedded)('a database that is away', () => {
  let database: TestDatabase;
  let proxy: DatabaseProxy;
  let kassa: TestKassa;
  let merchant: TestMerchant;

  beforeAll(async () => {
    database = await createTestDatabase();
    const direct = new URL(database.databaseUrl!);
    proxy = await startDatabaseProxy(direct);
    const proxied = new URL(direct);
    proxied.hostname = '127.0.0.1';
    proxied.port = String(proxy.port);
    kassa = await startTestKassa({ database: { ...database, databaseUrl: proxied.toString() } });
    merchant = await createMerchant(kassa.ctx);
  }, 30_000);

  afterAll(async () => {
    if (proxy) proxy.mode = 'forward';
    await kassa?.close();
    await proxy?.close();
    await database?.drop();
  });

  const unknownSession = () => kassa.http.get(`/checkout-sessions/${crypto.randomUUID()}`);

  it('refusing connections: reads and creates answer 503 with Retry-After, GraphQL SERVICE_UNAVAILABLE, /ready 503', async () => {
    expect((await createSession(kassa, merchant, checkoutRequest())).status).toBe('waiting_payment');
    proxy.mode = 'refuse';
    proxy.cutAll();
    const read = await unknownSession();
    expectErrorBody(read, 503, 'The database is not reachable right now; try again shortly');
    expect(read.headers['retry-after']).toBe('5');
    expectErrorBody(await postCreate(kassa, merchant, checkoutRequest()), 503);
    const graphql = await kassa.http
      .post('/graphql')
      .set('Content-Type', 'application/json')
      .send({ query: `{ checkoutSession(id: "${crypto.randomUUID()}") { status } }` });
    expect(graphql.body.errors?.[0]).toMatchObject({
      message: 'The database is not reachable right now; try again shortly',
      extensions: { code: 'SERVICE_UNAVAILABLE' },
    });
    expect((await kassa.http.get('/ready')).status).toBe(503);
    proxy.mode = 'forward';
    expect((await unknownSession()).status).toBe(404);
  });

  it('stalled: a read answers 503 within the connection timeout, /ready within 2 s', async () => {
    proxy.mode = 'stall';
    proxy.cutAll();
    let started = Date.now();
    expect((await kassa.http.get('/ready')).status).toBe(503);
    expect(Date.now() - started).toBeLessThan(4_000);
    started = Date.now();
    expectErrorBody(await unknownSession(), 503);
    expect(Date.now() - started).toBeLessThan(9_000);
    proxy.mode = 'forward';
    proxy.cutAll();
    expect((await unknownSession()).status).toBe(404);
    expect((await kassa.http.get('/ready')).status).toBe(200);
  }, 30_000);
});
