import { randomBytes } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../support/databases.js';
import {
  killAllKassaProcesses,
  parseJsonOutput,
  runKassaInProcess as kassa,
  signedCreate,
  startKassaServer,
  type KassaServer,
} from '../support/cli-process.js';
import { ownerOfPort } from '../support/proc-sockets.js';

/**
 * Two Kassa instances (real child processes) on one PostgreSQL database; the one attempting an endpoint's batch is
 * killed with SIGKILL in the middle of it. Its deliveries are attempted again by the other within about two webhook
 * timeouts (the batch's lease, docs/api/webhooks.md#how-delivery-works), and the endpoint's events still arrive in
 * order.
 */

const TIMEOUT_MS = 5_000;
const SESSIONS = 8;

let database: TestDatabase;
let env: Record<string, string>;

beforeAll(async () => {
  database = await createTestDatabase('postgres');
  env = {
    KASSA_ENV: 'test',
    LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? 'silent',
    KASSA_NETWORKS: 'local',
    DATABASE_URL: database.databaseUrl!,
    KASSA_DATA_DIR: database.dataDir,
    KASSA_WEBHOOK_RETRY_BASE_MS: '50',
    KASSA_WEBHOOK_RETRY_MAX_MS: '200',
    KASSA_WEBHOOK_TIMEOUT_MS: String(TIMEOUT_MS),
    KASSA_WEBHOOK_POLL_MS: '50',
  };
});

afterAll(async () => {
  await killAllKassaProcesses();
  await database?.drop();
});

interface Arrival {
  readonly sessionId: string;
  readonly at: number;
  readonly sender: Promise<number | undefined>;
}

describe('webhooks across an instance killed mid-batch', { timeout: 120_000 }, () => {
  it("the other instance delivers the batch within about two timeouts of the kill, in the endpoint's order", async () => {
    const wallet = `0x${randomBytes(20).toString('hex')}`;
    const org = parseJsonOutput<{ id: string }>(
      await kassa(['orgs', 'create', '--name', 'Crash', '--wallet', wallet, '--receiving', 'shared', '--json'], env),
    );
    const key = parseJsonOutput<{ api_key: string; api_secret: string }>(
      await kassa(['keys', 'create', '--org', org.id, '--json'], env),
    );
    const credentials = { apiKey: key.api_key, apiSecret: key.api_secret };

    const instances: KassaServer[] = [];
    const arrivals: Arrival[] = [];
    // The first request waits until every session is created (so the rest are due together: one batch); then each
    // answer takes 1.5 s (a slow receiver, well inside the timeout) until the kill, and none after it.
    let creating: Promise<void> = new Promise(() => undefined);
    let slowMs = 1_500;
    const server: Server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => {
        const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { data: { session_id: string } };
        const pids = instances.map((instance) => instance.child.pid!);
        const sender = ownerOfPort(req.socket.remotePort!, pids);
        const first = arrivals.length === 0;
        arrivals.push({ sessionId: body.data.session_id, at: Date.now(), sender });
        const answer = () => void (res.destroyed || res.writeHead(200).end('ok'));
        if (first) void creating.then(() => setTimeout(answer, 500));
        else if (slowMs > 0) setTimeout(answer, slowMs);
        else answer();
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const receiverUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`;
    try {
      const add = await kassa(
        ['webhooks', 'add', '--org', org.id, '--url', receiverUrl, '--events', 'checkout_session.created', '--json'],
        env,
      );
      expect(add.code, add.stderr).toBe(0);
      instances.push(await startKassaServer(env), await startKassaServer(env));
      await Promise.all(instances.map((instance) => instance.ready()));

      const sessionIds: string[] = [];
      let doneCreating!: () => void;
      creating = new Promise((resolve) => (doneCreating = resolve));
      for (let i = 0; i < SESSIONS; i++) {
        const created = await signedCreate(instances[i % 2]!.url, credentials);
        expect(created.status).toBe(201);
        sessionIds.push(created.body.session_id as string);
      }
      doneCreating();

      // The second request is the first of a batch (the rest of it leased to its sender): kill that instance now.
      await until('a batch is being delivered', () => arrivals.length >= 2, 20_000);
      const senderPid = await arrivals[1]!.sender;
      const victim = instances.find((instance) => instance.child.pid === senderPid);
      expect(victim, 'the sender of the batch is one of the two instances').toBeDefined();
      victim!.child.kill('SIGKILL');
      const killedAt = Date.now();
      slowMs = 0;
      await victim!.exited;
      const survivor = instances.find((instance) => instance !== victim)!;

      // Every event arrives within two timeouts of the kill (plus slack for polling and a loaded machine; before, the
      // batch's later deliveries stayed leased for up to 8 × 15 s).
      const limitMs = 2 * TIMEOUT_MS + 5_000;
      await until(
        `all ${SESSIONS} webhooks arrive within ${limitMs} ms of the kill`,
        () => new Set(arrivals.map((arrival) => arrival.sessionId)).size === SESSIONS,
        limitMs - (Date.now() - killedAt),
      );
      expect(Math.max(...arrivals.map((arrival) => arrival.at)) - killedAt).toBeLessThanOrEqual(limitMs);
      // In order: at least once (the attempt cut by the kill may come again), never one before an earlier event.
      const order = arrivals.map((arrival) => sessionIds.indexOf(arrival.sessionId));
      expect(order.every((index, i) => index >= 0 && (i === 0 || index >= order[i - 1]!))).toBe(true);
      expect((await survivor.stop()).code).toBe(0);
    } finally {
      await killAllKassaProcesses();
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
  });
});

async function until(what: string, done: () => boolean, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!done()) {
    if (Date.now() > deadline) throw new Error(`${what}: not within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}
