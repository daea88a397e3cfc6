import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KassaClient, KassaError, verifyWebhook } from '../../clients/typescript/src/index.js';
import { startChainKassa, startTestChain, type ChainKassa, type TestChain } from '../support/chain.js';
import { paidSession, randomWallet } from '../support/refunds.js';
import { startWebhookReceiver, type WebhookReceiver } from '../support/webhook-receiver.js';
import { FAST_WEBHOOKS, startDeliveryLoop } from '../support/webhooks.js';
import { eventEnvelopeSchema } from '../../src/domain/webhooks/webhook.views.js';

/**
 * Refunds through @kassa/client (createRefund, listRefunds, getRefund, cancelRefund) against a real Kassa whose
 * session was paid on anvil, and their events delivered as signed webhooks the client verifies.
 */

let chain: TestChain;
let node: ChainKassa;
let receiver: WebhookReceiver;
let loop: { stop(): Promise<void> };

beforeAll(async () => {
  chain = await startTestChain();
  node = await startChainKassa(chain.url, { env: FAST_WEBHOOKS });
  receiver = await startWebhookReceiver();
  loop = startDeliveryLoop(node.kassa.ctx);
}, 60_000);

afterAll(async () => {
  await loop?.stop();
  await receiver?.close();
  await node?.close();
  await chain?.stop();
});

describe('refunds through the TypeScript client', () => {
  it('creates (idempotently), lists, reads and cancels; each change arrives as a signed refund.* webhook', async () => {
    const paid = await paidSession(chain, node, 'USDT');
    const client = new KassaClient({
      baseUrl: node.kassa.url,
      apiKey: paid.merchant.apiKey,
      apiSecret: paid.merchant.apiSecret,
    });
    const endpoint = await client.createWebhookEndpoint({
      url: receiver.url,
      events: ['refund.created', 'refund.cancelled'],
    });

    const refund = await client.createRefund(paid.id, { kind: 'part', amount: '1.25' }, { idempotencyKey: 'ret-1' });
    expect(refund).toMatchObject({ kind: 'part', status: 'awaiting_destination', amount: '1.25000000' });
    expect(await client.createRefund(paid.id, { kind: 'part', amount: '1.25' }, { idempotencyKey: 'ret-1' })).toEqual(
      refund,
    );
    const direct = await client.createRefund(paid.id, { kind: 'full', destination: randomWallet() });
    expect(direct.status).toBe('ready');
    expect((await client.listRefunds(paid.id)).map((r) => r.id)).toEqual([refund.id, direct.id]);
    expect(await client.getRefund(refund.id)).toEqual(refund);
    // Everything received is held by the two: a third is refused.
    const refused = await client.createRefund(paid.id, { kind: 'full' }).then(
      () => null,
      (error: unknown) => error,
    );
    expect(refused).toBeInstanceOf(KassaError);
    expect((refused as KassaError).status).toBe(409);
    expect((refused as KassaError).body).toMatchObject({ code: 'refund_exceeds_received' });

    const cancelled = await client.cancelRefund(refund.id);
    expect(cancelled.status).toBe('cancelled');

    const hooks = await receiver.waitFor((got) => got.length >= 3, 15_000);
    const events = hooks.map((hook) =>
      verifyWebhook({
        rawBody: hook.rawBody,
        headers: hook.headers as Record<string, string>,
        secret: endpoint.secret,
      }),
    );
    expect(events.map((event) => [event.type, (event.data as { id: string }).id])).toEqual([
      ['refund.created', refund.id],
      ['refund.created', direct.id],
      ['refund.cancelled', refund.id],
    ]);
    expect(events[2]!.data).toEqual(cancelled);
    for (const event of events) expect(eventEnvelopeSchema.safeParse(event).success).toBe(true);
  });
});
