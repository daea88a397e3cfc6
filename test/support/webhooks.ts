import type { Test } from 'supertest';
import type { DomainContext } from '../../src/domain/context.js';
import { createLogger } from '../../src/logging.js';
import { runWebhookRound } from '../../src/webhooks/dispatcher.js';
import { signed, type TestMerchant } from '../factories/merchant.js';
import type { TestKassa } from './kassa.js';

/** Fast retry settings so retry tests take milliseconds, not minutes. */
export const FAST_WEBHOOKS = {
  KASSA_WEBHOOK_TIMEOUT_MS: '400',
  KASSA_WEBHOOK_RETRY_BASE_MS: '40',
  KASSA_WEBHOOK_RETRY_MAX_MS: '120',
  KASSA_WEBHOOK_POLL_MS: '20',
} as const;

/** Runs the delivery worker of one in-process Kassa until stopped (what the background job does every poll). */
export function startDeliveryLoop(ctx: DomainContext): { stop(): Promise<void> } {
  const logger = createLogger('silent');
  let running = true;
  const loop = (async () => {
    while (running) {
      try {
        await runWebhookRound(ctx, logger);
      } catch (error) {
        if (running) throw error;
      }
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  })();
  return {
    async stop() {
      running = false;
      await loop;
    },
  };
}

/** A signed merchant request with any method; `body` undefined → empty body (GET, DELETE). */
export function signedRequest(
  kassa: TestKassa,
  merchant: Pick<TestMerchant, 'apiKey' | 'apiSecret'>,
  method: 'get' | 'post' | 'patch' | 'delete',
  path: string,
  body?: unknown,
): Test {
  const request = kassa.http[method](path);
  return signed(request, merchant, body === undefined ? '' : JSON.stringify(body));
}
