import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../support/databases.js';
import { parseJsonOutput, runKassaInProcess as kassa } from '../support/cli-process.js';
import { signatureValid, startWebhookReceiver } from '../support/webhook-receiver.js';

/**
 * What the dashboard does, the operator CLI does too (docs/dashboard.md): disable and enable a webhook endpoint, send
 * it a test event, rename a payment link, change its use limit and switch it off and on; on a PostgreSQL database of
 * this file's own.
 */

let database: TestDatabase;
let env: Record<string, string>;
let org: string;

beforeAll(async () => {
  database = await createTestDatabase('postgres');
  env = {
    KASSA_ENV: 'test',
    LOG_LEVEL: 'silent',
    KASSA_NETWORKS: 'local',
    DATABASE_URL: database.databaseUrl!,
    KASSA_DATA_DIR: database.dataDir,
  };
  const wallet = `0x${randomBytes(20).toString('hex')}`;
  org = parseJsonOutput<{ id: string }>(
    await kassa(['orgs', 'create', '--name', 'Parity', '--wallet', wallet, '--receiving', 'shared', '--json'], env),
  ).id;
}, 60_000);

afterAll(async () => {
  await database?.drop();
});

describe('the CLI does what the dashboard does', { timeout: 60_000 }, () => {
  it('kassa webhooks disable and enable', async () => {
    const endpoint = parseJsonOutput<{ id: string }>(
      await kassa(['webhooks', 'add', '--org', org, '--url', 'http://127.0.0.1:9/k', '--json'], env),
    );
    const off = await kassa(['webhooks', 'disable', endpoint.id], env);
    expect(off.code, off.stderr).toBe(0);
    expect(off.stdout).toContain(`${endpoint.id}  disabled  http://127.0.0.1:9/k`);
    const listed = parseJsonOutput<Array<{ enabled: boolean }>>(
      await kassa(['webhooks', 'list', '--org', org, '--json'], env),
    );
    expect(listed).toEqual([expect.objectContaining({ enabled: false })]);
    const on = await kassa(['webhooks', 'enable', endpoint.id], env);
    expect(on.stdout).toContain(`${endpoint.id}  enabled `);
    const unknown = await kassa(['webhooks', 'disable', '00000000-0000-4000-8000-000000000000'], env);
    expect(unknown.code).toBe(4);
  });

  it('kassa webhooks test: a signed kassa.test event, its answer printed', async () => {
    const receiver = await startWebhookReceiver();
    receiver.fallback = { status: 204 };
    try {
      const endpoint = parseJsonOutput<{ id: string; secret: string }>(
        await kassa(['webhooks', 'add', '--org', org, '--url', receiver.url, '--json'], env),
      );
      const sent = parseJsonOutput(await kassa(['webhooks', 'test', endpoint.id, '--json'], env));
      expect(sent).toMatchObject({ http_status: 204, error: null });
      const [hook] = receiver.received;
      expect(hook!.body).toMatchObject({ type: 'kassa.test', data: { endpoint_id: endpoint.id } });
      expect(signatureValid(endpoint.secret, hook!.headers, hook!.rawBody)).toBe(true);
    } finally {
      await receiver.close();
    }
  });

  it('kassa links update: rename, use limit, off and on, with the REST rules', async () => {
    const link = parseJsonOutput<{ payment_link_id: string }>(
      await kassa(
        [
          'links',
          'create',
          '--org',
          org,
          '--name',
          'Poster',
          '--currency',
          'USD',
          '--item',
          'Poster:1:12.50',
          '--json',
        ],
        env,
      ),
    );
    const id = link.payment_link_id;
    const updated = parseJsonOutput(
      await kassa(
        ['links', 'update', id, '--org', org, '--name', 'Big poster', '--max-uses', '5', '--active', 'no', '--json'],
        env,
      ),
    );
    expect(updated).toMatchObject({ name: 'Big poster', max_uses: 5, active: false, state: 'inactive' });
    const again = parseJsonOutput(
      await kassa(['links', 'update', id, '--org', org, '--max-uses', 'none', '--active', 'yes', '--json'], env),
    );
    expect(again).toMatchObject({ name: 'Big poster', max_uses: null, active: true });
    const bad = await kassa(['links', 'update', id, '--org', org, '--max-uses', '0'], env);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/max_uses/);
  });
});
