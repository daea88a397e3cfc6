import type { AdapterStatement } from '../database.js';
import { StatementBatches } from './statement-batches.js';

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

/**
 * Writes creates in batches (docs/decisions/0021-creates-written-in-batches.md), each judged as if alone; a batch
 * that fails as a whole is retried one create at a time, so each gets its own answer.
 */
export class CreateBatcher {
  private readonly batches: StatementBatches<CreateAnswer>;

  /** `sql` sends the statement (src/db/database.ts: through the Prisma client's driver adapter). */
  constructor(sql: AdapterStatement, maxInFlight = 1) {
    this.batches = new StatementBatches((batch) => createStatement(sql, batch), MAX_BATCH, maxInFlight);
  }

  /** Statements sent and creates they carried (for tests and the benchmark). */
  get sent(): { statements: number; creates: number } {
    return { statements: this.batches.sent.statements, creates: this.batches.sent.calls };
  }

  /** `argument` is one create's JSON (kassa_create_checkout_session's parameter). */
  write(argument: string): Promise<CreateAnswer> {
    return this.batches.call(argument);
  }
}

async function createStatement(sql: AdapterStatement, batch: readonly string[]): Promise<CreateAnswer[]> {
  const rows = await sql('SELECT kassa_create_checkout_sessions($1::jsonb)', [`[${batch.join(',')}]`]);
  const text = rows[0]?.[0];
  const answers = typeof text === 'string' ? (JSON.parse(text) as CreateAnswer[]) : undefined;
  if (!Array.isArray(answers) || answers.length !== batch.length)
    throw new Error(`kassa_create_checkout_sessions answered ${answers?.length} creates for ${batch.length}`);
  return answers;
}
