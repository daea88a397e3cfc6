import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openEmbeddedDatabase } from '../support/databases.js';
import type { EmbeddedDatabase } from '../../src/db/embedded.js';

/**
 * The embedded database serves every client (the server's pool, a CLI command beside it) on
 * PGlite's one session. Without src/db/embedded-socket-queue.ts, concurrent clients' protocol
 * messages interleave: queries answered with another client's rows, `portal "" does not exist`.
 */
let dataDir: string;
let database: EmbeddedDatabase;
const clients: pg.Client[] = [];

async function connect(): Promise<pg.Client> {
  const client = new pg.Client({ connectionString: database.url });
  client.on('error', () => {});
  await client.connect();
  clients.push(client);
  return client;
}

beforeAll(async () => {
  dataDir = mkdtempSync(path.join(tmpdir(), 'kassa-socket-'));
  database = await openEmbeddedDatabase(dataDir, 'server');
  const setup = await connect();
  await setup.query('CREATE TABLE owned (id int PRIMARY KEY, owner int NOT NULL)');
});

afterAll(async () => {
  for (const client of clients) await client.end().catch(() => {});
  await database?.close();
  rmSync(dataDir, { recursive: true, force: true });
});

describe('the embedded database socket with several clients at once', () => {
  it('answers each client its own rows, with transactions, plain queries and errors interleaved', async () => {
    const workers = await Promise.all([0, 1, 2, 3].map(() => connect()));
    let nextId = 0;
    const problems: string[] = [];
    await Promise.all(
      workers.map(async (client, worker) => {
        for (let n = 0; n < 60; n++) {
          try {
            if (worker % 2 === 0) {
              const id = ++nextId;
              await client.query('BEGIN');
              await client.query('INSERT INTO owned VALUES ($1, $2)', [id, worker]);
              const inside = await client.query<{ owner: number }>('SELECT owner FROM owned WHERE id = $1', [id]);
              await client.query('COMMIT');
              const after = await client.query<{ owner: number }>('SELECT owner FROM owned WHERE id = $1', [id]);
              if (inside.rows[0]?.owner !== worker || after.rows[0]?.owner !== worker)
                problems.push(`row ${id} read wrong`);
            } else {
              const sum = await client.query<{ value: number; worker: string }>(
                `SELECT $1::int + ${worker} AS value, '${worker}' AS worker`,
                [n],
              );
              if (sum.rows[0]?.value !== n + worker || sum.rows[0]?.worker !== String(worker))
                problems.push(`worker ${worker} got ${JSON.stringify(sum.rows)}`);
              if (n % 10 === 0)
                await expect(client.query('SELECT no_such_function($1)', [n])).rejects.toThrow(/no_such_function/);
            }
          } catch (error) {
            problems.push((error as Error).message);
          }
        }
      }),
    );
    expect(problems).toEqual([]);
  });

  it('a client that goes away inside a transaction leaves nothing behind and blocks no one', async () => {
    const leaving = await connect();
    await leaving.query('BEGIN');
    await leaving.query('INSERT INTO owned VALUES (100000, 9)');
    (leaving as unknown as { connection: { stream: { destroy(): void } } }).connection.stream.destroy();
    const other = await connect();
    await expect
      .poll(async () => (await other.query('SELECT count(*)::int AS n FROM owned WHERE id = $1', [100000])).rows[0].n)
      .toBe(0);
    expect((await other.query('SELECT 1 AS one')).rows).toEqual([{ one: 1 }]);
  });
});
