import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import {
  killAllKassaProcesses,
  parseJsonOutput,
  runKassa,
  signedCreate,
  startKassaServer,
} from '../support/cli-process.js';
import { signatureValid, startWebhookReceiver } from '../support/webhook-receiver.js';

/**
 * `npm start` mode: the embedded database with its one pooled connection. The
 * server delivers while the CLI works through its socket, and the HTTP call of
 * an attempt never holds that connection.
 */

const dataDir = mkdtempSync(path.join(tmpdir(), 'kassa-webhooks-embedded-'));

afterAll(async () => {
  await killAllKassaProcesses();
  rmSync(dataDir, { recursive: true, force: true });
});

describe('webhooks on the embedded database', () => {
  it('a slow receiver does not stall the server; the event arrives signed', async () => {
    const env = {
      KASSA_ENV: 'test',
      LOG_LEVEL: 'silent',
      KASSA_NETWORKS: 'local',
      KASSA_DATA_DIR: dataDir,
      KASSA_WEBHOOK_POLL_MS: '50',
      KASSA_WEBHOOK_TIMEOUT_MS: '2000',
      KASSA_WEBHOOK_RETRY_BASE_MS: '50',
    };
    const receiver = await startWebhookReceiver();
    // The first attempt gets no answer (timeout 2 s): meanwhile the server (one database connection) must keep answering.
    receiver.respond({ hang: 4_000 });
    const server = await startKassaServer(env);
    try {
      await server.ready();
      const org = parseJsonOutput<{ id: string }>(
        await runKassa(
          [
            'orgs',
            'create',
            '--name',
            'Embedded',
            '--wallet',
            '0x70997970C51812dc3A010C7d01b50e0d17dc79C8',
            '--receiving',
            'shared',
            '--json',
          ],
          env,
        ),
      );
      const key = parseJsonOutput<{ api_key: string; api_secret: string }>(
        await runKassa(['keys', 'create', '--org', org.id, '--json'], env),
      );
      const endpoint = parseJsonOutput<{ id: string; secret: string }>(
        await runKassa(['webhooks', 'add', '--org', org.id, '--url', receiver.url, '--json'], env),
      );
      const credentials = { apiKey: key.api_key, apiSecret: key.api_secret };
      const first = await signedCreate(server.url, credentials);
      expect(first.status).toBe(201);
      // While the first attempt hangs at the receiver, requests are served promptly.
      await new Promise((resolve) => setTimeout(resolve, 300));
      const started = Date.now();
      expect((await signedCreate(server.url, credentials)).status).toBe(201);
      expect((await fetch(`${server.url}/ready`)).status).toBe(200);
      expect(Date.now() - started).toBeLessThan(1_200);
      const got = await receiver.waitFor((list) => list.length >= 2, 20_000);
      expect(new Set(got.map((hook) => hook.body.data.session_id)).has(first.body.session_id as string)).toBe(true);
      expect(got.every((hook) => signatureValid(endpoint.secret, hook.headers, hook.rawBody))).toBe(true);
    } finally {
      await server.stop();
      await receiver.close();
    }
    // Three CLI runs and a server, each opening the embedded database, beside another test file on the other core.
  }, 90_000);
});
