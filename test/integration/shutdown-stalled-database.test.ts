import { afterAll, describe, expect, it } from 'vitest';
import { killAllKassaProcesses, startKassaServer } from '../support/cli-process.js';
import { startDatabaseProxy } from '../support/database-proxy.js';
import { createTestDatabase } from '../support/databases.js';
import { isEmbedded } from '../support/rest-kassa.js';

afterAll(async () => {
  await killAllKassaProcesses();
});

// Found by a review of production defaults: with the database stalled, SIGTERM waited on the background jobs (and
// so on the database) before closing the listener: the process was alive 126 s later and still took requests.
describe.skipIf(isEmbedded)('kassa serve stopping while its database is stalled', () => {
  it('stops taking connections at once and exits within its bounded steps', async () => {
    const database = await createTestDatabase();
    const direct = new URL(database.databaseUrl!);
    const proxy = await startDatabaseProxy(direct);
    const proxied = new URL(direct);
    proxied.hostname = '127.0.0.1';
    proxied.port = String(proxy.port);
    try {
      const server = await startKassaServer({
        KASSA_ENV: 'test',
        LOG_LEVEL: 'silent',
        KASSA_NETWORKS: 'local',
        KASSA_SANDBOX: 'false',
        KASSA_DATA_DIR: database.dataDir,
        DATABASE_URL: proxied.toString(),
        KASSA_EXPIRY_SWEEP_SECONDS: '1',
        KASSA_WEBHOOK_POLL_MS: '200',
      });
      await server.ready();
      proxy.mode = 'stall';
      proxy.cutAll();
      // Let the background jobs run into the stalled database.
      await new Promise((resolve) => setTimeout(resolve, 1_500));
      const started = Date.now();
      server.child.kill('SIGTERM');
      // The listener is closed first: a new connection is refused within moments.
      await expect
        .poll(
          () =>
            fetch(`${server.url}/health`, { signal: AbortSignal.timeout(500) }).then(
              () => 'served',
              () => 'refused',
            ),
          { timeout: 3_000, interval: 100 },
        )
        .toBe('refused');
      const exit = await server.exited;
      expect(exit.code).toBe(0);
      // Each step has at most 10 s; the database's work ends by its own timeouts (a connection within 5 s).
      expect(Date.now() - started).toBeLessThan(45_000);
    } finally {
      proxy.mode = 'forward';
      await proxy.close();
      await database.drop();
    }
  }, 90_000);
});
