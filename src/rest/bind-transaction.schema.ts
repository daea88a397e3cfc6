import { z } from 'zod';
import { bindTransactionFields, type BindTransactionInput } from '../domain/payments/bind-transaction.schema.js';
import { invalid } from '../domain/shared/errors.js';
import { problemsOf } from '../domain/shared/input-problems.js';
import { isJsonObject } from '../json/decimal-json.js';

/**
 * The bind-tx body (docs/api/rest.md#bind-rules): the domain's fields (src/domain/payments/bind-transaction.schema.ts)
 * with no other property allowed; also the source of its OpenAPI schema.
 */
export const bindTransactionBodySchema = z
  .strictObject({
    tx_hash: bindTransactionFields.tx_hash,
    chain_id: bindTransactionFields.chain_id.describe('Decimal EIP-155 id ("56"); hex "0x38" is accepted'),
    crypto_currency: bindTransactionFields.crypto_currency.describe('Required unless the session already has one'),
    payer_wallet_address: bindTransactionFields.payer_wallet_address,
  })
  .meta({ title: 'BindTransactionRequest' });

/** The body as received once it is a JSON object of the bind fields and nothing else; else `invalid`, every problem. */
export function readBindBody(body: unknown): BindTransactionInput {
  if (!isJsonObject(body)) throw invalid(['body must be a JSON object']);
  const result = bindTransactionBodySchema.safeParse(body);
  if (result.success) return body;
  // Unknown properties are listed first, then the fields' problems in field order.
  const unknown = result.error.issues.filter((issue) => issue.code === 'unrecognized_keys');
  const fields = result.error.issues.filter((issue) => issue.code !== 'unrecognized_keys');
  throw invalid(problemsOf(new z.ZodError([...unknown, ...fields])));
}
