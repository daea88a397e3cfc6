import pg from 'pg';
import type { Database } from './database.js';
import type { Logger } from '../logging.js';

/**
 * Tells this process what changed in the database, whoever changed it (this
 * instance, another instance, the CLI): migration 20261123140000_hot_paths
 * announces every change of a session row, of an API key's authentication
 * fields and of an organisation or its wallets, after it commits.
 *
 * PostgreSQL: one LISTEN connection per process. The embedded database: its
 * socket connections do not share notifications, so the server polls
 * `kassa_change_log` instead (the owner turns the log on, src/db/embedded.ts).
 *
 * An announcement says only "look again". While the feed is not `live` (not yet
 * connected, or the connection was lost) changes may go unheard: caches must not
 * serve, and every `onReset` listener is called when that starts and when it ends.
 */
export interface ChangeFeed {
  /** True while every change is being heard. */
  readonly live: boolean;
  subscribe(channel: ChangeChannel, listener: (key: string) => void): () => void;
  /** Called whenever changes may have been missed: drop whatever was learnt from the database. */
  onReset(listener: () => void): () => void;
  /** Calls `onChange` whenever session `id` may have changed (and on every reset), until the returned function is called. */
  watch(id: string, onChange: () => void): () => void;
  close(): Promise<void>;
}

export const CHANGE_CHANNELS = ['kassa_checkout_session', 'kassa_api_key', 'kassa_organisation'] as const;
export type ChangeChannel = (typeof CHANGE_CHANNELS)[number];

/** How often the embedded server reads the change log. */
export const CHANGE_LOG_POLL_MS = 100;
/** Entries older than this are deleted from the change log (every reader has long read them). */
const CHANGE_LOG_KEEP_MS = 60_000;
const RECONNECT_MS = [100, 500, 1000, 2000, 5000];
/**
 * The LISTEN connection is asked `SELECT 1` this often; no answer within the same time
 * counts as lost. A connection that died without closing (a network partition) stops
 * caches serving within twice this.
 */
export const HEARTBEAT_MS = 5_000;

/** LISTEN on PostgreSQL; the change log on the embedded database. */
export function openChangeFeed(db: Database, connectionString: string | null, logger: Logger): ChangeFeed {
  if (db.kind === 'postgresql' && connectionString) return listenForChanges(connectionString, logger);
  return pollChangeLog(db, logger);
}

/** A feed that hears nothing: caches never serve, watchers are never told (CLI commands). */
export const SILENT_FEED: ChangeFeed = {
  live: false,
  subscribe: () => () => {},
  onReset: () => () => {},
  watch: () => () => {},
  close: async () => {},
};

/** Listeners per channel, reset listeners and session watchers, shared by both strategies. */
class Listeners {
  private readonly channels = new Map<string, Set<(key: string) => void>>();
  private readonly resets = new Set<() => void>();
  private readonly watchers = new Map<string, Set<() => void>>();

  subscribe(channel: string, listener: (key: string) => void): () => void {
    let set = this.channels.get(channel);
    if (!set) this.channels.set(channel, (set = new Set()));
    set.add(listener);
    return () => set.delete(listener);
  }

  onReset(listener: () => void): () => void {
    this.resets.add(listener);
    return () => this.resets.delete(listener);
  }

  watch(id: string, onChange: () => void): () => void {
    let set = this.watchers.get(id);
    if (!set) this.watchers.set(id, (set = new Set()));
    set.add(onChange);
    return () => {
      set.delete(onChange);
      if (set.size === 0 && this.watchers.get(id) === set) this.watchers.delete(id);
    };
  }

  announce(channel: string, key: string): void {
    for (const listener of [...(this.channels.get(channel) ?? [])]) listener(key);
    if (channel === 'kassa_checkout_session') for (const onChange of [...(this.watchers.get(key) ?? [])]) onChange();
  }

  reset(): void {
    for (const listener of [...this.resets]) listener();
    for (const set of [...this.watchers.values()]) for (const onChange of [...set]) onChange();
  }
}

/**
 * One dedicated LISTEN connection, opened at once and re-opened after any error.
 * Live from the moment LISTEN took effect on every channel until the connection is lost.
 */
