import { randomBytes, randomUUID } from 'node:crypto';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../support/databases.js';
import { hasStackTrace, parseJsonOutput, runKassaInProcess as kassa } from '../support/cli-process.js';

/**
 * `kassa users passkeys list|remove` (docs/dashboard.md#passkeys): the operator removes a person's lost passkey, on a
 * PostgreSQL database of this file's own; audited without a user.
 */

let database: TestDatabase;
let pool: pg.Pool;
let env: Record<string, string>;
let org: string;
let userId: string;
const EMAIL = 'lost@cli-passkeys.example';

beforeAll(async () => {
  database = await createTestDatabase('postgres');
  pool = new pg.Pool({ connectionString: database.databaseUrl!, max: 1 });
  env = {
    KASSA_ENV: 'test',
    LOG_LEVEL: 'silent',
    KASSA_NETWORKS: 'local',
    DATABASE_URL: database.databaseUrl!,
    KASSA_DATA_DIR: database.dataDir,
    CHECKOUT_BASE_URL: 'https://pay.example.test',
  };
  org = parseJsonOutput<{ id: string }>(
    await kassa(
      ['orgs', 'create', '--name', 'Passkey CLI', '--wallet', `0x${randomBytes(20).toString('hex')}`, '--json'],
      env,
    ),
  ).id;
  userId = parseJsonOutput<{ user_id: string }>(
    await kassa(['users', 'invite', '--org', org, '--email', EMAIL, '--role', 'admin', '--json'], env),
  ).user_id;
});

afterAll(async () => {
  await pool?.end();
  await database?.drop();
});

describe('kassa users passkeys', () => {
  it('lists an account’s passkeys and removes a lost one; audited; an unknown id is not found', async () => {
    const id = randomUUID();
    await pool.query(
      `INSERT INTO dashboard_passkeys (id, user_id, credential_id, public_key, name) VALUES ($1, $2, $3, $4, $5)`,
      [id, userId, randomBytes(16).toString('base64url'), randomBytes(77), 'Old phone'],
    );
    const listed = parseJsonOutput<Array<Record<string, unknown>>>(
      await kassa(['users', 'passkeys', 'list', EMAIL, '--json'], env),
    );
    expect(listed).toEqual([expect.objectContaining({ id, name: 'Old phone', last_used_at: null })]);
    const text = await kassa(['users', 'passkeys', 'list', userId], env);
    expect(text.stdout).toContain(`Old phone`);
    expect(text.stdout).toContain(id);

    const removed = await kassa(['users', 'passkeys', 'remove', id], env);
    expect(removed.code, removed.stderr).toBe(0);
    expect(removed.stdout).toContain(`removed passkey Old phone (${id})`);
    expect((await kassa(['users', 'passkeys', 'list', EMAIL], env)).stdout).toContain(`${EMAIL} has no passkey`);
    const audit = await pool.query(
      `SELECT user_id, details FROM dashboard_audit_log WHERE action = 'user.passkey_removed' AND organisation_id = $1`,
      [org],
    );
    expect(audit.rows).toEqual([{ user_id: null, details: { passkey_id: id, name: 'Old phone', account_id: userId } }]);

    const again = await kassa(['users', 'passkeys', 'remove', id], env);
    expect(again.code).not.toBe(0);
    expect(again.stderr).toContain(`Passkey ${id} not found`);
    expect(hasStackTrace(again.stderr)).toBe(false);
    const nobody = await kassa(['users', 'passkeys', 'list', 'nobody@cli-passkeys.example'], env);
    expect(nobody.code).not.toBe(0);
    expect(nobody.stderr).toContain('Dashboard user nobody@cli-passkeys.example not found');
  });
});
