import net from 'node:net';
import { createHmac } from 'node:crypto';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { checkoutRequest } from '../factories/checkout-request.js';
import { createMerchant, type TestMerchant } from '../factories/merchant.js';
import { startTestKassa, type TestKassa } from '../support/kassa.js';
import { createSession, expectErrorBody, UUID } from '../support/rest-kassa.js';
import { signatureValid, startWebhookReceiver, type WebhookReceiver } from '../support/webhook-receiver.js';
import { FAST_WEBHOOKS, signedRequest, startDeliveryLoop } from '../support/webhooks.js';
import { WEBHOOK_EVENT_TYPES } from '../../src/domain/shared/event-types.js';

let kassa: TestKassa;
let merchant: TestMerchant;
let receiver: WebhookReceiver;
let loop: { stop(): Promise<void> } | null = null;

beforeAll(async () => {
  kassa = await startTestKassa({ env: FAST_WEBHOOKS });
  merchant = await createMerchant(kassa.ctx);
});

afterAll(async () => {
  await loop?.stop();
  await kassa?.close();
});

afterEach(async () => {
  await loop?.stop();
  loop = null;
  await receiver?.close();
});

async function addEndpoint(owner: TestMerchant, body: Record<string, unknown>) {
  const response = await signedRequest(kassa, owner, 'post', '/webhook-endpoints', body);
  expect(response.status, JSON.stringify(response.body)).toBe(201);
  return response.body as { id: string; secret: string; url: string; events: string[]; enabled: boolean };
}

async function deliveries(owner: TestMerchant, endpointId: string) {
  const { listWebhookDeliveries } = await import('../../src/domain/webhooks/webhook-endpoints.js');
  return listWebhookDeliveries(kassa.ctx, owner.organisationId, endpointId);
}

async function freshMerchantWithReceiver(events?: string[]) {
  const owner = await createMerchant(kassa.ctx);
  receiver = await startWebhookReceiver();
  const endpoint = await addEndpoint(owner, { url: receiver.url, ...(events ? { events } : {}) });
  return { owner, endpoint };
}

/** Moves the session's expiry into the past and reads it: the read settles it as expired (an event). */
async function expireNow(sessionId: string): Promise<void> {
  await kassa.runtime.db.prisma.checkoutSession.update({
    where: { id: sessionId },
    data: { expiresAt: new Date(Date.now() - 1000) },
  });
  expect((await kassa.http.get(`/checkout-sessions/${sessionId}`)).body.status).toBe('expired');
}

describe('signed delivery', () => {
  it('POSTs the created and expired events, signed with the endpoint secret, in order', async () => {
    const { owner, endpoint } = await freshMerchantWithReceiver();
    expect(endpoint.secret).toMatch(/^whsec_[0-9a-f]{64}$/);
    expect(endpoint.id).toMatch(UUID);
    loop = startDeliveryLoop(kassa.ctx);
    const session = await createSession(kassa, owner, checkoutRequest());
    await expireNow(session.session_id);

    const got = await receiver.waitFor((list) => list.length >= 2);
    expect(got.map((hook) => hook.body.type)).toEqual(['checkout_session.created', 'checkout_session.expired']);
    for (const hook of got) {
      expect(hook.headers['content-type']).toMatch(/^application\/json/);
      expect(hook.headers['x-service-event-id']).toBe(hook.body.id);
      expect(hook.body.id).toMatch(UUID);
      expect(Object.keys(hook.body).sort()).toEqual(['created_at', 'data', 'id', 'type']);
      expect(hook.body.data.session_id).toBe(session.session_id);
      // Unix milliseconds, fresh, and the signature verifies with the secret shown at creation (independent HMAC).
      expect(Math.abs(Number(hook.headers['x-service-timestamp']) - Date.now())).toBeLessThan(60_000);
      expect(String(hook.headers['x-service-signature'])).toMatch(/^[0-9a-f]{64}$/);
      expect(signatureValid(endpoint.secret, hook.headers, hook.rawBody)).toBe(true);
      expect(signatureValid('whsec_wrong', hook.headers, hook.rawBody)).toBe(false);
    }
    expect(got[0]!.body.data.status).toBe('waiting_payment');
    expect(got[1]!.body.data.status).toBe('expired');
    // The merchant view: metadata and user are there.
    expect(got[0]!.body.data).toHaveProperty('metadata');

    // The receiver answers before the attempt is recorded: wait for the record.
    await expect
      .poll(async () => (await deliveries(owner, endpoint.id)).map((d) => d.status))
      .toEqual(['succeeded', 'succeeded']);
    const log = await deliveries(owner, endpoint.id);
    expect(log.every((d) => d.attemptLog.length === 1 && d.attemptLog[0]!.statusCode === 200)).toBe(true);
  });

  it('honours the event filter', async () => {
    const { owner } = await freshMerchantWithReceiver(['checkout_session.expired']);
    loop = startDeliveryLoop(kassa.ctx);
    const session = await createSession(kassa, owner, checkoutRequest());
    await expireNow(session.session_id);
    await receiver.waitFor((list) => list.length >= 1);
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(receiver.received.map((hook) => hook.body.type)).toEqual(['checkout_session.expired']);
  });

  it('a filter may name every event type, re-pricing included', async () => {
    const owner = await createMerchant(kassa.ctx);
    const endpoint = await addEndpoint(owner, {
      url: 'http://127.0.0.1:9/hook',
      events: ['checkout_session.quote_updated', 'checkout_session.payment_reversed'],
    });
    expect(endpoint.events).toEqual(['checkout_session.quote_updated', 'checkout_session.payment_reversed']);
  });

  it('does not deliver another organisation’s events', async () => {
    const { owner } = await freshMerchantWithReceiver();
    loop = startDeliveryLoop(kassa.ctx);
    const other = await createMerchant(kassa.ctx);
    await createSession(kassa, other, checkoutRequest());
    const mine = await createSession(kassa, owner, checkoutRequest());
    await receiver.waitFor((list) => list.length >= 1);
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(receiver.received.map((hook) => hook.body.data.session_id)).toEqual([mine.session_id]);
  });
});

