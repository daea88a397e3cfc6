import type { PGlite } from '@electric-sql/pglite';
import type { PGLiteSocketServer } from '@electric-sql/pglite-socket';

/**
 * PGlite is one session shared by every socket connection, and pglite-socket interleaves messages outside transactions
 * (electric-sql/pglite#1046): so one client holds it from a Parse/Bind/… to its Sync and while its transaction is open.
 */
interface QueuedMessage {
  handlerId: number;
  message: Uint8Array;
  onData: (data: Uint8Array) => void;
  resolve: (bytes: number) => void;
  reject: (error: unknown) => void;
}

/** Message types (first byte) that leave an extended-protocol exchange unfinished until Sync. */
const EXCHANGE_MESSAGES = new Set(['P', 'B', 'D', 'E', 'C', 'H'].map((type) => type.charCodeAt(0)));

export class OrderedQueryQueue {
  private readonly queue: QueuedMessage[] = [];
  private processing = false;
  /** The client that holds the session (mid-exchange or in a transaction), or null. */
  private owner: number | null = null;

  constructor(private readonly db: PGlite) {}

  enqueue(handlerId: number, message: Uint8Array, onData: (data: Uint8Array) => void): Promise<number> {
    return new Promise((resolve, reject) => {
      this.queue.push({ handlerId, message, onData, resolve, reject });
      void this.processQueue();
    });
  }

  async processQueue(): Promise<void> {
    if (this.processing) return;
    this.processing = true;
    try {
      for (;;) {
        const index = this.owner === null ? 0 : this.queue.findIndex((item) => item.handlerId === this.owner);
        if (index < 0 || index >= this.queue.length) return;
        const [item] = this.queue.splice(index, 1) as [QueuedMessage];
        let bytes = 0;
        try {
          await this.db.runExclusive(() =>
            this.db.execProtocolRawStream(item.message, {
              onRawData: (data: Uint8Array) => {
                bytes += data.length;
                item.onData(data);
              },
            }),
          );
        } catch (error) {
          this.owner = this.holder(item);
          item.reject(error);
          continue;
        }
        this.owner = this.holder(item);
        item.resolve(bytes);
      }
    } finally {
      this.processing = false;
    }
  }

  /** Who holds the session after `item` ran: its client while its exchange or transaction is open. */
  private holder(item: QueuedMessage): number | null {
    const midExchange = EXCHANGE_MESSAGES.has(item.message[0] ?? 0);
    return midExchange || this.db.isInTransaction() ? item.handlerId : null;
  }

  getQueueLength(): number {
    return this.queue.length;
  }

  /** A client went away: drop what it had queued. */
  clearQueueForHandler(handlerId: number): void {
    for (let i = this.queue.length - 1; i >= 0; i--) {
      const item = this.queue[i]!;
      if (item.handlerId !== handlerId) continue;
      this.queue.splice(i, 1);
      item.reject(new Error('Handler disconnected'));
    }
  }

  /** A client went away holding the session: roll back what it left open and serve the others. */
  async clearTransactionIfNeeded(handlerId: number): Promise<void> {
    if (this.owner !== handlerId) return;
    this.owner = null;
    if (this.db.isInTransaction()) await this.db.exec('ROLLBACK');
    await this.processQueue();
  }
}

/** Puts the ordered queue in place of pglite-socket's own; call before `server.start()`. */
export function installOrderedQueue(server: PGLiteSocketServer, db: PGlite): void {
  (server as unknown as { queryQueue: OrderedQueryQueue }).queryQueue = new OrderedQueryQueue(db);
}
