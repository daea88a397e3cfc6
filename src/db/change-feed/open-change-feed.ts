import type { Logger } from '../../logging.js';
import type { ChangeFeed } from './change-feed.js';
import { listenForChanges } from './change-feed-listen.js';
import { pollChangeLog } from './change-feed-poll.js';
import type { Database } from '../database.js';

/** LISTEN on PostgreSQL; the change log on the embedded database (src/db/change-feed/change-feed.ts says why). */
export function openChangeFeed(db: Database, connectionString: string | null, logger: Logger): ChangeFeed {
  if (db.kind === 'postgresql' && connectionString) return listenForChanges(connectionString, logger);
  return pollChangeLog(db, logger);
}