describe('retries', () => {
  it('retries after a 500 and succeeds on the 200, logging both attempts', async () => {
    const { owner, endpoint } = await freshMerchantWithReceiver();
    receiver.respond({ status: 500, body: 'x'.repeat(5000) });
    loop = startDeliveryLoop(kassa.ctx);
    const session = await createSession(kassa, owner, checkoutRequest());
    const got = await receiver.waitFor((list) => list.length >= 2);
    expect(got.map((hook) => hook.body.data.session_id)).toEqual([session.session_id, session.session_id]);
    expect(got[0]!.body.id).toBe(got[1]!.body.id);
    await expect.poll(async () => (await deliveries(owner, endpoint.id))[0]?.status).toBe('succeeded');
    const [delivery] = await deliveries(owner, endpoint.id);
    expect(delivery!.attempts).toBe(2);
    expect(delivery!.attemptLog.map((a) => a.statusCode)).toEqual([500, 200]);
    // The response excerpt is capped at 1 KB.
    expect(delivery!.attemptLog[0]!.responseExcerpt).toBe('x'.repeat(1024));
    expect(delivery!.attemptLog[0]!.error).toBe('HTTP 500');
  });

  it('an answer holding NUL characters (UTF-16 text) is recorded, not left to jam the endpoint', async () => {
    const { owner, endpoint } = await freshMerchantWithReceiver();
    receiver.respond({ status: 200, body: 'O\u0000K\u0000' });
    loop = startDeliveryLoop(kassa.ctx);
    await createSession(kassa, owner, checkoutRequest());
    await expect.poll(async () => (await deliveries(owner, endpoint.id))[0]?.status).toBe('succeeded');
    const [delivery] = await deliveries(owner, endpoint.id);
    expect(delivery!.attempts).toBe(1);
    expect(delivery!.attemptLog.map((a) => [a.statusCode, a.responseExcerpt])).toEqual([[200, 'O\uFFFDK\uFFFD']]);
  });

  it('retries a receiver that does not answer within the timeout', async () => {
    const { owner, endpoint } = await freshMerchantWithReceiver();
    receiver.respond({ hang: 2_000 });
    loop = startDeliveryLoop(kassa.ctx);
    await createSession(kassa, owner, checkoutRequest());
    await receiver.waitFor((list) => list.length >= 1);
    await expect.poll(async () => (await deliveries(owner, endpoint.id))[0]?.status).toBe('succeeded');
    const [delivery] = await deliveries(owner, endpoint.id);
    expect(delivery!.attemptLog[0]!.statusCode).toBeNull();
    expect(delivery!.attemptLog[0]!.error).toMatch(/timeout after 400 ms/);
    expect(delivery!.attemptLog[0]!.latencyMs).toBeGreaterThanOrEqual(390);
    expect(delivery!.attemptLog[1]!.statusCode).toBe(200);
  });

  it('gives up after the give-up time and marks the delivery failed', async () => {
    const quick = await startTestKassa({
      env: { ...FAST_WEBHOOKS, KASSA_WEBHOOK_GIVE_UP_HOURS: '0.0002' },
      database: kassa.database,
    });
    try {
      const owner = await createMerchant(quick.ctx);
      receiver = await startWebhookReceiver();
      receiver.fallback = { status: 503 };
      const endpoint = (await signedRequest(quick, owner, 'post', '/webhook-endpoints', { url: receiver.url }))
        .body as { id: string };
      loop = startDeliveryLoop(quick.ctx);
      await createSession(quick, owner, checkoutRequest());
      const { listWebhookDeliveries } = await import('../../src/domain/webhooks/webhook-endpoints.js');
      await expect
        .poll(async () => (await listWebhookDeliveries(quick.ctx, null, endpoint.id))[0]?.status, { timeout: 10_000 })
        .toBe('failed');
      const [delivery] = await listWebhookDeliveries(quick.ctx, null, endpoint.id);
      expect(delivery!.attempts).toBeGreaterThanOrEqual(2);
      expect(delivery!.attemptLog.every((a) => a.statusCode === 503)).toBe(true);
      const attempts = delivery!.attempts;
      await new Promise((resolve) => setTimeout(resolve, 300));
      expect((await listWebhookDeliveries(quick.ctx, null, endpoint.id))[0]!.attempts).toBe(attempts);
    } finally {
      await loop?.stop();
      loop = null;
      await quick.close();
    }
  });
});

