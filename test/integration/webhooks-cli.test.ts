import { randomBytes } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../support/databases.js';
import {
  hasStackTrace,
  killAllKassaProcesses,
  parseJsonOutput,
  runKassaInProcess as kassa,
  signedCreate,
  startKassaServer,
} from '../support/cli-process.js';
import { signatureValid, startWebhookReceiver } from '../support/webhook-receiver.js';

/**
 * The `kassa webhooks` CLI contract and delivery across a restart, on a PostgreSQL database
 * of this file's own: Kassa as a real child process (killed with SIGKILL and restarted), the
 * CLI commands in-process (the code the binary runs; cli.test.ts checks the binary itself).
 */

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

let database: TestDatabase;
let env: Record<string, string>;

beforeAll(async () => {
  database = await createTestDatabase('postgres');
  env = {
    KASSA_ENV: 'test',
    LOG_LEVEL: 'silent',
    KASSA_NETWORKS: 'local',
    DATABASE_URL: database.databaseUrl!,
    KASSA_DATA_DIR: database.dataDir,
    KASSA_WEBHOOK_RETRY_BASE_MS: '50',
    KASSA_WEBHOOK_RETRY_MAX_MS: '200',
    KASSA_WEBHOOK_TIMEOUT_MS: '1000',
    KASSA_WEBHOOK_POLL_MS: '50',
  };
});

afterAll(async () => {
  await killAllKassaProcesses();
  await database?.drop();
});

async function organisationWithKey() {
  // A wallet of its own: a receiving wallet belongs to one organisation (docs/decisions/0015).
  const wallet = `0x${randomBytes(20).toString('hex')}`;
  const org = parseJsonOutput<{ id: string }>(
    await kassa(['orgs', 'create', '--name', 'Hooks', '--wallet', wallet, '--receiving', 'shared', '--json'], env),
  );
  const key = parseJsonOutput<{ api_key: string; api_secret: string }>(
    await kassa(['keys', 'create', '--org', org.id, '--json'], env),
  );
  return { orgId: org.id, credentials: { apiKey: key.api_key, apiSecret: key.api_secret } };
}

