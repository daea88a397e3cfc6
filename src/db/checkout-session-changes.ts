import pg from 'pg';
import type { Database } from './database.js';
import type { Logger } from '../logging.js';

/**
 * Tells this process which checkout sessions changed, whoever changed them
 * (this instance, another instance, the CLI). The database trigger of
 * migration 20261121200000_graphql_live_updates raises
 * `pg_notify('kassa_checkout_session', id)` on every update of a session row.
 *
 * A notification says only "look again": listeners re-read the session, so a
 * spurious or repeated notification costs a read and nothing else.
 */
export interface CheckoutSessionChanges {
  /** Calls `onChange` whenever session `id` may have changed, until the returned function is called. */
  watch(id: string, onChange: () => void): () => void;
  close(): Promise<void>;
}

export const CHANGE_CHANNEL = 'kassa_checkout_session';

/** LISTEN on PostgreSQL; polling on the embedded database, where notifications do not cross connections. */
export function openCheckoutSessionChanges(db: Database, connectionString: string | null, logger: Logger): CheckoutSessionChanges {
  if (db.kind === 'postgresql' && connectionString) return listenForChanges(connectionString, logger);
  return pollForChanges(db, logger);
}

/** Listeners per session id, shared by both strategies. */
class Watchers {
  private readonly byId = new Map<string, Set<() => void>>();

  add(id: string, onChange: () => void): () => void {
    let set = this.byId.get(id);
    if (!set) this.byId.set(id, (set = new Set()));
    set.add(onChange);
    return () => {
      set.delete(onChange);
      if (set.size === 0 && this.byId.get(id) === set) this.byId.delete(id);
    };
  }

  ids(): string[] {
    return [...this.byId.keys()];
  }

  get size(): number {
    return this.byId.size;
  }

  notify(id: string): void {
    for (const onChange of [...(this.byId.get(id) ?? [])]) onChange();
  }

  notifyAll(): void {
    for (const id of this.ids()) this.notify(id);
  }
}

const RECONNECT_MS = [100, 500, 1000, 2000, 5000];

/**
 * One dedicated LISTEN connection per process, opened on the first watch and
 * re-opened after any error. Once listening, every watched session is told to
 * look again, since notifications sent before LISTEN took effect are lost.
 */
export function listenForChanges(connectionString: string, logger: Logger): CheckoutSessionChanges {
  const watchers = new Watchers();
  let client: pg.Client | null = null;
  let connecting: Promise<void> | null = null;
  let attempt = 0;
  let retry: NodeJS.Timeout | null = null;
  let closed = false;

  const connect = (): Promise<void> =>
    (connecting ??= (async () => {
      const next = new pg.Client({ connectionString, application_name: 'kassa-live-updates' });
      next.on('notification', (message) => {
        if (message.channel === CHANGE_CHANNEL && message.payload) watchers.notify(message.payload);
      });
      next.on('error', (error) => lost(next, error));
      next.on('end', () => lost(next, null));
      try {
        await next.connect();
        await next.query(`LISTEN ${CHANGE_CHANNEL}`);
      } catch (error) {
        lost(next, error);
        return;
      } finally {
        connecting = null;
      }
      if (closed) {
        await next.end().catch(() => {});
        return;
      }
      client = next;
      attempt = 0;
      // Whatever changed before LISTEN took effect (first connect or reconnect) was not heard.
      watchers.notifyAll();
    })());

  const lost = (which: pg.Client, error: unknown) => {
    if (client === which) client = null;
    which.removeAllListeners('end');
    which.end().catch(() => {});
    if (closed || retry || watchers.size === 0) return;
    if (error) logger.warn({ err: error }, 'live updates: LISTEN connection lost; reconnecting');
    const delay = RECONNECT_MS[Math.min(attempt++, RECONNECT_MS.length - 1)];
    retry = setTimeout(() => {
      retry = null;
      if (!closed && !client) void connect();
    }, delay);
    retry.unref();
  };

  return {
    watch(id, onChange) {
      const stop = watchers.add(id, onChange);
      if (!client && !closed) void connect();
      return stop;
    },
    async close() {
      closed = true;
      if (retry) clearTimeout(retry);
      await connecting;
      const current = client;
      client = null;
      if (current) {
        current.removeAllListeners('end');
        await current.end().catch(() => {});
      }
    },
  };
}

export const POLL_INTERVAL_MS = 500;

/**
 * The embedded database's fallback: one query every POLL_INTERVAL_MS for all
 * watched sessions, comparing each row's version (xmin changes with every
 * update, whatever the clock says). It runs on the shared pool outside any
 * transaction, as every embedded query must (DESIGN.md §2). A session is told
 * to look again on its first poll too, so a change between its first read and
 * the first poll is not missed.
 */
export function pollForChanges(db: Database, logger: Logger, intervalMs = POLL_INTERVAL_MS): CheckoutSessionChanges {
  const watchers = new Watchers();
  const versions = new Map<string, string | null>();
  let running: Promise<void> | null = null;
  let closed = false;

  const poll = async () => {
    const ids = watchers.ids();
    if (ids.length === 0) return;
    const rows = await db.prisma.$queryRaw<Array<{ id: string; version: string }>>`
      SELECT "id"::text AS "id", "xmin"::text AS "version" FROM "checkout_sessions" WHERE "id" = ANY(${ids}::uuid[])`;
    const seen = new Map(rows.map((row) => [row.id, row.version]));
    for (const id of ids) {
      const version = seen.get(id) ?? null;
      if (!versions.has(id) || versions.get(id) !== version) {
        versions.set(id, version);
        watchers.notify(id);
      }
    }
    for (const id of versions.keys()) if (!watchers.ids().includes(id)) versions.delete(id);
  };

  const timer = setInterval(() => {
    if (running || closed) return;
    running = poll()
      .catch((error) => logger.warn({ err: error }, 'live updates: polling for session changes failed'))
      .finally(() => (running = null));
  }, intervalMs);
  timer.unref();

  return {
    watch: (id, onChange) => watchers.add(id, onChange),
    async close() {
      closed = true;
      clearInterval(timer);
      await running;
    },
  };
}