describe('secret rotation', () => {
  it('signs with both secrets during the overlap, each verifiable on its own', async () => {
    const { owner, endpoint } = await freshMerchantWithReceiver();
    const rotated = await signedRequest(kassa, owner, 'post', `/webhook-endpoints/${endpoint.id}/rotate-secret`, {});
    expect(rotated.status).toBe(200);
    const newSecret = rotated.body.secret as string;
    expect(newSecret).toMatch(/^whsec_/);
    expect(newSecret).not.toBe(endpoint.secret);
    expect(Date.parse(rotated.body.previous_secret_expires_at) - Date.now()).toBeGreaterThan(23 * 3_600_000);
    loop = startDeliveryLoop(kassa.ctx);
    await createSession(kassa, owner, checkoutRequest());
    const [hook] = await receiver.waitFor((list) => list.length >= 1);
    const signatures = String(hook!.headers['x-service-signature']).split(',');
    expect(signatures).toHaveLength(2);
    const timestamp = String(hook!.headers['x-service-timestamp']);
    const hmac = (secret: string) => createHmac('sha256', secret).update(`${timestamp}.${hook!.rawBody}`).digest('hex');
    expect(signatures.sort()).toEqual([hmac(newSecret), hmac(endpoint.secret)].sort());
  });
});

describe('secret rotations at once', () => {
  it('each issued secret signs: the later rotation keeps the earlier one as the previous secret', async () => {
    const { owner, endpoint } = await freshMerchantWithReceiver();
    const { rotateWebhookSecret } = await import('../../src/domain/webhooks/webhook-endpoints.js');
    // Two rotations that both read the endpoint before either writes (two instances, or two requests at once): the
    // real store, its writes held until both have read.
    const webhooks = kassa.ctx.store.webhooks;
    let release!: () => void;
    const bothRead = new Promise<void>((resolve) => (release = resolve));
    let waiting = 0;
    const racing = {
      ...kassa.ctx,
      store: {
        ...kassa.ctx.store,
        webhooks: {
          ...webhooks,
          updateEndpoint: async (...args: Parameters<typeof webhooks.updateEndpoint>) => {
            if (++waiting === 2) release();
            await bothRead;
            return webhooks.updateEndpoint(...args);
          },
        },
      },
    };
    const issued = (
      await Promise.all([
        rotateWebhookSecret(racing, owner.organisationId, endpoint.id),
        rotateWebhookSecret(racing, owner.organisationId, endpoint.id),
      ])
    ).map((rotation) => rotation.secret);
    loop = startDeliveryLoop(kassa.ctx);
    await createSession(kassa, owner, checkoutRequest());
    const [hook] = await receiver.waitFor((list) => list.length >= 1);
    const timestamp = String(hook!.headers['x-service-timestamp']);
    const hmac = (secret: string) => createHmac('sha256', secret).update(`${timestamp}.${hook!.rawBody}`).digest('hex');
    const signatures = String(hook!.headers['x-service-signature']).split(',');
    // Both issued secrets sign (the one set first is the previous one now); the original was replaced by both.
    expect(signatures.sort()).toEqual(issued.map(hmac).sort());
  });
});