export function listenForChanges(connectionString: string, logger: Logger): ChangeFeed {
  const listeners = new Listeners();
  let client: pg.Client | null = null;
  let connecting: Promise<void> | null = null;
  let attempt = 0;
  let retry: NodeJS.Timeout | null = null;
  let closed = false;
  let live = false;

  const connect = (): Promise<void> =>
    (connecting ??= (async () => {
      const next = new pg.Client({ connectionString, application_name: 'kassa-changes', keepAlive: true });
      next.on('notification', (message) => {
        if (message.payload) listeners.announce(message.channel, message.payload);
      });
      next.on('error', (error) => lost(next, error));
      next.on('end', () => lost(next, null));
      try {
        await next.connect();
        await next.query(CHANGE_CHANNELS.map((channel) => `LISTEN ${channel}`).join('; '));
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
      live = true;
      heartbeat(next);
      // Whatever changed before LISTEN took effect (first connect or reconnect) was not heard.
      listeners.reset();
    })());

  const heartbeat = (which: pg.Client) => {
    const timer = setInterval(() => {
      if (client !== which) return clearInterval(timer);
      const timeout = setTimeout(() => lost(which, new Error(`no answer to a heartbeat within ${HEARTBEAT_MS} ms`)), HEARTBEAT_MS);
      timeout.unref();
      which.query('SELECT 1').then(
        () => clearTimeout(timeout),
        (error: unknown) => {
          clearTimeout(timeout);
          lost(which, error);
        },
      );
    }, HEARTBEAT_MS);
    timer.unref();
  };

  const lost = (which: pg.Client, error: unknown) => {
    which.removeAllListeners('end');
    which.end().catch(() => {});
    if (client === which) {
      client = null;
      live = false;
      listeners.reset();
    }
    if (closed || retry) return;
    if (error) logger.warn({ err: error }, 'change feed: LISTEN connection lost; reconnecting');
    const delay = RECONNECT_MS[Math.min(attempt++, RECONNECT_MS.length - 1)];
    retry = setTimeout(() => {
      retry = null;
      if (!closed && !client) void connect();
    }, delay);
    retry.unref();
  };

  void connect();
  return {
    get live() {
      return live;
    },
    subscribe: (channel, listener) => listeners.subscribe(channel, listener),
    onReset: (listener) => listeners.onReset(listener),
    watch: (id, onChange) => listeners.watch(id, onChange),
    async close() {
      closed = true;
      live = false;
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

/**
 * The embedded server's feed: reads `kassa_change_log` past the last entry it read, every
 * CHANGE_LOG_POLL_MS, on the shared pool outside any transaction (DESIGN.md §2). Live from
 * the first successful read until a read fails.
 */
export function pollChangeLog(db: Database, logger: Logger, intervalMs = CHANGE_LOG_POLL_MS): ChangeFeed {
  const listeners = new Listeners();
  let lastSeq: bigint | null = null;
  let live = false;
  let closed = false;
  let running: Promise<void> | null = null;
  let prunedAt = 0;

  const poll = async () => {
    if (lastSeq === null) {
      const [row] = await db.prisma.$queryRaw<Array<{ seq: bigint | null }>>`SELECT max(seq) AS seq FROM kassa_change_log`;
      lastSeq = row?.seq ?? 0n;
      live = true;
      listeners.reset();
      return;
    }
    const rows = await db.prisma.$queryRaw<Array<{ seq: bigint; channel: string; key: string }>>`
      SELECT seq, channel, key FROM kassa_change_log WHERE seq > ${lastSeq} ORDER BY seq LIMIT 5000`;
    for (const row of rows) {
      lastSeq = row.seq;
      listeners.announce(row.channel, row.key);
    }
    if (Date.now() - prunedAt > CHANGE_LOG_KEEP_MS) {
      prunedAt = Date.now();
      await db.prisma.$executeRaw`DELETE FROM kassa_change_log WHERE created_at < ${new Date(Date.now() - CHANGE_LOG_KEEP_MS)}`;
    }
  };

  const tick = () => {
    if (running || closed) return;
    running = poll()
      .catch((error) => {
        logger.warn({ err: error }, 'change feed: reading the change log failed');
        if (live) {
          live = false;
          lastSeq = null;
          listeners.reset();
        }
      })
      .finally(() => (running = null));
  };
  const timer = setInterval(tick, intervalMs);
  timer.unref();
  tick();

  return {
    get live() {
      return live;
    },
    subscribe: (channel, listener) => listeners.subscribe(channel, listener),
    onReset: (listener) => listeners.onReset(listener),
    watch: (id, onChange) => listeners.watch(id, onChange),
    async close() {
      closed = true;
      live = false;
      clearInterval(timer);
      await running;
    },
  };
}
