import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startTestKassa, type TestKassa } from '../support/kassa.js';
import { createMerchant, type TestMerchant } from '../factories/merchant.js';
import { checkoutRequest } from '../factories/checkout-request.js';
import { PUBLIC_FIELDS, controllableClock, createSession, expectErrorBody } from '../support/rest-kassa.js';

/**
 * GET /checkout-sessions/:id: docs/api/rest.md#the-public-view, docs/payment-rules.md#statuses (expiry at read
 * time).
 */

const time = controllableClock();
let kassa: TestKassa;
let merchant: TestMerchant;

beforeAll(async () => {
  kassa = await startTestKassa({ clock: time.clock });
  merchant = await createMerchant(kassa.ctx, { name: 'Secret Org Name' });
});
afterAll(() => kassa?.close());
afterEach(() => time.release());

const publicPart = (view: Record<string, unknown>) =>
  Object.fromEntries(PUBLIC_FIELDS.map((field) => [field, view[field]]));

describe('200: the public view', () => {
  it('has exactly the fields of the public view with the values of the create response', async () => {
    const created = await createSession(
      kassa,
      merchant,
      checkoutRequest({
        items: [{ name: 'Hidden item name', quantity: 1, unit_price: 42, product_id: 'sku-hidden-product' }],
        metadata: { internal_note: 'hidden-metadata-value' },
      }),
    );
    const response = await kassa.http.get(`/checkout-sessions/${created.session_id}`);
    expect(response.status).toBe(200);
    expect(response.headers['content-type']).toMatch(/^application\/json/);
    expect(Object.keys(response.body).sort()).toEqual([...PUBLIC_FIELDS].sort());
    expect(response.body).toEqual(publicPart(created));

    // Nothing merchant-only leaks, not even inside another field.
    const text = JSON.stringify(response.body);
    for (const secret of [
      merchant.organisationId,
      'Secret Org Name',
      'hidden-metadata-value',
      'sku-hidden-product',
      'Hidden item name',
      'checkout_url',
    ]) {
      expect(text).not.toContain(secret);
    }
  });

  it('needs no merchant key, and ignores one that is wrong', async () => {
    const created = await createSession(kassa, merchant, checkoutRequest());
    const response = await kassa.http
      .get(`/checkout-sessions/${created.session_id}`)
      .set('X-Service-Key', 'pk_nonsense');
    expect(response.status).toBe(200);
    expect(response.body.session_id).toBe(created.session_id);
  });

  it('accepts the id in upper case and answers it in lower case', async () => {
    const created = await createSession(kassa, merchant, checkoutRequest());
    const response = await kassa.http.get(`/checkout-sessions/${created.session_id.toUpperCase()}`);
    expect(response.status).toBe(200);
    expect(response.body.session_id).toBe(created.session_id);
  });

  it('reading changes nothing', async () => {
    const created = await createSession(kassa, merchant, checkoutRequest());
    const first = await kassa.http.get(`/checkout-sessions/${created.session_id}`);
    const second = await kassa.http.get(`/checkout-sessions/${created.session_id}`);
    expect(second.body).toEqual(first.body);
    const prisma = kassa.runtime.db.prisma;
    expect(await prisma.checkoutSessionStatusChange.count({ where: { sessionId: created.session_id } })).toBe(1);
    expect(await prisma.outboxEvent.count({ where: { sessionId: created.session_id } })).toBe(1);
  });
});

describe('400 and 404', () => {
  it.each([
    ['a word', 'not-a-uuid'],
    ['a number', '12345'],
    ['a uuid without dashes', '0f8fad5bd9cb469fa16570867728950e'],
    ['a uuid with one character more', '0f8fad5b-d9cb-469f-a165-70867728950e0'],
    ['a uuid with a non-hex character', '0f8fad5b-d9cb-469f-a165-70867728950g'],
    ['a uuid in braces', '{0f8fad5b-d9cb-469f-a165-70867728950e}'],
    ['SQL', "1' OR '1'='1"],
    ['very long', 'a'.repeat(2000)],
    ['unicode', 'ünïcödé'],
  ])('a malformed id (%s) → 400', async (_what, id) => {
    const response = await kassa.http.get(`/checkout-sessions/${encodeURIComponent(id)}`);
    expectErrorBody(response, 400, ['id must be a UUID']);
  });

  it('an unknown uuid → 404 naming it', async () => {
    const id = '0f8fad5b-d9cb-469f-a165-70867728950e';
    expectErrorBody(await kassa.http.get(`/checkout-sessions/${id}`), 404, `Checkout session ${id} not found`);
    // The nil uuid is well-formed too.
    const nil = '00000000-0000-0000-0000-000000000000';
    expectErrorBody(await kassa.http.get(`/checkout-sessions/${nil}`), 404, `Checkout session ${nil} not found`);
  });
});

describe('expiry is settled at read time', () => {
  it('shows expired from expires_at on, and writes the history row and the event exactly once', async () => {
    const start = Date.now();
    time.freeze(start);
    const created = await createSession(kassa, merchant, checkoutRequest({ expires_in_minutes: 5 }));
    const expiresAt = Date.parse(created.expires_at);
    expect(expiresAt).toBe(start + 5 * 60_000);
    const prisma = kassa.runtime.db.prisma;
    const where = { sessionId: created.session_id };

    // One millisecond before: still open, nothing written.
    time.freeze(expiresAt - 1);
    const before = await kassa.http.get(`/checkout-sessions/${created.session_id}`);
    expect(before.status).toBe(200);
    expect(before.body.status).toBe('waiting_payment');
    expect(await prisma.checkoutSessionStatusChange.count({ where })).toBe(1);

    // At expires_at the session is over, though no sweeper ran.
    time.freeze(expiresAt);
    const at = await kassa.http.get(`/checkout-sessions/${created.session_id}`);
    expect(at.status).toBe(200);
    expect(at.body).toEqual({ ...publicPart(created), status: 'expired' });

    time.freeze(expiresAt + 60 * 60_000);
    const later = await kassa.http.get(`/checkout-sessions/${created.session_id}`);
    expect(later.body).toEqual(at.body);

    const row = await prisma.checkoutSession.findUniqueOrThrow({ where: { id: created.session_id } });
    expect(row.status).toBe('expired');
    const history = await prisma.checkoutSessionStatusChange.findMany({ where, orderBy: { id: 'asc' } });
    expect(history.map((h) => [h.fromStatus, h.toStatus])).toEqual([
      [null, 'waiting_payment'],
      ['waiting_payment', 'expired'],
    ]);
    expect(history[1]!.cause).toBe('session expired');
    expect(history[1]!.createdAt.getTime()).toBe(expiresAt);

    const events = await prisma.outboxEvent.findMany({ where, orderBy: { seq: 'asc' } });
    expect(events.map((e) => e.type)).toEqual(['checkout_session.created', 'checkout_session.expired']);
    expect(events[1]!.createdAt.getTime()).toBe(expiresAt);
    expect(events[1]!.payload).toMatchObject({
      session_id: created.session_id,
      status: 'expired',
      organisation_id: merchant.organisationId,
    });
  });

  it('a session of the default lifetime is still open after 59 minutes', async () => {
    const start = Date.now();
    time.freeze(start);
    const created = await createSession(kassa, merchant, checkoutRequest());
    time.freeze(start + 59 * 60_000);
    expect((await kassa.http.get(`/checkout-sessions/${created.session_id}`)).body.status).toBe('waiting_payment');
    time.freeze(start + 60 * 60_000);
    expect((await kassa.http.get(`/checkout-sessions/${created.session_id}`)).body.status).toBe('expired');
  });
});