describe('REST /webhook-endpoints', () => {
  it('creates, lists, reads, updates and deletes, scoped to the organisation', async () => {
    receiver = await startWebhookReceiver();
    const owner = await createMerchant(kassa.ctx);
    const other = await createMerchant(kassa.ctx);
    const created = await addEndpoint(owner, { url: receiver.url, events: ['checkout_session.paid'] });
    expect(created).toMatchObject({
      url: receiver.url,
      events: ['checkout_session.paid'],
      enabled: true,
      organisation_id: owner.organisationId,
    });

    const list = await signedRequest(kassa, owner, 'get', '/webhook-endpoints');
    expect(list.status).toBe(200);
    expect(list.body.data.map((e: { id: string }) => e.id)).toEqual([created.id]);
    expect(JSON.stringify(list.body)).not.toContain('whsec_');

    const one = await signedRequest(kassa, owner, 'get', `/webhook-endpoints/${created.id}`);
    expect(one.status).toBe(200);
    expect(one.body.secret).toBeUndefined();

    const patched = await signedRequest(kassa, owner, 'patch', `/webhook-endpoints/${created.id}`, {
      enabled: false,
      events: [],
    });
    expect(patched.status).toBe(200);
    expect(patched.body).toMatchObject({ enabled: false, events: [] });

    // Another organisation cannot see or touch it.
    expectErrorBody(await signedRequest(kassa, other, 'get', `/webhook-endpoints/${created.id}`), 404);
    expectErrorBody(
      await signedRequest(kassa, other, 'patch', `/webhook-endpoints/${created.id}`, { enabled: true }),
      404,
    );
    expectErrorBody(await signedRequest(kassa, other, 'delete', `/webhook-endpoints/${created.id}`), 404);
    expectErrorBody(
      await signedRequest(kassa, other, 'post', `/webhook-endpoints/${created.id}/rotate-secret`, {}),
      404,
    );
    expect((await signedRequest(kassa, other, 'get', '/webhook-endpoints')).body.data).toEqual([]);

    expect((await signedRequest(kassa, owner, 'delete', `/webhook-endpoints/${created.id}`)).status).toBe(204);
    expectErrorBody(await signedRequest(kassa, owner, 'get', `/webhook-endpoints/${created.id}`), 404);
    expectErrorBody(await signedRequest(kassa, owner, 'get', '/webhook-endpoints/not-a-uuid'), 400, [
      'id must be a UUID',
    ]);
    expectErrorBody(await signedRequest(kassa, owner, 'delete', '/webhook-endpoints/not-a-uuid'), 400, [
      'id must be a UUID',
    ]);
  });

  it('refuses unsigned calls, bad bodies and unknown event types with the spec error body', async () => {
    expectErrorBody(await kassa.http.get('/webhook-endpoints'), 401, /Missing signing headers/);
    expectErrorBody(
      await kassa.http.post('/webhook-endpoints').set('Content-Type', 'application/json').send('{}'),
      401,
    );
    expectErrorBody(await signedRequest(kassa, merchant, 'post', '/webhook-endpoints', {}), 400, ['url is required']);
    expectErrorBody(
      await signedRequest(kassa, merchant, 'post', '/webhook-endpoints', {
        url: 'ftp://example.com/x',
        events: ['nope'],
        extra: 1,
      }),
      400,
      /events\.0 must be one of[\s\S]*property extra should not exist/,
    );
    expectErrorBody(
      await signedRequest(kassa, merchant, 'post', '/webhook-endpoints', { url: 'ftp://example.com/x' }),
      400,
      ['url must use http or https'],
    );
    expectErrorBody(
      await signedRequest(kassa, merchant, 'post', '/webhook-endpoints', { url: 'http://user:pw@example.com/' }),
      400,
      ['url must not contain credentials'],
    );
    expectErrorBody(await signedRequest(kassa, merchant, 'post', '/webhook-endpoints', { url: 'not a url' }), 400, [
      'url must be an http(s) URL',
    ]);
    expectErrorBody(await kassa.http.put('/webhook-endpoints'), 405);
  });

  it('a 400 lists every problem at once, each naming its field', async () => {
    const oneOf = `must be one of ${WEBHOOK_EVENT_TYPES.join(', ')}`;
    expectErrorBody(
      await signedRequest(kassa, merchant, 'post', '/webhook-endpoints', {
        url: 'ftp://x',
        events: ['checkout_session.nope'],
      }),
      400,
      ['url must use http or https', `events.0 ${oneOf}`],
    );
    expectErrorBody(
      await signedRequest(kassa, merchant, 'post', '/webhook-endpoints', {
        url: 'http://user:pw@example.com/',
        events: ['nope', 'checkout_session.paid', 7],
        enabled: 'yes',
        extra: 1,
      }),
      400,
      [
        'url must not contain credentials',
        `events.0 ${oneOf}`,
        `events.2 ${oneOf}`,
        'enabled must be a boolean',
        'property extra should not exist',
      ],
    );
    // A string where the list belongs: one message, no length complaint.
    expectErrorBody(
      await signedRequest(kassa, merchant, 'post', '/webhook-endpoints', {
        url: 'https://93.184.215.14/hook',
        events: 'checkout_session.paid',
      }),
      400,
      ['events must be an array of event types'],
    );
    const most = WEBHOOK_EVENT_TYPES.length * 2;
    expectErrorBody(
      await signedRequest(kassa, merchant, 'post', '/webhook-endpoints', {
        url: 7,
        events: Array(most + 1).fill('checkout_session.paid'),
      }),
      400,
      ['url must be an http(s) URL', `events must list at most ${most} types`],
    );

    const endpoint = (
      await signedRequest(kassa, merchant, 'post', '/webhook-endpoints', { url: 'http://127.0.0.1:9/hook' })
    ).body.id as string;
    expectErrorBody(
      await signedRequest(kassa, merchant, 'patch', `/webhook-endpoints/${endpoint}`, {
        url: 'ftp://x',
        events: 'all',
        enabled: 'no',
      }),
      400,
      ['url must use http or https', 'events must be an array of event types', 'enabled must be a boolean'],
    );
    expectErrorBody(
      await signedRequest(kassa, merchant, 'patch', '/webhook-endpoints/nope', { url: 'not a url', enabled: 'no' }),
      400,
      ['id must be a UUID', 'url must be an http(s) URL', 'enabled must be a boolean'],
    );
    // Nothing was changed by the refused PATCH.
    expect((await signedRequest(kassa, merchant, 'get', `/webhook-endpoints/${endpoint}`)).body).toMatchObject({
      url: 'http://127.0.0.1:9/hook',
      enabled: true,
      events: [],
    });
  });
});

