import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { demoFile } from '../../src/demo.js';
import { createApiKey, revokeApiKey, rotateApiKey } from '../../src/domain/organisations/api-keys.js';
import { DomainError } from '../../src/domain/shared/errors.js';
import { createLogger } from '../../src/logging.js';
import { openRuntime } from '../../src/runtime.js';
import { assertCliBuilt, runKassa } from '../support/cli-process.js';
import { startTestKassa, TEST_ENV, type TestKassa } from '../support/kassa.js';
import { createMerchant } from '../factories/merchant.js';

const MASTER_KEY = randomBytes(32).toString('hex');
let kassa: TestKassa;

beforeAll(async () => {
  kassa = await startTestKassa({ env: { KASSA_MASTER_KEY: MASTER_KEY } });
});
afterAll(() => kassa?.close());

describe('key rotation', () => {
  it('refuses to rotate a revoked key (409-class conflict) instead of promising it a grace period', async () => {
    const merchant = await createMerchant(kassa.ctx);
    await revokeApiKey(kassa.ctx, merchant.apiKey);
    await expect(rotateApiKey(kassa.ctx, merchant.apiKey, 60)).rejects.toMatchObject({
      code: 'conflict',
      message: `API key ${merchant.apiKey} is revoked; issue a new one with \`kassa keys create\``,
    });
  });

  it('refuses to rotate a key that already expired through an earlier rotation', async () => {
    const merchant = await createMerchant(kassa.ctx);
    await rotateApiKey(kassa.ctx, merchant.apiKey, 0);
    await expect(rotateApiKey(kassa.ctx, merchant.apiKey, 60)).rejects.toMatchObject({ code: 'conflict' });
  });

  // Found by an attacker-minded review: a key in its grace counted as active, and a second rotation gave it a new grace
  // (days, by mistake) and a second successor.
  it('refuses to rotate a key in its grace again; two rotations at once issue one successor', async () => {
    const merchant = await createMerchant(kassa.ctx);
    const first = await rotateApiKey(kassa.ctx, merchant.apiKey, 1);
    await expect(rotateApiKey(kassa.ctx, merchant.apiKey, 10_000)).rejects.toMatchObject({
      code: 'conflict',
      message: `API key ${merchant.apiKey} was already rotated; it stops working at ${first.oldKeyExpiresAt.toISOString()}: rotate the key that replaced it`,
    });
    const racing = await createMerchant(kassa.ctx);
    const outcomes = await Promise.allSettled([
      rotateApiKey(kassa.ctx, racing.apiKey, 5),
      rotateApiKey(kassa.ctx, racing.apiKey, 5),
    ]);
    expect(outcomes.map((outcome) => outcome.status).sort()).toEqual(['fulfilled', 'rejected']);
    const keys = await kassa.ctx.store.apiKeys.listForOrganisation(racing.organisationId);
    expect(keys).toHaveLength(2);
  });
});

describe('master key check at start', () => {
  it('a runtime with another KASSA_MASTER_KEY than the stored secrets were sealed with refuses to start', async () => {
    await createApiKey(kassa.ctx, (await createMerchant(kassa.ctx)).organisationId);
    const config = loadConfig({
      ...TEST_ENV,
      DATABASE_URL: kassa.database.databaseUrl ?? undefined,
      KASSA_DATA_DIR: kassa.database.dataDir,
      KASSA_MASTER_KEY: randomBytes(32).toString('hex'),
    });
    const failure = await openRuntime(config, createLogger('silent'), 'cli').then(
      async (runtime) => {
        await runtime.close();
        return null;
      },
      (error: unknown) => error,
    );
    expect(failure).toBeInstanceOf(DomainError);
    expect((failure as DomainError).message).toMatch(
      /^KASSA_MASTER_KEY does not decrypt the API secrets stored in this database/,
    );
  });

  it('the right key starts', async () => {
    const config = loadConfig({
      ...TEST_ENV,
      DATABASE_URL: kassa.database.databaseUrl ?? undefined,
      KASSA_DATA_DIR: kassa.database.dataDir,
      KASSA_MASTER_KEY: MASTER_KEY,
    });
    const runtime = await openRuntime(config, createLogger('silent'), 'cli');
    await runtime.close();
  });
});

describe('demo credentials', () => {
  it('are kept per database, so a PostgreSQL run never overwrites the embedded demo key', () => {
    const base = { ...TEST_ENV, KASSA_DATA_DIR: kassa.database.dataDir };
    const embedded = demoFile(loadConfig(base));
    const first = demoFile(loadConfig({ ...base, DATABASE_URL: 'postgresql://127.0.0.1/one' }));
    const second = demoFile(loadConfig({ ...base, DATABASE_URL: 'postgresql://127.0.0.1/two' }));
    expect(embedded.endsWith('/demo.json')).toBe(true);
    expect(new Set([embedded, first, second]).size).toBe(3);
  });
});

describe('CLI exit codes', () => {
  it('a usage error (missing required option) exits 2; --help exits 0', async () => {
    assertCliBuilt();
    const env = {
      ...TEST_ENV,
      KASSA_DATA_DIR: kassa.database.dataDir,
      DATABASE_URL: kassa.database.databaseUrl ?? undefined,
    };
    const missing = await runKassa(['keys', 'create'], env);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toMatch(/required option '--org <id>' not specified/);
    const rotate = await runKassa(['keys', 'rotate', 'pk_x', '--grace-minutes', '-5'], env);
    expect(rotate.code).toBe(2);
    expect(rotate.stderr).toBe('kassa: --grace-minutes must be a whole number from 0 to 525600\n');
    expect((await runKassa(['--help'], env)).code).toBe(0);
  });
});
