import { createCipheriv, randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { DomainError } from '../../src/domain/shared/errors.js';
import { keyId, openSecret } from '../../src/domain/shared/secret-box.js';
import { createWebhookEndpoint, rotateWebhookSecret } from '../../src/domain/webhooks/webhook-endpoints.js';
import { activeSecrets } from '../../src/domain/webhooks/webhook-secrets.js';
import { createLogger } from '../../src/logging.js';
import { openRuntime } from '../../src/runtime.js';
import { createMerchant, type TestMerchant } from '../factories/merchant.js';
import { checkoutRequest } from '../factories/checkout-request.js';
import { createTestDatabase, type TestDatabase } from '../support/databases.js';
import { parseJsonOutput, runKassaInProcess } from '../support/cli-process.js';
import { startTestKassa, TEST_ENV, type TestKassa } from '../support/kassa.js';
import { postCreate } from '../support/rest-kassa.js';

/**
 * Master-key rotation on a real database (docs/operations.md#running-in-production): secrets sealed under
 * key A (and one in the v1 format of before key ids), Kassa moved to key B with A as previous,
 * `kassa keys rotate-master`, then B alone. And a ciphertext copied onto another row.
 */

const A = randomBytes(32);
const B = randomBytes(32);
let database: TestDatabase;
let merchant: TestMerchant;
let legacy: TestMerchant;
let endpointId: string;
let webhookSecrets: string[];
let otherEndpointId = '';

/** Exactly what Kassa wrote before key ids (format v1). */
function sealV1(plaintext: string, key: Buffer): string {
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', key, iv);
  const ciphertext = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
  return ['v1', ...[iv, cipher.getAuthTag(), ciphertext].map((part) => part.toString('base64url'))].join('.');
}

const hex = (key: Buffer) => key.toString('hex');
const cliEnv = (keys: Record<string, string>) => ({
  ...TEST_ENV,
  DATABASE_URL: database.databaseUrl!,
  KASSA_DATA_DIR: database.dataDir,
  ...keys,
});

async function withKassa<T>(keys: Record<string, string>, work: (kassa: TestKassa) => Promise<T>): Promise<T> {
  const kassa = await startTestKassa({ database, env: keys });
  try {
    return await work(kassa);
  } finally {
    await kassa.close();
  }
}

async function storedCiphertexts(kassa: TestKassa): Promise<string[]> {
  const rows = await kassa.runtime.db.prisma.$queryRaw<Array<{ sealed: string }>>`
    SELECT secret_ciphertext AS sealed FROM api_keys
    UNION ALL SELECT secret_ciphertext FROM webhook_endpoints
    UNION ALL SELECT previous_secret_ciphertext FROM webhook_endpoints WHERE previous_secret_ciphertext IS NOT NULL`;
  return rows.map((row) => row.sealed);
}

beforeAll(async () => {
  database = await createTestDatabase('postgres');
  await withKassa({ KASSA_MASTER_KEY: hex(A) }, async (kassa) => {
    merchant = await createMerchant(kassa.ctx);
    legacy = await createMerchant(kassa.ctx);
    // A key row as Kassa stored it before key ids: the v1 format, under A.
    await kassa.runtime.db.prisma.apiKey.update({
      where: { publicKey: legacy.apiKey },
      data: { secretCiphertext: sealV1(legacy.apiSecret, A) },
    });
    const { endpoint, secret } = await createWebhookEndpoint(kassa.ctx, merchant.organisationId, {
      url: 'https://93.184.215.14/hooks',
    });
    const rotated = await rotateWebhookSecret(kassa.ctx, null, endpoint.id);
    endpointId = endpoint.id;
    webhookSecrets = [rotated.secret, secret];
  });
});

afterAll(() => database?.drop());

describe('rotating the master key from A to B', () => {
  it('B alone refuses to start: the stored secrets are under A', async () => {
    const config = loadConfig(cliEnv({ KASSA_MASTER_KEY: hex(B) }));
    const failure = await openRuntime(config, createLogger('silent'), 'cli').then(
      (runtime) => runtime.close(),
      (error: unknown) => error,
    );
    expect(failure).toBeInstanceOf(DomainError);
    expect((failure as Error).message).toMatch(
      /KASSA_MASTER_KEY does not decrypt the API secrets .*KASSA_MASTER_KEY_PREVIOUS/,
    );
  });

  it('B with A as previous serves: signed calls and webhook signatures work before anything is re-sealed', async () => {
    await withKassa(
      { KASSA_MASTER_KEY: hex(B), KASSA_MASTER_KEY_PREVIOUS: `${hex(randomBytes(32))},${hex(A)}` },
      async (kassa) => {
        expect((await postCreate(kassa, merchant, checkoutRequest())).status).toBe(201);
        expect((await postCreate(kassa, legacy, checkoutRequest())).status).toBe(201);
        const endpoint = (await kassa.ctx.store.webhooks.findEndpoint(endpointId))!;
        expect(activeSecrets(kassa.ctx, endpoint, new Date())).toEqual(webhookSecrets);
      },
    );
  });

  it('with KASSA_SECRETS_V1=refuse, a database that still holds v1 secrets refuses to start (rotate-master too), naming what to do', async () => {
    const config = loadConfig(
      cliEnv({ KASSA_MASTER_KEY: hex(B), KASSA_MASTER_KEY_PREVIOUS: hex(A), KASSA_SECRETS_V1: 'refuse' }),
    );
    const failure = await openRuntime(config, createLogger('silent'), 'cli').then(
      (runtime) => runtime.close(),
      (error: unknown) => error,
    );
    expect(failure).toBeInstanceOf(DomainError);
    const message =
      'KASSA_SECRETS_V1=refuse, but 1 stored secret is still in the v1 format (no key id, not bound to its row): ' +
      're-seal it with `kassa keys rotate-master` under KASSA_SECRETS_V1=accept first';
    expect((failure as Error).message).toBe(message);
    const run = await runKassaInProcess(
      ['keys', 'rotate-master'],
      cliEnv({ KASSA_MASTER_KEY: hex(B), KASSA_MASTER_KEY_PREVIOUS: hex(A), KASSA_SECRETS_V1: 'refuse' }),
    );
    expect(run).toEqual({ code: 1, signal: null, stdout: '', stderr: `kassa: ${message}\n` });
  });

  it('`kassa keys rotate-master` re-seals every stored secret under B (v1 ones as v2) and reports counts; a second run has nothing to do', async () => {
    const env = cliEnv({ KASSA_MASTER_KEY: hex(B), KASSA_MASTER_KEY_PREVIOUS: hex(A) });
    const first = await runKassaInProcess(['keys', 'rotate-master', '--json'], env);
    expect(first.code, first.stderr).toBe(0);
    expect(parseJsonOutput(first)).toEqual({
      key_id: keyId(B),
      api_key_secrets: { resealed: 2, already_current: 0 },
      webhook_secrets: { resealed: 2, already_current: 0 },
      v1_resealed: 1,
      v1_remaining: 0,
    });
    const again = await runKassaInProcess(['keys', 'rotate-master'], env);
    expect(again).toEqual({
      code: 0,
      signal: null,
      stdout: `re-sealed 0 API key secrets and 0 webhook secrets under master key ${keyId(B)}; 2 and 2 already were; no v1 secret remains: KASSA_SECRETS_V1=refuse may be set\n`,
      stderr: '',
    });
  });

  it('then B alone serves the same merchants and webhook secrets; every ciphertext is v2 under B', async () => {
    await withKassa({ KASSA_MASTER_KEY: hex(B) }, async (kassa) => {
      expect((await postCreate(kassa, merchant, checkoutRequest())).status).toBe(201);
      expect((await postCreate(kassa, legacy, checkoutRequest())).status).toBe(201);
      const endpoint = (await kassa.ctx.store.webhooks.findEndpoint(endpointId))!;
      expect(activeSecrets(kassa.ctx, endpoint, new Date())).toEqual(webhookSecrets);
      const stored = await storedCiphertexts(kassa);
      expect(stored).toHaveLength(4);
      for (const sealed of stored) expect(sealed).toMatch(new RegExp(`^v2\\.${keyId(B)}\\.`));
    });
  });
});

describe('KASSA_SECRETS_V1=refuse after the rotation', () => {
  it('serves once no v1 secret remains, and will not start on a v1 ciphertext written onto a row later', async () => {
    await withKassa({ KASSA_MASTER_KEY: hex(B), KASSA_SECRETS_V1: 'refuse' }, async (kassa) => {
      expect((await postCreate(kassa, merchant, checkoutRequest())).status).toBe(201);
      expect((await postCreate(kassa, legacy, checkoutRequest())).status).toBe(201);
      // Someone who can write to the database puts a v1 ciphertext (no row binding) onto a key row.
      await kassa.runtime.db.prisma.apiKey.update({
        where: { publicKey: legacy.apiKey },
        data: { secretCiphertext: sealV1(legacy.apiSecret, B) },
      });
      const planted = await kassa.runtime.db.prisma.apiKey.findUniqueOrThrow({ where: { publicKey: legacy.apiKey } });
      expect(() =>
        openSecret(
          { sealed: planted.secretCiphertext, row: { table: 'api_keys', id: planted.id } },
          kassa.ctx.masterKey,
        ),
      ).toThrow(/v1 format/);
    });
    const config = loadConfig(cliEnv({ KASSA_MASTER_KEY: hex(B), KASSA_SECRETS_V1: 'refuse' }));
    const failure = await openRuntime(config, createLogger('silent'), 'cli').then(
      (runtime) => runtime.close(),
      (error: unknown) => error,
    );
    expect((failure as Error).message).toMatch(
      /^KASSA_SECRETS_V1=refuse, but 1 stored secret is still in the v1 format/,
    );
    // Accepting v1 again, rotate-master turns it into v2 (bound to its row), and refusing works again.
    const rotated = await runKassaInProcess(['keys', 'rotate-master', '--json'], cliEnv({ KASSA_MASTER_KEY: hex(B) }));
    expect(parseJsonOutput(rotated)).toMatchObject({
      api_key_secrets: { resealed: 1 },
      v1_resealed: 1,
      v1_remaining: 0,
    });
    await withKassa({ KASSA_MASTER_KEY: hex(B), KASSA_SECRETS_V1: 'refuse' }, async (kassa) => {
      expect((await postCreate(kassa, legacy, checkoutRequest())).status).toBe(201);
    });
  });

  it('KASSA_SECRETS_V1 is accept or refuse', () => {
    expect(() => loadConfig(cliEnv({ KASSA_MASTER_KEY: hex(B), KASSA_SECRETS_V1: 'no' }))).toThrow(
      /KASSA_SECRETS_V1 must be one of accept, refuse \(got "no"\)/,
    );
    expect(loadConfig(cliEnv({ KASSA_MASTER_KEY: hex(B) })).secretsV1).toBe('accept');
  });
});

describe('ciphertexts are bound to their row', () => {
  it('a secret copied onto another key row does not open there, and that key cannot sign', async () => {
    await withKassa({ KASSA_MASTER_KEY: hex(B) }, async (kassa) => {
      const victim = await createMerchant(kassa.ctx);
      const attacker = await createMerchant(kassa.ctx);
      // The attacker can write to the database and copies the victim's ciphertext onto their own key row.
      await kassa.runtime.db.prisma.$executeRaw`
        UPDATE api_keys SET secret_ciphertext = (SELECT secret_ciphertext FROM api_keys WHERE public_key = ${victim.apiKey})
        WHERE public_key = ${attacker.apiKey}`;
      const copied = (await kassa.ctx.store.apiKeys.findByPublicKey(attacker.apiKey))!;
      expect(() => openSecret(copied.secretCiphertext, kassa.ctx.masterKey)).toThrow(/sealed for another row/);
      // Signing with the victim's secret under the attacker's key is not accepted.
      const response = await postCreate(
        kassa,
        { apiKey: attacker.apiKey, apiSecret: victim.apiSecret },
        checkoutRequest(),
      );
      expect(response.status).not.toBe(201);
      // The victim's own key still works.
      expect((await postCreate(kassa, victim, checkoutRequest())).status).toBe(201);
      // The start-up check samples the newest key: leave none that does not open.
      await kassa.runtime.db.prisma.apiKey.delete({ where: { publicKey: attacker.apiKey } });
    });
  });

  it('a webhook secret copied onto another endpoint does not open there', async () => {
    await withKassa({ KASSA_MASTER_KEY: hex(B) }, async (kassa) => {
      const { endpoint: other } = await createWebhookEndpoint(kassa.ctx, merchant.organisationId, {
        url: 'https://93.184.215.14/other',
      });
      await kassa.runtime.db.prisma.$executeRaw`
        UPDATE webhook_endpoints SET secret_ciphertext = (SELECT secret_ciphertext FROM webhook_endpoints WHERE id = ${endpointId}::uuid)
        WHERE id = ${other.id}::uuid`;
      const copied = (await kassa.ctx.store.webhooks.findEndpoint(other.id))!;
      expect(() => activeSecrets(kassa.ctx, copied, new Date())).toThrow(/sealed for another row/);
      otherEndpointId = other.id;
    });
  });

  it('a stored secret that does not open stops `kassa keys rotate-master` before anything is re-sealed', async () => {
    const C = randomBytes(32);
    const run = await runKassaInProcess(
      ['keys', 'rotate-master'],
      cliEnv({ KASSA_MASTER_KEY: hex(C), KASSA_MASTER_KEY_PREVIOUS: hex(B) }),
    );
    expect(run).toEqual({
      code: 1,
      signal: null,
      stdout: '',
      stderr: `kassa: Nothing was re-sealed: Secret of webhook_endpoints row ${otherEndpointId} does not open: it was altered, or sealed for another row\n`,
    });
    // The API key secrets came first in the same transaction: still under B.
    await withKassa({ KASSA_MASTER_KEY: hex(B) }, async (kassa) => {
      for (const sealed of await storedCiphertexts(kassa)) expect(sealed).toMatch(new RegExp(`^v2\\.${keyId(B)}\\.`));
    });
  });
});
