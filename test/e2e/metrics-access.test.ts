import { randomBytes } from 'node:crypto';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { createLogger } from '../../src/logging.js';
import { startServer, type RunningServer } from '../../src/server.js';
import { createTestDatabase, type TestDatabase } from '../support/databases.js';

/**
 * Who may read GET /metrics (docs/operations.md#running-in-production): `kassa serve`'s own wiring
 * (src/server.ts), in this process, over real HTTP on a database of this file's own.
 */

const TOKEN = randomBytes(24).toString('hex');
let database: TestDatabase;
const running: RunningServer[] = [];

afterEach(async () => {
  await Promise.all(running.splice(0).map((server) => server.stop()));
});
afterAll(() => database?.drop());

async function serve(extra: Record<string, string>): Promise<RunningServer> {
  database ??= await createTestDatabase('postgres');
  const config = loadConfig({
    KASSA_ENV: 'test',
    LOG_LEVEL: 'silent',
    PORT: '0',
    KASSA_WATCHER: 'false',
    DATABASE_URL: database.databaseUrl!,
    KASSA_DATA_DIR: database.dataDir,
    ...extra,
  });
  const server = await startServer(config, createLogger('silent'));
  running.push(server);
  return server;
}

const PRODUCTION = {
  KASSA_ENV: 'production',
  KASSA_MASTER_KEY: randomBytes(32).toString('hex'),
  CHECKOUT_BASE_URL: 'https://pay.example.com',
  HOST: '127.0.0.1',
  // Never asked here: production asks for a node per network.
  KASSA_RPC_URLS_ETHEREUM: 'http://127.0.0.1:9',
  KASSA_RPC_URLS_BSC: 'http://127.0.0.1:9',
  // Never reached here: the rates source is only asked when a session is created.
  KASSA_COINGECKO_URL: 'http://127.0.0.1:9/api/v3',
};

const metrics = (base: string, headers: Record<string, string> = {}) => fetch(`${base}/metrics`, { headers });
const local = (server: RunningServer) => server.url.replace('localhost', '127.0.0.1');

describe('GET /metrics', () => {
  it('in production, without a token or a port of its own, is not served: 404 (the rest of the API is)', async () => {
    const server = await serve(PRODUCTION);
    const response = await metrics(local(server));
    expect(response.status).toBe(404);
    expect(await response.json()).toEqual({ statusCode: 404, message: 'Cannot GET /metrics', error: 'Not Found' });
    expect((await fetch(`${local(server)}/health`)).status).toBe(200);
    expect(server.metricsUrl).toBeNull();
  });

  it('with KASSA_METRICS_TOKEN answers only `Authorization: Bearer <token>`; anything else is 401', async () => {
    const server = await serve({ ...PRODUCTION, KASSA_METRICS_TOKEN: TOKEN });
    const base = local(server);
    for (const headers of [
      {} as Record<string, string>,
      { Authorization: `Bearer ${TOKEN.slice(1)}` },
      { Authorization: `Bearer ${TOKEN}x` },
      { Authorization: TOKEN },
      { Authorization: `Basic ${TOKEN}` },
    ]) {
      const refused = await metrics(base, headers);
      expect(refused.status, JSON.stringify(headers)).toBe(401);
      expect(refused.headers.get('www-authenticate')).toBe('Bearer realm="kassa-metrics"');
      expect(await refused.json()).toEqual({
        statusCode: 401,
        message: 'GET /metrics needs Authorization: Bearer <KASSA_METRICS_TOKEN>',
        error: 'Unauthorized',
        code: 'unauthenticated',
      });
    }
    const allowed = await metrics(base, { Authorization: `Bearer ${TOKEN}` });
    expect(allowed.status).toBe(200);
    expect(await allowed.text()).toContain('kassa_http_request_duration_seconds');
  });

  it('with KASSA_METRICS_PORT is served on a listener of its own on 127.0.0.1, and not on the main port', async () => {
    const server = await serve({ ...PRODUCTION, KASSA_METRICS_PORT: '0' });
    expect((await metrics(local(server))).status).toBe(404);
    expect(server.metricsUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/metrics$/);
    const separate = await fetch(server.metricsUrl!);
    expect(separate.status).toBe(200);
    expect(await separate.text()).toContain('kassa_process_cpu_user_seconds_total');
    // That listener serves nothing else.
    expect((await fetch(server.metricsUrl!.replace('/metrics', '/health'))).status).toBe(404);
    expect(
      (await fetch(server.metricsUrl!.replace('/metrics', '/checkout-sessions/00000000-0000-4000-8000-000000000000')))
        .status,
    ).toBe(404);
  });

  it('outside production, with neither, stays open on the main port (which listens on 127.0.0.1 by default)', async () => {
    const server = await serve({});
    expect(server.server.address()).toMatchObject({ address: '127.0.0.1' });
    expect((await metrics(local(server))).status).toBe(200);
  });

  it.each(['development', 'test'])(
    'in %s, on a main port that is not loopback-only (HOST=0.0.0.0), needs the token: without one it is not served (404)',
    async (env) => {
      const development: Record<string, string> =
        env === 'development' ? { KASSA_DEMO: 'false', KASSA_SANDBOX: 'false' } : {};
      const open = await serve({ KASSA_ENV: env, HOST: '0.0.0.0', ...development });
      expect(open.server.address()).toMatchObject({ address: '0.0.0.0' });
      const refused = await metrics(local(open));
      expect(refused.status).toBe(404);
      expect(await refused.json()).toEqual({ statusCode: 404, message: 'Cannot GET /metrics', error: 'Not Found' });
      expect((await fetch(`${local(open)}/health`)).status).toBe(200);

      const guarded = await serve({ KASSA_ENV: env, HOST: '0.0.0.0', KASSA_METRICS_TOKEN: TOKEN, ...development });
      expect((await metrics(local(guarded))).status).toBe(401);
      expect((await metrics(local(guarded), { Authorization: `Bearer ${TOKEN}` })).status).toBe(200);
    },
  );

  it('is open without a token only while the main port listens on loopback alone', () => {
    const onMainPort = (extra: Record<string, string>) =>
      loadConfig({ KASSA_ENV: 'test', KASSA_DATA_DIR: database?.dataDir ?? '.kassa-test', ...extra }).metrics
        .onMainPort;
    for (const host of ['127.0.0.1', '127.0.0.2', 'localhost', '::1'])
      expect(onMainPort({ HOST: host }), host).toBe(true);
    for (const host of ['0.0.0.0', '::', '192.168.1.10', '10.0.0.1', 'kassa.internal', '::ffff:10.0.0.1'])
      expect(onMainPort({ HOST: host }), host).toBe(false);
    expect(onMainPort({ HOST: '0.0.0.0', KASSA_METRICS_TOKEN: TOKEN })).toBe(true);
    expect(onMainPort({ HOST: '127.0.0.1', KASSA_METRICS_PORT: '0' })).toBe(false);
  });
});
