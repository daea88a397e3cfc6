import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { PACKAGE_ROOT } from '../../src/config.js';
import { DEFAULT_REASON, DomainError, conflict, type DomainErrorCode } from '../../src/domain/shared/errors.js';
import { REASON_CODE_LIST, REASON_CODES, REJECTION_WORDS } from '../../src/domain/shared/reason-codes.js';
import { toGraphqlError } from '../../src/graphql/errors.js';
import { restErrorAnswer, STATUS_BY_CODE } from '../../src/http/error-handler.js';
import { errorBodySchema, HttpError } from '../../src/http/http-error.js';

/** The rows of docs/api/rest.md's "Error codes" table: code and status. */
function documentedCodes(): Array<{ code: string; status: number }> {
  const doc = readFileSync(path.join(PACKAGE_ROOT, 'docs/api/rest.md'), 'utf8');
  const section = doc.split('\n## Error codes\n')[1]!.split('\n## ')[0]!;
  return [...section.matchAll(/^\| `([a-z_]+)` \| (\d{3}) \|/gm)].map((row) => ({
    code: row[1]!,
    status: Number(row[2]),
  }));
}

describe('reason codes (docs/api/rest.md#error-codes)', () => {
  it('the docs table lists exactly the enumeration, in its order', () => {
    expect(documentedCodes().map((row) => row.code)).toEqual([...REASON_CODE_LIST]);
  });

  it('every refusal carries a documented code: a kind without its own code answers its default, at its status', () => {
    const documented = new Map(documentedCodes().map((row) => [row.code, row.status]));
    for (const kind of Object.keys(STATUS_BY_CODE) as DomainErrorCode[]) {
      const error = new DomainError(kind, 'x');
      expect(error.reason).toBe(DEFAULT_REASON[kind]);
      expect(documented.get(error.reason), kind).toBe(STATUS_BY_CODE[kind]);
    }
    for (const code of REASON_CODE_LIST) expect(REASON_CODES[code].length).toBeGreaterThan(0);
  });

  it('REST answers the code in the body; GraphQL the same value in extensions.reason beside extensions.code', () => {
    const refusal = conflict('Transaction 0xab is too small', 'bind_too_small');
    const rest = restErrorAnswer(refusal);
    expect(rest.body).toEqual({
      statusCode: 409,
      message: 'Transaction 0xab is too small',
      error: 'Conflict',
      code: 'bind_too_small',
    });
    expect(errorBodySchema.safeParse(rest.body).success).toBe(true);
    expect(toGraphqlError(refusal).extensions).toMatchObject({ code: 'CONFLICT', reason: 'bind_too_small' });
    // Transport refusals get their status's code; an unexpected error says only internal_error.
    expect(restErrorAnswer(new HttpError(415, 'Content-Type must be application/json')).body.code).toBe(
      'unsupported_media_type',
    );
    expect(restErrorAnswer(new Error('boom')).body.code).toBe('internal_error');
  });

  it('rows rejected before reason_code existed were coded by the words REJECTION_WORDS renders', () => {
    const sql = readFileSync(
      path.join(PACKAGE_ROOT, 'prisma/migrations/20261205150000_bound_transaction_reason_code/migration.sql'),
      'utf8',
    );
    const backfilled = Object.fromEntries(
      [...sql.matchAll(/WHEN "reason" LIKE '([^%']+)%' THEN '([a-z_]+)'/g)].map((match) => [match[2], match[1]]),
    );
    expect(backfilled).toEqual(REJECTION_WORDS);
  });
});
