// Webhook deliveries per second (issue 10): a backlog of events for one endpoint whose
// receiver answers 200 at once, delivered by one Kassa; timed from its start until the
// receiver has every event. Runs alone too: `node bench/webhooks.mjs`.
import { spawn } from 'node:child_process';
import { createHmac } from 'node:crypto';
import { createServer } from 'node:http';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { benchKassaEnv, freePort, kassaCli, stopChild, waitFor } from './support.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

const serve = (env, port) =>
  spawn('node', [path.join(root, 'bin/kassa.js'), 'serve'], {
    env: { ...env, PORT: String(port), HOST: '127.0.0.1' },
    stdio: ['ignore', 'ignore', 'inherit'],
  });

export async function runWebhooksBench({ databaseUrl, events = Number(process.env.BENCH_WEBHOOK_EVENTS ?? 500) }) {
  const received = new Set();
  const receiver = createServer((request, response) => {
    let body = '';
    request.on('data', (chunk) => (body += chunk));
    request.on('end', () => {
      received.add(JSON.parse(body).id);
      response.writeHead(200).end();
    });
  });
  await new Promise((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  const children = [];
  try {
    const env = benchKassaEnv({
      DATABASE_URL: databaseUrl,
      KASSA_DATA_DIR: mkdtempSync(path.join(tmpdir(), 'kassa-bench-hooks-')),
    });
    const cli = kassaCli(env);
    cli('migrate');
    const org = cli(
      'orgs',
      'create',
      '--name',
      'Hooks bench',
      '--wallet',
      '0x15d34aaf54267db7d7c367839aaf71a00a2c6a65',
    );
    const key = cli('keys', 'create', '--org', org.id);
    cli('webhooks', 'add', '--org', org.id, '--url', `http://127.0.0.1:${receiver.address().port}/hooks`);

    // The backlog, written while no instance delivers (polling once a minute, and the backlog is written within it).
    const port = await freePort();
    const writer = serve({ ...env, KASSA_WEBHOOK_POLL_MS: '60000' }, port);
    children.push(writer);
    await waitFor(`http://127.0.0.1:${port}/ready`);
    let timestamp = Date.now();
    for (let i = 0; i < events; i++) {
      const body = JSON.stringify({
        user: { id: `hooks-${i}`, email: 'h@example.com' },
        items: [{ name: 'Item', quantity: 1 + i, unit_price: 3 }],
        currency: 'USD',
      });
      timestamp = Math.max(Date.now(), timestamp + 1);
      const response = await fetch(`http://127.0.0.1:${port}/checkout-sessions`, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          'x-service-key': key.api_key,
          'x-service-timestamp': String(timestamp),
          'x-service-signature': createHmac('sha256', key.api_secret).update(`${timestamp}.${body}`).digest('hex'),
        },
        body,
      });
      if (response.status !== 201) throw new Error(`webhooks bench: create answered ${response.status}`);
    }
    await stopChild(writer);

    const deliverer = serve(env, await freePort());
    children.push(deliverer);
    const started = Date.now();
    let first = 0;
    while (received.size < events) {
      if (Date.now() - started > 300_000)
        throw new Error(`webhooks bench: ${received.size} of ${events} delivered after 300 s`);
      if (first === 0 && received.size > 0) first = Date.now();
      await new Promise((r) => setTimeout(r, 5));
    }
    // Timed from the first delivery to the last: Kassa's start-up is not delivery work.
    const seconds = (Date.now() - (first || started)) / 1000;
    return { deliveries: events, seconds, perSecond: events / seconds };
  } finally {
    for (const child of children) await stopChild(child);
    receiver.closeAllConnections();
    await new Promise((resolve) => receiver.close(resolve));
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const admin = process.env.KASSA_BENCH_ADMIN_URL ?? 'postgresql://postgres@127.0.0.1:5432/postgres';
  const name = `kassa_bench_hooks_${process.pid}`;
  const client = new pg.Client({ connectionString: admin });
  await client.connect();
  await client.query(`CREATE DATABASE "${name}"`);
  try {
    console.log(
      await runWebhooksBench({ databaseUrl: Object.assign(new URL(admin), { pathname: `/${name}` }).toString() }),
    );
  } finally {
    await client.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
    await client.end();
  }
}