describe('endpoints per organisation', () => {
  // Found by an attacker-minded review: there was no cap, and every event fans out to each endpoint while all
  // organisations share the delivery worker's slots.
  it('at most 20: the 21st is refused 409 with nothing written, also when they are asked for at once; deleting one frees a place', async () => {
    const owner = await createMerchant(kassa.ctx);
    const url = 'http://127.0.0.1:9/hook';
    const answers = await Promise.all(
      Array.from({ length: 24 }, () => signedRequest(kassa, owner, 'post', '/webhook-endpoints', { url })),
    );
    expect(answers.filter((answer) => answer.status === 201)).toHaveLength(20);
    const refused = answers.filter((answer) => answer.status !== 201);
    expect(refused).toHaveLength(4);
    for (const answer of refused)
      expectErrorBody(
        answer,
        409,
        'An organisation may have at most 20 webhook endpoints; delete one it no longer needs first',
      );
    const listed = await signedRequest(kassa, owner, 'get', '/webhook-endpoints');
    expect(listed.body.data).toHaveLength(20);
    const first = listed.body.data[0] as { id: string };
    expect((await signedRequest(kassa, owner, 'delete', `/webhook-endpoints/${first.id}`)).status).toBe(204);
    expect((await signedRequest(kassa, owner, 'post', '/webhook-endpoints', { url })).status).toBe(201);
    // Another organisation has its own 20.
    const other = await createMerchant(kassa.ctx);
    expect((await signedRequest(kassa, other, 'post', '/webhook-endpoints', { url })).status).toBe(201);
  });
});

describe('SSRF', () => {
  it('in production, refuses private, loopback, link-local and mapped addresses at registration', async () => {
    const strict = await startTestKassa({
      env: { ...FAST_WEBHOOKS, KASSA_WEBHOOK_ALLOW_PRIVATE: 'false' },
      database: kassa.database,
    });
    try {
      const owner = await createMerchant(strict.ctx);
      for (const url of [
        'http://127.0.0.1:9/hook',
        'http://localhost/hook',
        'http://10.1.2.3/hook',
        'http://172.20.0.1/hook',
        'http://192.168.1.1/hook',
        'http://169.254.169.254/latest/meta-data',
        'http://[::1]/hook',
        'http://[::ffff:127.0.0.1]/hook',
        'http://[fd00::1]/hook',
        'http://[fe80::1]/hook',
        'http://0.0.0.0/hook',
        'http://100.64.0.1/hook',
        'http://224.0.0.1/hook',
      ]) {
        const response = await signedRequest(strict, owner, 'post', '/webhook-endpoints', { url });
        expectErrorBody(response, 400, /not a public address/);
      }
      // The address check is listed with the other problems, not after they are fixed.
      expectErrorBody(
        await signedRequest(strict, owner, 'post', '/webhook-endpoints', {
          url: 'http://10.1.2.3/hook',
          events: ['nope'],
        }),
        400,
        [
          `events.0 must be one of ${WEBHOOK_EVENT_TYPES.join(', ')}`,
          'url resolves to 10.1.2.3, which is not a public address (private, loopback and link-local addresses are refused)',
        ],
      );
      // A public address is accepted (no connection is made at registration).
      expect(
        (await signedRequest(strict, owner, 'post', '/webhook-endpoints', { url: 'https://93.184.215.14/hook' }))
          .status,
      ).toBe(201);
    } finally {
      await strict.close();
    }
  });

  it('checks again at delivery: an instance that forbids private addresses does not connect to one', async () => {
    const { owner, endpoint } = await freshMerchantWithReceiver();
    const strict = await startTestKassa({
      env: { ...FAST_WEBHOOKS, KASSA_WEBHOOK_ALLOW_PRIVATE: 'false' },
      database: kassa.database,
    });
    try {
      loop = startDeliveryLoop(strict.ctx);
      await createSession(kassa, owner, checkoutRequest());
      await expect
        .poll(async () => (await deliveries(owner, endpoint.id))[0]?.attemptLog.length ?? 0)
        .toBeGreaterThanOrEqual(2);
      const [delivery] = await deliveries(owner, endpoint.id);
      expect(delivery!.status).toBe('pending');
      expect(delivery!.attemptLog[0]!.error).toMatch(/^refused: url resolves to 127\.0\.0\.1/);
      expect(receiver.received).toEqual([]);
    } finally {
      await loop?.stop();
      loop = null;
      await strict.close();
    }
  });
});

