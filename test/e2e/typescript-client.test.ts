import { execFile } from 'node:child_process';
import { createHmac } from 'node:crypto';
import { createServer } from 'node:net';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import {
  KassaClient,
  KassaError,
  KassaNetworkError,
  verifyWebhook,
  WebhookVerificationError,
  type BindResult,
  type KassaEvent,
  type PublicSession,
} from '../../clients/typescript/src/index.js';
import { MERCHANT_ONLY_FIELDS, PUBLIC_FIELDS } from '../support/spec-fields.js';
import { checkoutRequest, txHash } from '../factories/checkout-request.js';
import { createMerchant, type TestMerchant } from '../factories/merchant.js';
import { startTestKassa, type TestKassa } from '../support/kassa.js';
import { startWebhookReceiver, type WebhookReceiver } from '../support/webhook-receiver.js';
import { FAST_WEBHOOKS, startDeliveryLoop } from '../support/webhooks.js';

/** The TypeScript client (clients/typescript) against a running Kassa over real HTTP. */

let kassa: TestKassa;
let merchant: TestMerchant;
let client: KassaClient;

beforeAll(async () => {
  kassa = await startTestKassa({ env: FAST_WEBHOOKS });
  merchant = await createMerchant(kassa.ctx);
  client = new KassaClient({ baseUrl: kassa.url, apiKey: merchant.apiKey, apiSecret: merchant.apiSecret });
});

afterAll(async () => {
  await kassa?.close();
});

