import type { AdapterStatement } from '../database.js';

/** What kassa_create_checkout_session answers for one create (as migration 20261130100000 last wrote it). */
export interface CreateAnswer {
  readonly offsets?: Record<string, number>;
  readonly replay?: { readonly request_hash: string; readonly session_id: string };
  readonly replayed_signature?: true;
  readonly link_unavailable?: true;
  /** Every unique amount of this asset's price is held on one of its wallets: nothing written. */
  readonly amounts_taken?: string;
}

/** Creates in one statement at most; well under the 64 a transaction may hold without slowing snapshots. */
export const MAX_BATCH = 32;

interface Waiting {
  readonly argument: string;
  resolve(answer: CreateAnswer): void;
  reject(error: unknown): void;
}

/**
 * Writes creates in batches (docs/decisions/0021-creates-written-in-batches.md), each judged as if alone; a batch
 * that fails as a whole is retried one create at a time, so each gets its own answer.
 */
export class CreateBatcher {
  private readonly waiting: Waiting[] = [];
  private inFlight = 0;
  /** Statements sent and creates they carried (for tests and the benchmark). */
  readonly sent = { statements: 0, creates: 0 };

  /** `sql` sends the statement (src/db/database.ts: through the Prisma client's driver adapter). */
  constructor(
    private readonly sql: AdapterStatement,
    private readonly maxInFlight = 1,
  ) {}

  /** `argument` is one create's JSON (kassa_create_checkout_session's parameter). */
  write(argument: string): Promise<CreateAnswer> {
    return new Promise((resolve, reject) => {
      this.waiting.push({ argument, resolve, reject });
      this.next();
    });
  }

  private next(): void {
    while (this.inFlight < this.maxInFlight && this.waiting.length > 0) {
      const batch = this.waiting.splice(0, MAX_BATCH);
      this.inFlight += 1;
      void this.send(batch).finally(() => {
        this.inFlight -= 1;
        this.next();
      });
    }
  }

  private async send(batch: readonly Waiting[]): Promise<void> {
    try {
      const answers = await this.statement(batch);
      batch.forEach((create, index) => create.resolve(answers[index]!));
    } catch (error) {
      if (batch.length === 1) return batch[0]!.reject(error);
      for (const create of batch) {
        try {
          create.resolve((await this.statement([create]))[0]!);
        } catch (alone) {
          create.reject(alone);
        }
      }
    }
  }

  private async statement(batch: readonly Waiting[]): Promise<CreateAnswer[]> {
    this.sent.statements += 1;
    this.sent.creates += batch.length;
    const argument = batch.length === 1 ? `[${batch[0]!.argument}]` : `[${batch.map((c) => c.argument).join(',')}]`;
    const rows = await this.sql('SELECT kassa_create_checkout_sessions($1::jsonb)', [argument]);
    const text = rows[0]?.[0];
    const answers = typeof text === 'string' ? (JSON.parse(text) as CreateAnswer[]) : undefined;
    if (!Array.isArray(answers) || answers.length !== batch.length)
      throw new Error(`kassa_create_checkout_sessions answered ${answers?.length} creates for ${batch.length}`);
    return answers;
  }
}