// Each test runs a dozen CLI commands and a server process: give slow machines room.
describe('kassa webhooks', { timeout: 90_000 }, () => {
  it('add --json prints id and secret; list, deliveries, redeliver, rotate-secret and remove work; errors exit 2 or 4', async () => {
    const { orgId, credentials } = await organisationWithKey();
    const receiver = await startWebhookReceiver();
    const server = await startKassaServer(env);
    try {
      await server.ready();
      const add = await kassa(
        [
          'webhooks',
          'add',
          '--org',
          orgId,
          '--url',
          receiver.url,
          '--events',
          'checkout_session.created,checkout_session.expired',
          '--json',
        ],
        env,
      );
      expect(add.code, add.stderr).toBe(0);
      const endpoint = parseJsonOutput<{ id: string; secret: string; events: string[]; url: string }>(add);
      expect(endpoint.id).toMatch(UUID);
      expect(endpoint.secret).toMatch(/^whsec_[0-9a-f]{64}$/);
      expect(endpoint.events).toEqual(['checkout_session.created', 'checkout_session.expired']);

      const listed = parseJsonOutput<Array<{ id: string; secret?: string }>>(
        await kassa(['webhooks', 'list', '--org', orgId, '--json'], env),
      );
      expect(listed.map((e) => e.id)).toEqual([endpoint.id]);
      expect(listed[0]!.secret).toBeUndefined();

      const created = await signedCreate(server.url, credentials);
      expect(created.status).toBe(201);
      const [first] = await receiver.waitFor((list) => list.length >= 1);
      expect(first!.body.type).toBe('checkout_session.created');
      expect(signatureValid(endpoint.secret, first!.headers, first!.rawBody)).toBe(true);

      const deliveries = parseJsonOutput<
        Array<{ id: string; event_id: string; status: string; attempt_log: Array<{ status_code: number }> }>
      >(await kassa(['webhooks', 'deliveries', '--endpoint', endpoint.id, '--json'], env));
      expect(deliveries).toHaveLength(1);
      expect(deliveries[0]).toMatchObject({ event_id: first!.body.id, status: 'succeeded' });
      expect(deliveries[0]!.attempt_log.map((a) => a.status_code)).toEqual([200]);

      // Redeliver by delivery id, then by event id: the same event arrives again, signed afresh.
      const byDelivery = await kassa(['webhooks', 'redeliver', deliveries[0]!.id], env);
      expect(byDelivery.code, byDelivery.stderr).toBe(0);
      await receiver.waitFor((list) => list.length >= 2);
      const byEvent = await kassa(['webhooks', 'redeliver', first!.body.id, '--json'], env);
      expect(parseJsonOutput<{ kind: string; delivery_ids: string[] }>(byEvent)).toEqual({
        kind: 'event',
        delivery_ids: [deliveries[0]!.id],
      });
      const got = await receiver.waitFor((list) => list.length >= 3);
      expect(got.map((hook) => hook.body.id)).toEqual([first!.body.id, first!.body.id, first!.body.id]);
      expect(got.every((hook) => signatureValid(endpoint.secret, hook.headers, hook.rawBody))).toBe(true);

      const rotated = parseJsonOutput<{ secret: string; previous_secret_expires_at: string }>(
        await kassa(['webhooks', 'rotate-secret', endpoint.id, '--json'], env),
      );
      expect(rotated.secret).toMatch(/^whsec_/);
      expect(rotated.secret).not.toBe(endpoint.secret);

      // Errors: unknown id → 4; bad input → 2; one readable line, no stack.
      const missing = await kassa(['webhooks', 'redeliver', '00000000-0000-4000-8000-000000000000'], env);
      expect(missing.code).toBe(4);
      expect(hasStackTrace(missing.stderr)).toBe(false);
      expect((await kassa(['webhooks', 'deliveries', '--endpoint', 'nope'], env)).code).toBe(4);
      const badUrl = await kassa(['webhooks', 'add', '--org', orgId, '--url', 'ftp://x.example'], env);
      expect(badUrl.code).toBe(2);
      expect(badUrl.stderr).toMatch(/^kassa: url must use http or https\n$/);
      expect(
        (await kassa(['webhooks', 'add', '--org', orgId, '--url', receiver.url, '--events', 'bogus'], env)).code,
      ).toBe(2);
      expect((await kassa(['webhooks', 'add', '--url', receiver.url], env)).code).toBe(2);
      expect((await kassa(['webhooks', 'deliveries', '--endpoint', endpoint.id, '--limit', '0'], env)).code).toBe(2);

      const removed = await kassa(['webhooks', 'remove', endpoint.id], env);
      expect(removed.code, removed.stderr).toBe(0);
      expect(parseJsonOutput<unknown[]>(await kassa(['webhooks', 'list', '--org', orgId, '--json'], env))).toEqual([]);
      expect((await kassa(['webhooks', 'remove', endpoint.id], env)).code).toBe(4);
    } finally {
      await server.stop();
      await receiver.close();
    }
  });

  it('every subcommand answers an unknown or malformed organisation, endpoint, delivery or event id with exit 4 and one line', async () => {
    const unknown = '00000000-0000-4000-8000-000000000000';
    const cases: Array<[string[], RegExp]> = [];
    for (const id of ['nope', unknown]) {
      cases.push(
        [['webhooks', 'list', '--org', id], new RegExp(`^kassa: Organisation ${id} not found\\n$`)],
        [
          ['webhooks', 'add', '--org', id, '--url', 'https://93.184.215.14/hook'],
          new RegExp(`^kassa: Organisation ${id} not found\\n$`),
        ],
        [['webhooks', 'remove', id], new RegExp(`^kassa: Webhook endpoint ${id} not found\\n$`)],
        [['webhooks', 'rotate-secret', id], new RegExp(`^kassa: Webhook endpoint ${id} not found\\n$`)],
        [['webhooks', 'deliveries', '--endpoint', id], new RegExp(`^kassa: Webhook endpoint ${id} not found\\n$`)],
        [['webhooks', 'redeliver', id], new RegExp(`^kassa: No webhook delivery or event ${id}\\n$`)],
      );
    }
    const results = await Promise.all(cases.map(([args]) => kassa(args, env)));
    results.forEach((result, index) => {
      const [args, message] = cases[index]!;
      expect({ args, code: result.code, stderr: result.stderr, stdout: result.stdout }).toEqual({
        args,
        code: 4,
        stderr: expect.stringMatching(message),
        stdout: '',
      });
      expect(hasStackTrace(result.stderr)).toBe(false);
    });
    // keys list agrees on the same unknown organisation.
    expect((await kassa(['keys', 'list', '--org', unknown], env)).code).toBe(4);
  });

  it('a redelivery asked for while an attempt is in flight is made, even when that attempt succeeds', async () => {
    const { orgId, credentials } = await organisationWithKey();
    // A receiver that holds the first request until the test lets it answer 200, and answers the others at once.
    const arrived: string[] = [];
    let releaseFirst: (() => void) | undefined;
    const receiver = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => {
        arrived.push((JSON.parse(Buffer.concat(chunks).toString('utf8')) as { id: string }).id);
        if (arrived.length === 1) releaseFirst = () => void (res.headersSent || res.writeHead(200).end('ok'));
        else res.writeHead(200).end('ok');
      });
    });
    await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
    const url = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hooks`;
    const add = parseJsonOutput<{ id: string }>(
      await kassa(['webhooks', 'add', '--org', orgId, '--url', url, '--json'], env),
    );
    // The attempt may take its time: the test, not the timeout, decides when it ends.
    const server = await startKassaServer({ ...env, KASSA_WEBHOOK_TIMEOUT_MS: '30000' });
    try {
      await server.ready();
      expect((await signedCreate(server.url, credentials)).status).toBe(201);
      await until('the first attempt arrives', () => releaseFirst !== undefined);
      const [inFlight] = parseJsonOutput<Array<{ id: string; status: string }>>(
        await kassa(['webhooks', 'deliveries', '--endpoint', add.id, '--json'], env),
      );
      expect(inFlight!.status).toBe('pending');
      const redeliver = await kassa(['webhooks', 'redeliver', inFlight!.id], env);
      expect(redeliver.code, redeliver.stderr).toBe(0);
      releaseFirst!();
      // The merchant asked after the first attempt began: the event goes out once more.
      await until('the redelivery arrives', () => arrived.length >= 2);
      expect(arrived).toEqual([arrived[0], arrived[0]]);
      await until('the delivery settles after two attempts', async () => {
        const [settled] = parseJsonOutput<Array<{ status: string; attempts: number }>>(
          await kassa(['webhooks', 'deliveries', '--endpoint', add.id, '--json'], env),
        );
        return settled!.status === 'succeeded' && settled!.attempts === 2;
      });
    } finally {
      releaseFirst?.();
      await server.stop();
      await new Promise((resolve) => receiver.close(resolve));
    }
  });

  it('an event written while the receiver is down is delivered after Kassa restarts; nothing is lost', async () => {
    const { orgId, credentials } = await organisationWithKey();
    // Reserve a port for the receiver, then leave it closed: connections are refused.
    const probe = await startWebhookReceiver();
    const port = probe.port;
    await probe.close();
    const add = parseJsonOutput<{ id: string; secret: string }>(
      await kassa(['webhooks', 'add', '--org', orgId, '--url', `http://127.0.0.1:${port}/hooks`, '--json'], env),
    );

    const first = await startKassaServer(env);
    await first.ready();
    const created = await signedCreate(first.url, credentials);
    expect(created.status).toBe(201);
    // Wait until at least one attempt has failed (refused), then kill Kassa hard.
    const deadline = Date.now() + 15_000;
    for (;;) {
      const log = parseJsonOutput<Array<{ attempts: number; status: string; last_error: string | null }>>(
        await kassa(['webhooks', 'deliveries', '--endpoint', add.id, '--json'], env),
      );
      if (log[0] && log[0].attempts >= 1 && log[0].last_error) {
        expect(log[0].status).toBe('pending');
        expect(log[0].last_error).toMatch(/ECONNREFUSED/);
        break;
      }
      if (Date.now() > deadline) throw new Error(`no failed attempt logged: ${JSON.stringify(log)}`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    first.child.kill('SIGKILL');
    await first.exited;

    const receiver = await startWebhookReceiver(port);
    const second = await startKassaServer(env);
    try {
      await second.ready();
      const got = await receiver.waitFor((list) => list.length >= 1, 20_000);
      expect(got[0]!.body.type).toBe('checkout_session.created');
      expect(got[0]!.body.data.session_id).toBe(created.body.session_id);
      expect(signatureValid(add.secret, got[0]!.headers, got[0]!.rawBody)).toBe(true);
    } finally {
      await second.stop();
      await receiver.close();
    }
  });
});

async function until(what: string, done: () => boolean | Promise<boolean>, timeoutMs = 15_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await done())) {
    if (Date.now() > deadline) throw new Error(`${what}: not within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}
