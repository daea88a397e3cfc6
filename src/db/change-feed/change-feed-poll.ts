import type { Database } from '../database.js';
import type { Logger } from '../../logging.js';
import { ChangeListeners, type ChangeFeed } from './change-feed.js';

/** How often the embedded server reads the change log. */
export const CHANGE_LOG_POLL_MS = 100;
/** Entries older than this are deleted from the change log (every reader has long read them). */
const CHANGE_LOG_KEEP_MS = 60_000;

/**
 * The embedded server's feed: reads `kassa_change_log` past its last entry every CHANGE_LOG_POLL_MS, outside any
 * transaction (docs/decisions/0002); live from the first successful read until a read fails.
 */
export function pollChangeLog(db: Database, logger: Logger, intervalMs = CHANGE_LOG_POLL_MS): ChangeFeed {
  const listeners = new ChangeListeners();
  let lastSeq: bigint | null = null;
  let live = false;
  let closed = false;
  let running: Promise<void> | null = null;
  let prunedAt = 0;

  const poll = async () => {
    if (lastSeq === null) {
      const [row] = await db.prisma.$queryRaw<Array<{ seq: bigint | null }>>`
        SELECT max(seq) AS seq FROM kassa_change_log`;
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
      const before = new Date(Date.now() - CHANGE_LOG_KEEP_MS);
      await db.prisma.$executeRaw`DELETE FROM kassa_change_log WHERE created_at < ${before}`;
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