describe('two instances on one database', () => {
  it('deliver each event once per attempt', async () => {
    const { owner, endpoint } = await freshMerchantWithReceiver();
    const second = await startTestKassa({ env: FAST_WEBHOOKS, database: kassa.database });
    const loops = [startDeliveryLoop(kassa.ctx), startDeliveryLoop(second.ctx), startDeliveryLoop(second.ctx)];
    try {
      const sessions = [];
      for (let i = 0; i < 12; i++) sessions.push(await createSession(i % 2 ? kassa : second, owner, checkoutRequest()));
      await receiver.waitFor((list) => list.length >= 12);
      await new Promise((resolve) => setTimeout(resolve, 500));
      const byEvent = new Map<string, number>();
      for (const hook of receiver.received) byEvent.set(hook.body.id, (byEvent.get(hook.body.id) ?? 0) + 1);
      expect(byEvent.size).toBe(12);
      expect([...byEvent.values()].every((count) => count === 1)).toBe(true);
      expect(new Set(receiver.received.map((hook) => hook.body.data.session_id))).toEqual(
        new Set(sessions.map((s) => s.session_id)),
      );
      // One delivery in flight per endpoint: they arrive in event order.
      expect(receiver.received.map((hook) => hook.body.data.session_id)).toEqual(sessions.map((s) => s.session_id));
      await expect
        .poll(async () =>
          (await deliveries(owner, endpoint.id)).every((d) => d.status === 'succeeded' && d.attempts === 1),
        )
        .toBe(true);
    } finally {
      await Promise.all(loops.map((l) => l.stop()));
      await second.close();
    }
  });

  it('with failing answers, the receiver sees each event exactly as often as attempts were logged', async () => {
    const { owner, endpoint } = await freshMerchantWithReceiver();
    // Every third request fails: retries happen on both instances.
    let count = 0;
    receiver.fallback = { status: 200 };
    const respond = receiver.respond.bind(receiver);
    for (let i = 0; i < 30; i++) respond(++count % 3 === 0 ? { status: 500 } : { status: 200 });
    const second = await startTestKassa({ env: FAST_WEBHOOKS, database: kassa.database });
    const loops = [startDeliveryLoop(kassa.ctx), startDeliveryLoop(second.ctx)];
    try {
      for (let i = 0; i < 10; i++) await createSession(i % 2 ? kassa : second, owner, checkoutRequest());
      await expect
        .poll(async () => (await deliveries(owner, endpoint.id)).filter((d) => d.status === 'succeeded').length, {
          timeout: 15_000,
        })
        .toBe(10);
      const log = await deliveries(owner, endpoint.id);
      const received = new Map<string, number>();
      for (const hook of receiver.received) received.set(hook.body.id, (received.get(hook.body.id) ?? 0) + 1);
      expect(log.some((d) => d.attempts > 1)).toBe(true);
      for (const delivery of log) {
        expect(delivery.attemptLog).toHaveLength(delivery.attempts);
        expect(received.get(delivery.eventId), `event ${delivery.eventId}`).toBe(delivery.attempts);
        expect(delivery.attemptLog.at(-1)!.statusCode).toBe(200);
      }
    } finally {
      await Promise.all(loops.map((l) => l.stop()));
      await second.close();
    }
  });
});

describe('throughput', () => {
  it('one round drains a backlog for an endpoint, one delivery after another, in event order', async () => {
    const { owner } = await freshMerchantWithReceiver();
    const sessions = [];
    for (let i = 0; i < 6; i++) sessions.push(await createSession(kassa, owner, checkoutRequest()));
    const { runWebhookRound } = await import('../../src/webhooks/dispatcher.js');
    const { createLogger } = await import('../../src/logging.js');
    // (Other endpoints of this database may have due retries too: at least these six.)
    expect(await runWebhookRound(kassa.ctx, createLogger('silent'))).toBeGreaterThanOrEqual(6);
    expect(receiver.received.map((hook) => hook.body.data.session_id)).toEqual(sessions.map((s) => s.session_id));
  });

  it('a failed attempt gives the rest of its endpoint’s batch back: attempts counted are attempts made, and every event still arrives', async () => {
    const { owner, endpoint } = await freshMerchantWithReceiver();
    for (let i = 0; i < 4; i++) await createSession(kassa, owner, checkoutRequest());
    receiver.respond({ status: 503 });
    const { runWebhookRound } = await import('../../src/webhooks/dispatcher.js');
    const { createLogger } = await import('../../src/logging.js');
    await runWebhookRound(kassa.ctx, createLogger('silent'));
    await expect
      .poll(
        async () => {
          await runWebhookRound(kassa.ctx, createLogger('silent'));
          return (await deliveries(owner, endpoint.id)).every((d) => d.status === 'succeeded');
        },
        { timeout: 10_000 },
      )
      .toBe(true);
    // The three given back were not counted when they were leased with the first: each count is what the receiver saw.
    const seen = new Map<string, number>();
    for (const hook of receiver.received) seen.set(hook.body.id, (seen.get(hook.body.id) ?? 0) + 1);
    const after = await deliveries(owner, endpoint.id);
    expect(after.map((d) => d.attempts).sort()).toEqual([1, 1, 1, 2]);
    for (const delivery of after) expect(delivery.attempts).toBe(seen.get(delivery.eventId));
    const leased = await kassa.runtime.db.prisma.webhookDelivery.count({
      where: { endpointId: endpoint.id, leaseToken: { not: null } },
    });
    expect(leased).toBe(0);
  });
});

