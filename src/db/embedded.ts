import { execFile } from 'node:child_process';
import {
  chmodSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  renameSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { createRequire } from 'node:module';
import net from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { PGlite } from '@electric-sql/pglite';
import { PGLiteSocketServer } from '@electric-sql/pglite-socket';
import { installOrderedQueue } from './embedded-socket-queue.js';

/**
 * The embedded database: PGlite in `<dataDir>/pgdata` on a Unix socket (0600 in a 0700 directory, no TCP port) for the
 * pg driver (docs/decisions/0002). One process owns it; the others connect via `<dataDir>/embedded.json`.
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
  /** The directory of the socket `.s.PGSQL.5432` (pg's `host`). */
  socket: string;
  role: EmbeddedRole;
}

/** The socket's name in its directory: the name pg and libpq look for with `host=<directory>` and port 5432. */
const SOCKET_NAME = '.s.PGSQL.5432';
/** A Unix socket's path must fit in sun_path (108 bytes on Linux, 104 on macOS, with its final NUL). */
const MAX_SOCKET_PATH = 103;

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
    // An owner of an earlier release listens on TCP and names no socket: nothing here can reach it, so say so now.
    if (owner && owner.pid === lockPid && typeof owner.socket !== 'string') {
      throw new Error(
        `A Kassa of an earlier release (pid ${owner.pid}) holds the embedded database in ${dataDir}; ` +
          'stop it and start this release instead.',
      );
    }
    if (owner && owner.pid === lockPid && typeof owner.socket === 'string' && (await socketAnswers(owner.socket))) {
      if (role === 'server' && owner.role === 'server') {
        throw new Error(
          `Another Kassa server (pid ${owner.pid}) is already serving the embedded database in ${dataDir}. ` +
            'To run several instances, point them all at one PostgreSQL with DATABASE_URL.',
        );
      }
      // Only a server's socket is borrowed: it outlives the borrower. A CLI command
      // that owns the directory closes it when it ends, so everyone else waits for it.
      if (owner.role === 'server') return { url: connectionUrl(owner.socket), owner: false, close: async () => {} };
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
 * PGlite's settings, applied at every start: a 16 MB buffer pool, since the OS page cache holds the rest and the
 * process stays far smaller (docs/benchmarks.md). `startParams` replaces PGlite's defaults, so they are kept.
 */
export const PGLITE_OPTIONS = { startParams: [...PGlite.defaultStartParams, '-c', 'shared_buffers=16MB'] };

/**
 * Creates a new data directory in a child process, since initdb leaves some 450 MB of WebAssembly garbage behind; made
 * in a staging directory and renamed, so a killed start never leaves half a database.
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
    // PGlite writes its files readable and writable by everyone (0666): the directory keeps other users out.
    chmodSync(pgdata, 0o700);
    const db = await PGlite.create(pgdata, PGLITE_OPTIONS);
    // PGlite is one session shared by every socket connection: NOTIFY does not reach the other
    // connections, so changes are also logged for the server to poll (src/db/change-feed/change-feed.ts).
    await db.exec("SET kassa.change_log = 'on'");
    const socket = socketDirectory(dataDir);
    const socketPath = path.join(socket.dir, SOCKET_NAME);
    // A socket left by an owner that was killed (we hold the lock now, so it is nobody's).
    rmSync(socketPath, { force: true });
    const server = new PGLiteSocketServer({ db, path: socketPath, maxConnections: 64 });
    // Clients' statements must not interleave on PGlite's one session (embedded-socket-queue.ts).
    installOrderedQueue(server, db);
    await server.start();
    // Node makes the socket as the umask allows; the directory (0700) already keeps others out.
    chmodSync(socketPath, 0o600);
    writeFileSync(ownerFile, JSON.stringify({ pid: process.pid, socket: socket.dir, role } satisfies OwnerFile), {
      mode: 0o600,
    });
    let closed = false;
    return {
      url: connectionUrl(socket.dir),
      owner: true,
      async close() {
        if (closed) return;
        closed = true;
        await server.stop();
        await db.close();
        rmSync(ownerFile, { force: true });
        if (socket.temporary) rmSync(socket.dir, { recursive: true, force: true });
        else rmSync(socketPath, { force: true });
        rmSync(lockFile, { force: true });
      },
    };
  } catch (error) {
    rmSync(lockFile, { force: true });
    throw error;
  }
}

/**
 * The socket's directory, made owner-only (0700, whatever it was): `<dataDir>/socket`, or a new private directory in
 * the system's temporary directory when that path is too long for a Unix socket (removed when the owner closes).
 */
function socketDirectory(dataDir: string): { dir: string; temporary: boolean } {
  const inDataDir = path.resolve(dataDir, 'socket');
  if (Buffer.byteLength(path.join(inDataDir, SOCKET_NAME)) <= MAX_SOCKET_PATH) {
    mkdirSync(inDataDir, { recursive: true, mode: 0o700 });
    chmodSync(inDataDir, 0o700);
    return { dir: inDataDir, temporary: false };
  }
  return { dir: mkdtempSync(path.join(tmpdir(), 'kassa-db-')), temporary: true };
}

/** pg's URL for a Unix socket: `host` is the socket's directory (the socket is `.s.PGSQL.<port>` in it). */
function connectionUrl(socketDir: string): string {
  return `postgresql://postgres:postgres@localhost:5432/postgres?host=${encodeURIComponent(socketDir)}&sslmode=disable`;
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

function socketAnswers(socketDir: string): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect({ path: path.join(socketDir, SOCKET_NAME) });
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}
