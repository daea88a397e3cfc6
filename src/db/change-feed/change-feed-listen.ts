import pg from 'pg';
import type { Logger } from '../../logging.js';
import { CHANGE_CHANNELS, ChangeListeners, type ChangeFeed } from './change-feed.js';

const RECONNECT_MS = [100, 500, 1000, 2000, 5000];
/**
 * The LISTEN connection is asked `SELECT 1` this often, and no answer within the same time counts as lost, so a
 * connection dead without closing stops caches serving within twice this.
 */
export const HEARTBEAT_MS = 5_000;

/**
 * One dedicated LISTEN connection, opened at once and re-opened after any error.
 * Live from the moment LISTEN took effect on every channel until the connection is lost.
 */
export function listenForChanges(connectionString: string, logger: Logger): ChangeFeed {
  const listeners = new ChangeListeners();
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
      const silent = () => lost(which, new Error(`no answer to a heartbeat within ${HEARTBEAT_MS} ms`));
      const timeout = setTimeout(silent, HEARTBEAT_MS);
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
