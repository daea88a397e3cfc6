import type { EnvReader } from './env-reader.js';
import { UNIQUE_AMOUNT_MAX_STEPS } from '../domain/rates/quotes.js';

/** Payment rules an operator may tune (docs/payment-rules.md). */
export interface PaymentsConfig {
  /** How long a quote is honoured; after it an unpaid session is re-priced. */
  readonly quoteTtlMinutes: number;
  /** How often an instance looks for sessions whose quote has expired. */
  readonly requoteSweepSeconds: number;
  /** How long a bind waits for a node to say whether it knows the transaction. */
  readonly bindLookupTimeoutMs: number;
  /** How many unique amounts one total may take per asset and wallet (docs/payment-rules.md, rule 4). */
  readonly uniqueAmountSteps: number;
}

export function readPaymentsConfig(read: EnvReader): PaymentsConfig {
  return {
    quoteTtlMinutes: read.integer('KASSA_QUOTE_TTL_MINUTES', 30, 1, 10080),
    requoteSweepSeconds: read.integer('KASSA_REQUOTE_SWEEP_SECONDS', 30, 1, 3600),
    bindLookupTimeoutMs: read.integer('KASSA_BIND_LOOKUP_TIMEOUT_MS', 3000, 100, 60_000),
    uniqueAmountSteps: read.integer('KASSA_UNIQUE_AMOUNT_STEPS', UNIQUE_AMOUNT_MAX_STEPS, 1, 1_000),
  };
}
