import { z } from 'zod';
import { ASSET_TICKERS, type AssetTicker } from '../shared/assets.js';
import { invalid } from '../shared/errors.js';
import { problemsOf } from '../shared/input-problems.js';
import { normaliseChainId } from '../shared/networks.js';

/**
 * The bind request (docs/api/rest.md#bind-rules): the one source of its rules and messages, checked here for every
 * caller; REST also refuses unknown properties, and OpenAPI documents it from the same fields.
 */

/** The bind request as received; every field is checked by `checkBindInput`. */
export interface BindTransactionInput {
  readonly tx_hash?: unknown;
  readonly chain_id?: unknown;
  readonly crypto_currency?: unknown;
  readonly payer_wallet_address?: unknown;
}

/** A well-formed bind: hash and address in lower case, the chain id in decimal. */
export interface CheckedBind {
  txHash: string;
  chainId: string;
  ticker: AssetTicker | null;
  payerWalletAddress: string | null;
}

const NOT_TEXT = 'must be a string';
// A missing field and a null one read the same: "is required", or nothing for an optional one.
const absent = (value: unknown) => value === undefined || value === null;
const text = z.string({ error: (issue) => (absent(issue.input) ? 'is required' : NOT_TEXT) });
const optional = <T extends z.ZodType>(schema: T) =>
  z.preprocess((value) => (absent(value) ? undefined : value), schema.optional());

const ONE_OF_TICKERS = `must be one of the following values: ${ASSET_TICKERS.join(', ')}`;
const CHAIN_ID_PROBLEM = 'must be an EIP-155 chain id, decimal ("56") or hex ("0x38")';

/** The fields of the bind request (docs/api/rest.md#bind-rules), in the order their problems are listed. */
export const bindTransactionFields = {
  tx_hash: text
    .regex(/^0x[a-fA-F0-9]{64}$/, { error: 'must match ^0x[a-fA-F0-9]{64}$ (0x and 64 hex characters)' })
    .transform((hash) => hash.toLowerCase()),
  chain_id: text.transform((value, context) => {
    const chainId = normaliseChainId(value);
    if (chainId === null) context.issues.push({ code: 'custom', message: CHAIN_ID_PROBLEM, input: value });
    return chainId ?? z.NEVER;
  }),
  crypto_currency: optional(
    z.enum(ASSET_TICKERS, { error: (issue) => (typeof issue.input === 'string' ? ONE_OF_TICKERS : NOT_TEXT) }),
  ),
  payer_wallet_address: optional(
    text
      .regex(/^0x[a-fA-F0-9]{40}$/, { error: 'must match ^0x[a-fA-F0-9]{40}$ (0x and 40 hex characters)' })
      .transform((address) => address.toLowerCase()),
  ),
};

const bindTransactionSchema = z.object(bindTransactionFields);

/** Every problem with the bind fields, named by field (empty when they are well-formed). */
export function bindInputProblems(input: BindTransactionInput): string[] {
  const result = bindTransactionSchema.safeParse(input);
  return result.success ? [] : problemsOf(result.error);
}

/** The checked bind, or `invalid` with every problem. */
export function checkBindInput(input: BindTransactionInput): CheckedBind {
  const result = bindTransactionSchema.safeParse(input);
  if (!result.success) throw invalid(problemsOf(result.error));
  const bind = result.data;
  return {
    txHash: bind.tx_hash,
    chainId: bind.chain_id,
    ticker: bind.crypto_currency ?? null,
    payerWalletAddress: bind.payer_wallet_address ?? null,
  };
}