describe('KassaClient', () => {
  it('creates (signed, idempotent), reads and binds a session', async () => {
    const input = checkoutRequest() as never;
    const created = await client.createCheckoutSession(input, { idempotencyKey: 'order-1001' });
    expect(created.status).toBe('waiting_payment');
    expect(created.organisation_id).toBe(merchant.organisationId);
    // The same key again: the same session, not a second one.
    const replay = await client.createCheckoutSession(input, { idempotencyKey: 'order-1001' });
    expect(replay.session_id).toBe(created.session_id);
    // The same key with another body: refused with a code to branch on (docs/api/rest.md#error-codes).
    const reused = await client
      .createCheckoutSession(checkoutRequest({ currency: 'EUR' }) as never, { idempotencyKey: 'order-1001' })
      .catch((e: unknown) => e);
    expect(reused).toMatchObject({ status: 409, code: 'idempotency_conflict' });
    // Without a key of the caller's, each create gets a fresh one.
    const other = await client.createCheckoutSession(input);
    expect(other.session_id).not.toBe(created.session_id);

    expect(Object.keys(created).sort()).toEqual([...PUBLIC_FIELDS, ...MERCHANT_ONLY_FIELDS].sort());
    expect(created.items[0]!.quantity).toBeTypeOf('number');
    expect(created.organisation_deleted).toBe(false);

    const read: PublicSession = await client.getCheckoutSession(created.session_id);
    expect(read.session_id).toBe(created.session_id);
    expect(read).not.toHaveProperty('metadata');
    expect(Object.keys(read).sort()).toEqual([...PUBLIC_FIELDS].sort());
    // Typed fields (this file is type-checked under strict): no casts needed.
    const telegramId: string | null = read.user.telegram_id;
    expect(telegramId).toBeNull();
    expect(read.user.email).toBe('payer@example.com');
    expect(read.requires_payer_identity).toBeTypeOf('boolean');
    const bound: BindResult = await client.bindTransaction(created.session_id, {
      tx_hash: txHash(0xc11),
      chain_id: '31337',
      crypto_currency: 'ETH',
    });
    expect(bound).toEqual({
      session_id: created.session_id,
      bound_tx_hash: txHash(0xc11).toLowerCase(),
      crypto_currency: 'ETH',
      total_amount_crypto: expect.stringMatching(/^\d+\.\d{8}$/),
      status: bound.status,
      idempotent: false,
    });
    expect(
      (await client.bindTransaction(created.session_id, { tx_hash: txHash(0xc11), chain_id: '31337' })).idempotent,
    ).toBe(true);
  });

  it('throws KassaError with the status and every message', async () => {
    const error = await client
      .createCheckoutSession({ user: { id: '', email: 'x' }, items: [], currency: 'USD' })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(KassaError);
    expect((error as KassaError).status).toBe(400);
    expect((error as KassaError).messages.length).toBeGreaterThan(1);
    expect((error as KassaError).code).toBe('validation_failed');
    const missing = await client.getCheckoutSession('00000000-0000-4000-8000-000000000000').catch((e: unknown) => e);
    expect(missing).toMatchObject({ status: 404, name: 'KassaError' });
    expect((missing as KassaError).code).toBe('not_found');
    const wrongSecret = new KassaClient({ baseUrl: kassa.url, apiKey: merchant.apiKey, apiSecret: 'sk_wrong' });
    const unauthorised = await wrongSecret.listEvents().catch((e: unknown) => e);
    expect(unauthorised).toMatchObject({ status: 401 });
    expect((unauthorised as KassaError).messages[0]).toMatch(/Invalid signature/);
    expect((unauthorised as KassaError).code).toBe('signature_invalid');
  });

  it('wraps a failed connection in KassaNetworkError (a KassaError with status 0), after its retries', async () => {
    // A port that was free a moment ago: nothing listens, connections are refused.
    const port = await new Promise<number>((resolve) => {
      const server = createServer().listen(0, '127.0.0.1', () => {
        const { port } = server.address() as { port: number };
        server.close(() => resolve(port));
      });
    });
    const down = new KassaClient({
      baseUrl: `http://127.0.0.1:${port}`,
      apiKey: merchant.apiKey,
      apiSecret: merchant.apiSecret,
      maxRetries: 1,
    });
    const error = await down.getCheckoutSession('00000000-0000-4000-8000-000000000000').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(KassaNetworkError);
    expect(error).toBeInstanceOf(KassaError);
    expect(error).toMatchObject({ name: 'KassaNetworkError', status: 0, body: null, method: 'GET' });
    expect((error as KassaNetworkError).code).toBeNull();
    expect((error as KassaNetworkError).cause).toBeInstanceOf(TypeError);
    expect((error as KassaNetworkError).messages[0]).toMatch(
      new RegExp(`^GET http://127\\.0\\.0\\.1:${port}/checkout-sessions/\\S+ failed: fetch failed \\(ECONNREFUSED\\)$`),
    );
    // Not retried (a webhook create): the same error type.
    await expect(down.createWebhookEndpoint({ url: 'https://example.com/hooks' })).rejects.toMatchObject({
      name: 'KassaNetworkError',
      status: 0,
    });
    // A timeout is a network failure too.
    const slow = new KassaClient({
      baseUrl: kassa.url,
      apiKey: merchant.apiKey,
      apiSecret: merchant.apiSecret,
      timeoutMs: 1,
      maxRetries: 0,
      fetch: (input, init) =>
        new Promise((resolve, reject) => init?.signal?.addEventListener('abort', () => reject(init.signal!.reason))),
    });
    await expect(slow.listEvents()).rejects.toMatchObject({
      name: 'KassaNetworkError',
      status: 0,
      messages: [expect.stringMatching(/no answer before the timeout$/)],
    });
  });

  it('the usage example (clients/typescript/examples/usage.ts) compiles under strict', async () => {
    const tsc = fileURLToPath(new URL('../../node_modules/typescript/bin/tsc', import.meta.url));
    const project = fileURLToPath(new URL('../../clients/typescript/examples/tsconfig.json', import.meta.url));
    const result = await promisify(execFile)(process.execPath, [tsc, '-p', project]).then(
      () => ({ code: 0, output: '' }),
      (error: { code: number; stdout: string; stderr: string }) => ({
        code: error.code,
        output: error.stdout + error.stderr,
      }),
    );
    expect(result.output).toBe('');
    expect(result.code).toBe(0);
  }, 60_000);

  it('lists events page by page and by session', async () => {
    const owner = await createMerchant(kassa.ctx);
    const own = new KassaClient({ baseUrl: kassa.url, apiKey: owner.apiKey, apiSecret: owner.apiSecret });
    const sessions = [];
    for (let i = 0; i < 5; i++) sessions.push(await own.createCheckoutSession(checkoutRequest() as never));
    const first = await own.listEvents({ limit: 2 });
    expect(first.data).toHaveLength(2);
    expect(first.has_more).toBe(true);
    const all: KassaEvent[] = [];
    let cursor: string | null = null;
    for await (const event of own.events({ pageSize: 2, onCursor: (c) => (cursor = c) })) all.push(event);
    expect(all.map((e) => (e.type === 'funds.collected' ? null : e.data.session_id))).toEqual(
      sessions.map((s) => s.session_id),
    );
    expect(cursor).not.toBeNull();
    expect((await own.listEvents({ after: cursor })).data).toEqual([]);
    expect((await own.listEvents({ sessionId: sessions[2]!.session_id })).data.map((e) => e.type)).toEqual([
      'checkout_session.created',
    ]);
  });

  it('manages webhook endpoints and verifies the webhooks Kassa sends, through a rotation', async () => {
    const owner = await createMerchant(kassa.ctx);
    const own = new KassaClient({ baseUrl: kassa.url, apiKey: owner.apiKey, apiSecret: owner.apiSecret });
    const receiver: WebhookReceiver = await startWebhookReceiver();
    const loop = startDeliveryLoop(kassa.ctx);
    try {
      const endpoint = await own.createWebhookEndpoint({ url: receiver.url, events: ['checkout_session.created'] });
      expect((await own.listWebhookEndpoints()).map((e) => e.id)).toEqual([endpoint.id]);
      const session = await own.createCheckoutSession(checkoutRequest() as never);
      const [hook] = await receiver.waitFor((list) => list.length >= 1);
      const event = verifyWebhook({
        rawBody: hook!.rawBody,
        headers: hook!.headers as Record<string, string>,
        secret: endpoint.secret,
      });
      expect(event).toMatchObject({ type: 'checkout_session.created', data: { session_id: session.session_id } });
      expect(() =>
        verifyWebhook({
          rawBody: hook!.rawBody + ' ',
          headers: hook!.headers as Record<string, string>,
          secret: endpoint.secret,
        }),
      ).toThrow(WebhookVerificationError);
      expect(() =>
        verifyWebhook({
          rawBody: hook!.rawBody,
          headers: hook!.headers as Record<string, string>,
          secret: 'whsec_other',
        }),
      ).toThrow(/No signature/);
      expect(() =>
        verifyWebhook({
          rawBody: hook!.rawBody,
          headers: hook!.headers as Record<string, string>,
          secret: endpoint.secret,
          now: Date.now() + 6 * 60_000,
        }),
      ).toThrow(/tolerance/);

      // After a rotation Kassa signs with both secrets: the new one verifies, and so does the old one until the overlap ends.
      const rotated = await own.rotateWebhookSecret(endpoint.id);
      await own.createCheckoutSession(checkoutRequest() as never);
      const [, second] = await receiver.waitFor((list) => list.length >= 2);
      expect(String(second!.headers['x-service-signature']).split(',')).toHaveLength(2);
      for (const secret of [rotated.secret, endpoint.secret]) {
        expect(
          verifyWebhook({ rawBody: second!.rawBody, headers: second!.headers as Record<string, string>, secret }).id,
        ).toBe(second!.body.id);
      }

      const patched = await own.updateWebhookEndpoint(endpoint.id, { enabled: false });
      expect(patched.enabled).toBe(false);
      await own.deleteWebhookEndpoint(endpoint.id);
      expect(await own.getWebhookEndpoint(endpoint.id).catch((e: KassaError) => e.status)).toBe(404);
    } finally {
      await loop.stop();
      await receiver.close();
    }
  });

  it('signs every call but create over its method, path and query; a captured call cannot be replayed', async () => {
    const owner = await createMerchant(kassa.ctx);
    const sent: Array<{ url: string; method: string; headers: Record<string, string> }> = [];
    const recording: typeof fetch = (input, init) => {
      sent.push({
        url: String(input),
        method: init?.method ?? 'GET',
        headers: { ...(init?.headers as Record<string, string>) },
      });
      return fetch(input, init);
    };
    const own = new KassaClient({
      baseUrl: kassa.url,
      apiKey: owner.apiKey,
      apiSecret: owner.apiSecret,
      fetch: recording,
    });
    const sessionId = '00000000-0000-4000-8000-000000000000';
    await own.listEvents({ limit: 3, sessionId });
    const call = sent.at(-1)!;
    const target = call.url.slice(kassa.url.length);
    expect(target).toBe(`/events?limit=3&session_id=${sessionId}`);
    const timestamp = call.headers['X-Service-Timestamp']!;
    // Independently: HMAC-SHA256 of `{timestamp}.{METHOD}.{path?query}.{body}`
    // (docs/api/rest.md#signing-a-merchant-call).
    expect(call.headers['X-Service-Signature']).toBe(
      createHmac('sha256', owner.apiSecret).update(`${timestamp}.GET.${target}.`).digest('hex'),
    );
    const replay = await fetch(call.url, { headers: call.headers });
    expect(replay.status).toBe(401);
    expect(((await replay.json()) as { message: string }).message).toMatch(/^Replayed request/);
    // Create keeps `{timestamp}.{rawBody}` (docs/api/rest.md#signing-a-merchant-call).
    await own.createCheckoutSession(checkoutRequest() as never);
    const create = sent.at(-1)!;
    const body = JSON.stringify(checkoutRequest());
    expect(create.headers['X-Service-Signature']).toBe(
      createHmac('sha256', owner.apiSecret).update(`${create.headers['X-Service-Timestamp']}.${body}`).digest('hex'),
    );
  });

  it('identical calls in one millisecond, and a retry, are each signed with a timestamp of their own', async () => {
    let failNext = true;
    // The first answer is lost after Kassa handled the call (a 503 from a proxy, say): the client retries.
    const lossy: typeof fetch = async (input, init) => {
      const response = await fetch(input, init);
      if (!failNext) return response;
      failNext = false;
      await response.body?.cancel();
      return new Response('{}', { status: 503 });
    };
    const retrying = new KassaClient({
      baseUrl: kassa.url,
      apiKey: merchant.apiKey,
      apiSecret: merchant.apiSecret,
      fetch: lossy,
    });
    const now = vi.spyOn(Date, 'now').mockReturnValue(Date.now());
    try {
      const [first, second] = await Promise.all([client.listWebhookEndpoints(), client.listWebhookEndpoints()]);
      expect(first).toEqual(second);
      expect(Array.isArray(await retrying.listEvents({ limit: 1 }).then((page) => page.data))).toBe(true);
      expect(failNext).toBe(false);
    } finally {
      now.mockRestore();
    }
  });

  it('signs the path Kassa sees when baseUrl has a path a proxy strips', async () => {
    // A stand-in for a reverse proxy serving Kassa under /kassa: it strips the prefix.
    const proxy: typeof fetch = (input, init) =>
      fetch(String(input).replace(`${kassa.url}/kassa/`, `${kassa.url}/`), init);
    const behind = new KassaClient({
      baseUrl: `${kassa.url}/kassa/`,
      apiKey: merchant.apiKey,
      apiSecret: merchant.apiSecret,
      fetch: proxy,
    });
    expect((await behind.listEvents({ limit: 1 })).data.length).toBeLessThanOrEqual(1);
    expect(Array.isArray(await behind.listWebhookEndpoints())).toBe(true);
  });

  it('verifyWebhook accepts a body signed independently with HMAC-SHA256 of "{timestamp}.{rawBody}"', () => {
    const body = JSON.stringify({
      id: 'e1',
      type: 'checkout_session.paid',
      created_at: new Date().toISOString(),
      data: {},
    });
    const timestamp = String(Date.now());
    const signature = createHmac('sha256', 'whsec_abc').update(`${timestamp}.${body}`).digest('hex');
    const headers = new Headers({
      'X-Service-Timestamp': timestamp,
      'X-Service-Signature': `deadbeef,${signature}`,
      'X-Service-Event-Id': 'e1',
    });
    expect(verifyWebhook({ rawBody: Buffer.from(body), headers, secret: ['whsec_old', 'whsec_abc'] }).type).toBe(
      'checkout_session.paid',
    );
    expect(() =>
      verifyWebhook({
        rawBody: body,
        headers: new Headers({
          'X-Service-Timestamp': timestamp,
          'X-Service-Signature': signature,
          'X-Service-Event-Id': 'e2',
        }),
        secret: 'whsec_abc',
      }),
    ).toThrow(/Event-Id/);
  });
});