describe('a round told to stop (the instance shuts down)', () => {
  // Found by a review: a round went on claiming after SIGTERM and was cut at exit with its batches leased, their
  // endpoints' events held for the leases' length (up to about 10 minutes).
  it('claims nothing more, ends after the attempt in flight, and leaves nothing leased', async () => {
    const slow = await startTestKassa({ env: { ...FAST_WEBHOOKS, KASSA_WEBHOOK_TIMEOUT_MS: '1500' } });
    const sockets = new Set<net.Socket>();
    const hanging = net.createServer((socket) => void sockets.add(socket));
    await new Promise<void>((resolve) => hanging.listen(0, '127.0.0.1', resolve));
    try {
      const owner = await createMerchant(slow.ctx);
      const port = (hanging.address() as net.AddressInfo).port;
      const response = await signedRequest(slow, owner, 'post', '/webhook-endpoints', {
        url: `http://127.0.0.1:${port}/hook`,
      });
      expect(response.status).toBe(201);
      for (let i = 0; i < 5; i++) await createSession(slow, owner, checkoutRequest());
      const { runWebhookRound } = await import('../../src/webhooks/dispatcher.js');
      const { createLogger } = await import('../../src/logging.js');
      const stop = new AbortController();
      const round = runWebhookRound(slow.ctx, createLogger('silent'), stop.signal);
      await expect.poll(() => sockets.size, { timeout: 5_000 }).toBe(1);
      const stoppedAt = Date.now();
      stop.abort();
      expect(await round).toBe(1);
      // The attempt in flight ran to its timeout (1.5 s); nothing after it.
      expect(Date.now() - stoppedAt).toBeLessThan(2_500);
      expect(sockets.size).toBe(1);
      const rows = await slow.runtime.db.prisma.webhookDelivery.findMany({ where: { endpointId: response.body.id } });
      expect(rows.filter((row) => row.leaseToken !== null)).toEqual([]);
      expect(rows.map((row) => row.attempts).sort()).toEqual([0, 0, 0, 0, 1]);
    } finally {
      for (const socket of sockets) socket.destroy();
      await new Promise((resolve) => hanging.close(resolve));
      await slow.close();
    }
  });
});

describe('fairness between merchants', () => {
  /**
   * An attacker merchant with `endpoints` endpoints that accept and never answer (each attempt in flight for up to
   * `timeoutMs`), a victim merchant with one fast endpoint, and the delivery loop running; `test` runs against them.
   */
  async function withHangingEndpoints(
    endpoints: number,
    timeoutMs: number,
    test: (scene: {
      kassa: TestKassa;
      attacker: TestMerchant;
      victim: TestMerchant;
      sockets: Set<net.Socket>;
      fast: WebhookReceiver;
    }) => Promise<void>,
  ): Promise<void> {
    const kassa = await startTestKassa({
      env: { ...FAST_WEBHOOKS, KASSA_WEBHOOK_TIMEOUT_MS: String(timeoutMs), KASSA_WEBHOOK_POLL_MS: '50' },
    });
    const sockets = new Set<net.Socket>();
    let closing = false;
    // Accepts and never answers; once the test ends, drops what comes (retries) so the delivery loop stops at once.
    const hanging = net.createServer((socket) => (closing ? socket.destroy() : void sockets.add(socket)));
    await new Promise<void>((resolve) => hanging.listen(0, '127.0.0.1', resolve));
    const port = (hanging.address() as net.AddressInfo).port;
    const fast = await startWebhookReceiver();
    let delivery: { stop(): Promise<void> } | null = null;
    try {
      const attacker = await createMerchant(kassa.ctx);
      for (let i = 0; i < endpoints; i++) {
        const response = await signedRequest(kassa, attacker, 'post', '/webhook-endpoints', {
          url: `http://127.0.0.1:${port}/hook-${i}`,
        });
        expect(response.status).toBe(201);
      }
      const victim = await createMerchant(kassa.ctx);
      expect((await signedRequest(kassa, victim, 'post', '/webhook-endpoints', { url: fast.url })).status).toBe(201);
      delivery = startDeliveryLoop(kassa.ctx);
      await test({ kassa, attacker, victim, sockets, fast });
    } finally {
      closing = true;
      for (const socket of sockets) socket.destroy();
      await delivery?.stop();
      await fast.close();
      await new Promise((resolve) => hanging.close(resolve));
      await kassa.close();
    }
  }

  // Found by an attacker-minded review: a round waited for its slowest attempt before claiming again, so a merchant's
  // endpoints that accept and never answer held every other merchant's webhooks for the whole attempt timeout.
  it("a merchant's endpoints that accept and never answer do not hold another merchant's webhooks for the timeout", async () => {
    await withHangingEndpoints(3, 4_000, async ({ kassa, attacker, victim, sockets, fast }) => {
      await createSession(kassa, attacker, checkoutRequest());
      // The attacker's three attempts are in flight, each for up to 4 s.
      await expect.poll(() => sockets.size, { timeout: 5_000 }).toBeGreaterThanOrEqual(3);
      const sentAt = Date.now();
      await createSession(kassa, victim, checkoutRequest());
      await fast.waitFor((list) => list.length >= 1);
      expect(Date.now() - sentAt).toBeLessThan(2_000);
    });
  });

  // Found by an attacker-minded review: endpoints were drawn at random, so a merchant's 20 endpoints (the most one may
  // have) that accept and never answer took all 20 of an instance's slots, and every other merchant's webhooks waited
  // a timeout for one to free.
  it("a merchant's 20 endpoints that never answer take at most half the slots: another merchant's webhook goes at once", async () => {
    await withHangingEndpoints(20, 6_000, async ({ kassa, attacker, victim, sockets, fast }) => {
      await createSession(kassa, attacker, checkoutRequest());
      // Ten of the attacker's attempts are in flight, each for up to 6 s; the other ten wait their turn.
      await expect.poll(() => sockets.size, { timeout: 5_000 }).toBeGreaterThanOrEqual(10);
      await new Promise((resolve) => setTimeout(resolve, 300));
      expect(sockets.size).toBe(10);
      const sentAt = Date.now();
      await createSession(kassa, victim, checkoutRequest());
      await fast.waitFor((list) => list.length >= 1);
      expect(Date.now() - sentAt).toBeLessThan(3_000);
    });
  });
});

