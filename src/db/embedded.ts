import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import net from 'node:net';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { PGlite } from '@electric-sql/pglite';
import { PGLiteSocketServer } from '@electric-sql/pglite-socket';
import { installOrderedQueue } from './embedded-socket-queue.js';

/**
 * The embedded database: PGlite in `<dataDir>/pgdata`, served on a loopback
 * TCP port so the ordinary pg driver and Prisma adapter work unchanged.
 *
 * Only one process may open a PGlite directory. The owner writes
 * `<dataDir>/embedded.json` (pid, port, role); every other Kassa process
 * (the CLI beside a running `kassa serve`) connects through that port instead.
 */
export interface EmbeddedDatabase {
  readonly url: string;
  /** True when this process opened PGlite itself (and must close it). */
  readonly owner: boolean;
  close(): Promise<void>;
}

export type EmbeddedRole = 'server' | 'cli';

interface OwnerFile {
  pid: number;
  port: number;
  role: EmbeddedRole;
}

const WAIT_FOR_OWNER_MS = 30_000;

export async function openEmbeddedDatabase(dataDir: string, role: EmbeddedRole): Promise<EmbeddedDatabase> {
  mkdirSync(dataDir, { recursive: true });
  const lockFile = path.join(dataDir, 'embedded.lock');
  const ownerFile = path.join(dataDir, 'embedded.json');
  const deadline = Date.now() + WAIT_FOR_OWNER_MS;

  for (;;) {
    if (tryLock(lockFile)) return startOwner(dataDir, lockFile, ownerFile, role);

    const owner = readOwner(ownerFile);
    const lockPid = readPid(lockFile);
    if (lockPid !== null && !isAlive(lockPid)) {
      // The previous owner died without cleaning up: its lock is stale.
      rmSync(lockFile, { force: true });
      continue;
    }
    if (owner && owner.pid === lockPid && (await portAnswers(owner.port))) {
      if (role === 'server' && owner.role === 'server') {
        throw new Error(
          `Another Kassa server (pid ${owner.pid}) is already serving the embedded database in ${dataDir}. ` +
            'To run several instances, point them all at one PostgreSQL with DATABASE_URL.',
        );
      }
      // Only a server's socket is borrowed: it outlives the borrower. A CLI command
      // that owns the directory closes it when it ends, so everyone else waits for it.
      if (owner.role === 'server') return { url: connectionUrl(owner.port), owner: false, close: async () => {} };
    }
    if (Date.now() > deadline) {
      throw new Error(
        `Timed out waiting for the embedded database in ${dataDir} (held by pid ${lockPid ?? 'unknown'}).`,
      );
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/**
 * PGlite's settings, applied at every start (nothing is stored in the data directory). A
 * 16 MB buffer pool instead of 128 MB: the operating system's page cache holds the rest, and
 * a process serving under load stays far smaller (docs/benchmarks.md). `startParams`
 * replaces PGlite's own defaults, so they are kept.
 */
export const PGLITE_OPTIONS = { startParams: [...PGlite.defaultStartParams, '-c', 'shared_buffers=16MB'] };

/**
 * Creates a new data directory in a child process: PGlite's initdb leaves some 450 MB of
 * WebAssembly garbage behind in the process that runs it, which V8 is slow to give back.
 * Made in a staging directory and renamed, so a killed start never leaves half a database.
 */
async function initialiseInChild(pgdata: string): Promise<void> {
  if (existsSync(pgdata)) return;
  const staging = `${pgdata}.init-${process.pid}`;
  rmSync(staging, { recursive: true, force: true });
  const pglite = pathToFileURL(createRequire(import.meta.url).resolve('@electric-sql/pglite')).href;
  const script =
    'const [url, dir, options] = process.argv.slice(1); const { PGlite } = await import(url); await (await ' +
    'PGlite.create(dir, JSON.parse(options))).close();';
  await promisify(execFile)(process.execPath, [
    '--input-type=module',
    '-e',
    script,
    pglite,
    staging,
    JSON.stringify(PGLITE_OPTIONS),
  ]);
  renameSync(staging, pgdata);
}

async function startOwner(
  dataDir: string,
  lockFile: string,
  ownerFile: string,
  role: EmbeddedRole,
): Promise<EmbeddedDatabase> {
  try {
    const pgdata = path.join(dataDir, 'pgdata');
    await initialiseInChild(pgdata);
    const db = await PGlite.create(pgdata, PGLITE_OPTIONS);
    // PGlite is one session shared by every socket connection: NOTIFY does not reach the other
    // connections, so changes are also logged for the server to poll (src/db/change-feed.ts).
    await db.exec("SET kassa.change_log = 'on'");
    const server = new PGLiteSocketServer({ db, host: '127.0.0.1', port: 0, maxConnections: 64 });
    // Clients' statements must not interleave on PGlite's one session (embedded-socket-queue.ts).
    installOrderedQueue(server, db);
    await server.start();
    const port = listeningPort(server);
    writeFileSync(ownerFile, JSON.stringify({ pid: process.pid, port, role } satisfies OwnerFile));
    let closed = false;
    return {
      url: connectionUrl(port),
      owner: true,
      async close() {
        if (closed) return;
        closed = true;
        await server.stop();
        await db.close();
        rmSync(ownerFile, { force: true });
        rmSync(lockFile, { force: true });
      },
    };
  } catch (error) {
    rmSync(lockFile, { force: true });
    throw error;
  }
}

function listeningPort(server: PGLiteSocketServer): number {
  // pglite-socket keeps its net.Server private; its address is the only way to learn port 0's choice.
  const inner = (server as unknown as { server?: net.Server }).server;
  const address = inner?.address();
  if (!address || typeof address === 'string') throw new Error('embedded database: cannot read the listening port');
  return address.port;
}

function connectionUrl(port: number): string {
  return `postgresql://postgres:postgres@127.0.0.1:${port}/postgres?sslmode=disable`;
}

function tryLock(lockFile: string): boolean {
  try {
    writeFileSync(lockFile, String(process.pid), { flag: 'wx' });
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw error;
  }
}

function readPid(file: string): number | null {
  try {
    const pid = Number(readFileSync(file, 'utf8').trim());
    return Number.isInteger(pid) && pid > 0 ? pid : null;
  } catch {
    return null;
  }
}

function readOwner(file: string): OwnerFile | null {
  if (!existsSync(file)) return null;
  try {
    return JSON.parse(readFileSync(file, 'utf8')) as OwnerFile;
  } catch {
    return null;
  }
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

function portAnswers(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect({ host: '127.0.0.1', port });
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}
