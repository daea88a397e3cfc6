import { existsSync, mkdtempSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openEmbeddedDatabase } from '../support/databases.js';
import type { EmbeddedDatabase } from '../../src/db/embedded.js';
import { listeningTcpPorts } from '../support/proc-sockets.js';

/**
 * The embedded database serves every client (the server's pool, a CLI command beside it) on
 * PGlite's one session. Without src/db/embedded-socket-queue.ts, concurrent clients' protocol
 * messages interleave: queries answered with another client's rows, `portal "" does not exist`.
 * It listens on a Unix socket only its owner can reach (docs/decisions/0002).
 */
let dataDir: string;
let database: EmbeddedDatabase;
let listeningBefore: number[];
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
  listeningBefore = await listeningTcpPorts(process.pid);
  database = await openEmbeddedDatabase(dataDir, 'server');
  const setup = await connect();
  await setup.query('CREATE TABLE owned (id int PRIMARY KEY, owner int NOT NULL)');
});

afterAll(async () => {
  for (const client of clients) await client.end().catch(() => {});
  await database?.close();
  rmSync(dataDir, { recursive: true, force: true });
});

describe('where the embedded database listens', () => {
  it('on a Unix socket of mode 0600 in a 0700 directory of the data dir, and on no TCP port', async () => {
    // PGlite's own files are 0666: their directory is what keeps other users from reading or changing them.
    expect((statSync(path.join(dataDir, 'pgdata')).mode & 0o777).toString(8)).toBe('700');
    const socketDir = path.join(dataDir, 'socket');
    const dir = statSync(socketDir);
    expect(dir.isDirectory()).toBe(true);
    expect((dir.mode & 0o777).toString(8)).toBe('700');
    const socket = statSync(path.join(socketDir, '.s.PGSQL.5432'));
    expect(socket.isSocket()).toBe(true);
    expect((socket.mode & 0o777).toString(8)).toBe('600');
    // What other processes read to connect: the socket's directory, not a port.
    const owner = JSON.parse(readFileSync(path.join(dataDir, 'embedded.json'), 'utf8')) as Record<string, unknown>;
    expect(owner).toEqual({ pid: process.pid, socket: socketDir, role: 'server' });
    expect((statSync(path.join(dataDir, 'embedded.json')).mode & 0o777).toString(8)).toBe('600');
    expect(await listeningTcpPorts(process.pid)).toEqual(listeningBefore);
    // pg reaches it by the directory (host=<dir>, port 5432), as database.url says.
    const client = new pg.Client({ host: socketDir, port: 5432, user: 'postgres', database: 'postgres' });
    client.on('error', () => {});
    await client.connect();
    clients.push(client);
    expect((await client.query('SELECT 1 AS one')).rows).toEqual([{ one: 1 }]);
    expect(new URL(database.url).searchParams.get('host')).toBe(socketDir);
  });
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

// Last: it closes the database the tests above share, to open the same directory by another path.
describe('a data dir too deep for a socket path', () => {
  it("serves the database from a private directory of the system's temporary directory instead", async () => {
    await database.close();
    const longDir = path.join(mkdtempSync(path.join(tmpdir(), 'kassa-long-')), 'd'.repeat(100));
    symlinkSync(dataDir, longDir);
    const long = await openEmbeddedDatabase(longDir, 'cli');
    try {
      const socketDir = new URL(long.url).searchParams.get('host')!;
      expect(socketDir.startsWith(path.join(tmpdir(), 'kassa-db-'))).toBe(true);
      expect((statSync(socketDir).mode & 0o777).toString(8)).toBe('700');
      expect((statSync(path.join(socketDir, '.s.PGSQL.5432')).mode & 0o777).toString(8)).toBe('600');
      const client = new pg.Client({ connectionString: long.url });
      await client.connect();
      expect((await client.query('SELECT count(*)::int AS n FROM owned WHERE owner = 0')).rows[0].n).toBeGreaterThan(0);
      await client.end();
      await long.close();
      expect(existsSync(socketDir)).toBe(false);
    } finally {
      await long.close();
      rmSync(path.dirname(longDir), { recursive: true, force: true });
    }
  });
});

describe('an embedded database held by an earlier release', () => {
  it('is refused at once with what to do, not after the 30 s wait for an owner', async () => {
    const old = mkdtempSync(path.join(tmpdir(), 'kassa-old-owner-'));
    try {
      // What an owner of the TCP-port release left: its live pid in the lock, a port and no socket in embedded.json.
      writeFileSync(path.join(old, 'embedded.lock'), String(process.pid));
      writeFileSync(path.join(old, 'embedded.json'), JSON.stringify({ pid: process.pid, port: 54321, role: 'server' }));
      const started = Date.now();
      await expect(openEmbeddedDatabase(old, 'cli')).rejects.toThrow(
        /earlier release .* stop it and start this release/,
      );
      expect(Date.now() - started).toBeLessThan(5_000);
    } finally {
      rmSync(old, { recursive: true, force: true });
    }
  });
});
