import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createWebhookEndpoint, listWebhookDeliveries } from '../../src/domain/webhooks/webhook-endpoints.js';
import { createLogger } from '../../src/logging.js';
import { runWebhookRound } from '../../src/webhooks/dispatcher.js';
import { createMerchant, type TestMerchant } from '../factories/merchant.js';
import { checkoutRequest } from '../factories/checkout-request.js';
import { parseJsonOutput, runKassaInProcess } from '../support/cli-process.js';
import { startTestKassa, TEST_ENV, type TestKassa } from '../support/kassa.js';
import { createSession } from '../support/rest-kassa.js';
import { signedRequest } from '../support/webhooks.js';
import { startWebhookReceiver, type WebhookReceiver } from '../support/webhook-receiver.js';

/**
 * In production webhook URLs must be https (docs/operations.md#running-in-production): refused when an
 * endpoint is registered or changed (REST and CLI), and at delivery for an endpoint that was
 * registered before the switch. Two Kassa instances on one database: a test-mode one that
 * registered a plain-http endpoint, and a production one.
 */

const MASTER_KEY = randomBytes(32).toString('hex');
const HTTPS_ONLY = 'url must use https in production (events and their signatures must not travel in clear)';
let before: TestKassa;
let production: TestKassa;
let productionEnv: Record<string, string>;
let merchant: TestMerchant;
let receiver: WebhookReceiver;

beforeAll(async () => {
  before = await startTestKassa({ env: { KASSA_MASTER_KEY: MASTER_KEY } });
  productionEnv = {
    KASSA_ENV: 'production',
    KASSA_MASTER_KEY: MASTER_KEY,
    KASSA_NETWORKS: 'bsc',
    KASSA_RPC_URLS_BSC: 'http://127.0.0.1:9',
    KASSA_RATES_SOURCES: 'coingecko',
    KASSA_RATES_MIN_SOURCES: '1',
    KASSA_COINGECKO_URL: 'http://127.0.0.1:9/api/v3',
    // The receiver below is on loopback: only the https rule is under test here.
    KASSA_WEBHOOK_ALLOW_PRIVATE: 'true',
    // The retry after a refused attempt is random(0, base): with an hour's base it cannot fall inside the round that
    // made the first attempt (with the default 10 s it did once in a while, and the round tried twice).
    KASSA_WEBHOOK_RETRY_BASE_MS: '3600000',
  };
  production = await startTestKassa({ database: before.database, env: productionEnv });
  merchant = await createMerchant(before.ctx);
  receiver = await startWebhookReceiver();
});

afterAll(async () => {
  await production?.close();
  await before?.close();
  await receiver?.close();
});

describe('webhook URLs in production', () => {
  it('POST /webhook-endpoints refuses plain http (400) and accepts https', async () => {
    const refused = await signedRequest(production, merchant, 'post', '/webhook-endpoints', { url: receiver.url });
    expect(refused.status).toBe(400);
    expect(refused.body.message).toEqual([HTTPS_ONLY]);
    const accepted = await signedRequest(production, merchant, 'post', '/webhook-endpoints', {
      url: 'https://93.184.215.14/hooks',
    });
    expect(accepted.status, JSON.stringify(accepted.body)).toBe(201);
    const changed = await signedRequest(production, merchant, 'patch', `/webhook-endpoints/${accepted.body.id}`, {
      url: 'http://93.184.215.14/hooks',
    });
    expect(changed.status).toBe(400);
    expect(changed.body.message).toEqual([HTTPS_ONLY]);
  });

  it('`kassa webhooks add` refuses plain http with exit 2 and one line', async () => {
    const env = {
      ...TEST_ENV,
      ...productionEnv,
      LOG_LEVEL: 'silent',
      DATABASE_URL: before.database.databaseUrl!,
      KASSA_DATA_DIR: before.database.dataDir,
    };
    const run = await runKassaInProcess(
      ['webhooks', 'add', '--org', merchant.organisationId, '--url', 'http://93.184.215.14/hooks'],
      env,
    );
    expect(run).toEqual({ code: 2, signal: null, stdout: '', stderr: `kassa: ${HTTPS_ONLY}\n` });
    const ok = await runKassaInProcess(
      ['webhooks', 'add', '--org', merchant.organisationId, '--url', 'https://93.184.215.14/hooks', '--json'],
      env,
    );
    expect(ok.code, ok.stderr).toBe(0);
    expect(parseJsonOutput<{ url: string }>(ok).url).toBe('https://93.184.215.14/hooks');
  });

  it('an http endpoint registered before the switch gets no delivery in production: each attempt is refused and logged', async () => {
    const { endpoint } = await createWebhookEndpoint(before.ctx, merchant.organisationId, {
      url: receiver.url,
      events: ['checkout_session.created'],
    });
    await createSession(before, merchant, checkoutRequest());
    await runWebhookRound(production.ctx, createLogger('silent'));
    const [delivery] = await listWebhookDeliveries(production.ctx, null, endpoint.id);
    expect(delivery).toMatchObject({ status: 'pending', attempts: 1, lastError: `refused: ${HTTPS_ONLY}` });
    expect(receiver.received).toEqual([]);
  });
});