describe('the lease of a batch', () => {
  it(
    'is one lease for the batch, renewed before each attempt; a batch whose lease another claim took stops',
    { timeout: 90_000 },
    async () => {
      const { owner, endpoint } = await freshMerchantWithReceiver(['checkout_session.created']);
      for (let i = 0; i < 3; i++) await createSession(kassa, owner, checkoutRequest());
      const queue = kassa.ctx.store.webhooks;
      const prisma = kassa.runtime.db.prisma;
      await expect
        .poll(async () => {
          await queue.fanOut({ gapSeconds: kassa.ctx.webhooks.outboxGapSeconds, giveUpHours: 1, batch: 500 });
          return prisma.webhookDelivery.count({ where: { endpointId: endpoint.id } });
        })
        .toBe(3);
      const leases = async () =>
        prisma.webhookDelivery.findMany({ where: { endpointId: endpoint.id }, orderBy: { eventSeq: 'asc' } });
      const claimOurs = async (leaseMs: number) => {
        // Every due endpoint (earlier tests leave other merchants' retries due), so ours is never crowded out; others go back.
        const claims = await queue.claimDue(1_000, 25, leaseMs, 1_000);
        await queue.releaseClaims(claims.filter((claim) => claim.endpoint.id !== endpoint.id));
        return claims.filter((claim) => claim.endpoint.id === endpoint.id);
      };

      const batch = await claimOurs(10_000);
      expect(batch).toHaveLength(3);
      const claimed = await leases();
      // One lease for the whole batch (not longer for later places in it).
      expect(new Set(claimed.map((row) => row.lockedUntil!.getTime())).size).toBe(1);
      expect(claimed[0]!.lockedUntil!.getTime() - Date.now()).toBeLessThanOrEqual(10_000);
      expect(await queue.renewLease(batch.slice(1), 60_000)).toBe(true);
      const renewed = await leases();
      expect(renewed[0]!.lockedUntil).toEqual(claimed[0]!.lockedUntil);
      for (const row of renewed.slice(1)) expect(row.lockedUntil!.getTime() - Date.now()).toBeGreaterThan(50_000);

      // The batch's holder stalls past its lease: another instance's claim takes the deliveries over.
      await prisma.webhookDelivery.updateMany({
        where: { endpointId: endpoint.id },
        data: { lockedUntil: new Date(Date.now() - 1_000) },
      });
      const takenOver = await claimOurs(30_000);
      expect(takenOver.map((claim) => claim.deliveryId)).toEqual(batch.map((claim) => claim.deliveryId));
      const before = await leases();
      expect(await queue.renewLease(batch.slice(1), 60_000)).toBe(false);
      expect(await leases()).toEqual(before);

      // The dispatcher: the first attempt is made, then the lease is found taken over and the rest is not attempted.
      await queue.releaseClaims(takenOver);
      const { runWebhookRound } = await import('../../src/webhooks/dispatcher.js');
      const { createLogger } = await import('../../src/logging.js');
      let stolen = false;
      let takenOverAgain: string[] = [];
      const webhooks = {
        ...queue,
        async recordAttempt(...args: Parameters<typeof queue.recordAttempt>) {
          await queue.recordAttempt(...args);
          // After our endpoint's first attempt (the round may attempt other merchants' retries too).
          if (stolen || args[0].endpoint.id !== endpoint.id) return;
          stolen = true;
          // Another instance's claim in one statement (a new token and lease): lapsing the lease first let this
          // round's own next claim take the rows before ours could.
          const rows = await prisma.$queryRaw<Array<{ id: string }>>`
            UPDATE webhook_deliveries SET lease_token = gen_random_uuid(), locked_until = now() + interval '30 seconds'
            WHERE endpoint_id = ${endpoint.id}::uuid AND status = 'pending' RETURNING id`;
          takenOverAgain = rows.map((row) => row.id);
        },
      };
      const ctx = { ...kassa.ctx, store: { ...kassa.ctx.store, webhooks } };
      // Rounds until ours was attempted: on a loaded host one round's budget can end before it reaches our endpoint.
      for (const end = Date.now() + 30_000; !stolen && Date.now() < end;)
        await runWebhookRound(ctx, createLogger('silent'));
      expect(takenOverAgain.sort()).toEqual(
        batch
          .slice(1)
          .map((claim) => claim.deliveryId)
          .sort(),
      );
      expect(receiver.received.map((hook) => hook.body.id)).toEqual([batch[0]!.event.id]);
      const settled = await leases();
      expect(settled.map((row) => row.status)).toEqual(['succeeded', 'pending', 'pending']);
      expect(settled[1]!.lockedUntil!.getTime() - Date.now()).toBeGreaterThan(20_000);
    },
  );
});
