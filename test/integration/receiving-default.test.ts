import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { randomBytes } from 'node:crypto';
import { ensureDepositContracts } from '../../src/chain/sandbox.js';
import { startTestChain, type TestChain } from '../support/chain.js';
import { freePort, parseJsonOutput, runKassaInProcess } from '../support/cli-process.js';
import { createTestDatabase, type TestDatabase } from '../support/databases.js';

/**
 * A new organisation's receiving mode when none is asked for (docs/operations.md#receiving-modes): deposit addresses
 * where the deposit factory is deployed on all its networks (the sandbox always has it), else the shared wallet;
 * `kassa orgs create` says which and why. On real anvils (one with the factory, one without) and PostgreSQL.
 */

let withFactory: TestChain;
let withoutFactory: TestChain;
let database: TestDatabase;
let base: Record<string, string>;

beforeAll(async () => {
  [withFactory, withoutFactory, database] = await Promise.all([
    startTestChain(),
    startTestChain(),
    createTestDatabase(),
  ]);
  await ensureDepositContracts(withFactory.url, withFactory.network);
  base = {
    KASSA_ENV: 'test',
    LOG_LEVEL: 'silent',
    KASSA_DATA_DIR: database.dataDir,
    ...(database.databaseUrl ? { DATABASE_URL: database.databaseUrl } : {}),
  };
  expect((await runKassaInProcess(['migrate'], base)).code).toBe(0);
}, 90_000);

afterAll(async () => {
  await Promise.all([withFactory?.stop(), withoutFactory?.stop()]);
  await database?.drop();
});

const wallet = () => `0x${randomBytes(20).toString('hex')}`;

async function create(env: Record<string, string>, ...extra: string[]) {
  const args = () => ['orgs', 'create', '--name', 'Default', '--wallet', wallet(), ...extra];
  const text = await runKassaInProcess(args(), env);
  const json = await runKassaInProcess([...args(), '--json'], env);
  expect(text.code, text.stderr).toBe(0);
  expect(json.code, json.stderr).toBe(0);
  const line = /^receiving mode: (\S+) \((.*)\)$/m.exec(text.stdout);
  expect(line, text.stdout).not.toBeNull();
  const { receiving_mode } = parseJsonOutput<{ receiving_mode: string }>(json);
  expect(receiving_mode).toBe(line![1]);
  return { mode: line![1], reason: line![2] };
}

describe('kassa orgs create without --receiving', { timeout: 60_000 }, () => {
  it('chooses deposit addresses where the factory is deployed on every network of the organisation', async () => {
    const env = { ...base, KASSA_NETWORKS: 'local', KASSA_RPC_URLS_LOCAL: withFactory.url };
    expect(await create(env)).toEqual({
      mode: 'deposit_addresses',
      reason: 'the deposit factory is deployed on local',
    });
    // Asked for, the shared wallet it is, and the line says so.
    expect(await create(env, '--receiving', 'shared')).toEqual({ mode: 'shared_wallet', reason: 'as asked' });
  });

  it('chooses the shared wallet when one of its networks lacks the factory, and names the command that deploys it', async () => {
    const env = {
      ...base,
      KASSA_NETWORKS: 'local,bsc',
      KASSA_RPC_URLS_LOCAL: withFactory.url,
      KASSA_RPC_URLS_BSC: withoutFactory.url,
    };
    expect(await create(env)).toEqual({
      mode: 'shared_wallet',
      reason: 'the deposit factory is not deployed on bsc (`kassa contracts deploy --network <slug>`)',
    });
    // Its wallet on local only: local's factory is all that counts.
    expect(await create(env, '--network', 'local')).toEqual({
      mode: 'deposit_addresses',
      reason: 'the deposit factory is deployed on local',
    });
  });

  it('chooses the shared wallet when no node answers, except on the sandbox, which always has the factory', async () => {
    const silent = `http://127.0.0.1:${await freePort()}`;
    expect(await create({ ...base, KASSA_NETWORKS: 'local', KASSA_RPC_URLS_LOCAL: silent })).toEqual({
      mode: 'shared_wallet',
      reason: 'no node answered on local to tell whether the factory is there',
    });
    const sandbox = { ...base, KASSA_SANDBOX: 'true', KASSA_NETWORKS: 'local', KASSA_RPC_URLS_LOCAL: silent };
    expect(await create(sandbox)).toEqual({
      mode: 'deposit_addresses',
      reason: 'the deposit factory is deployed on local',
    });
  });
});
