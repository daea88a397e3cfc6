import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPaymentLink } from '../../src/domain/payment-links/payment-links.js';
import { createMerchant, type TestMerchant } from '../factories/merchant.js';
import { createLink, linkCall, paymentLinkRequest, visitLink } from '../factories/payment-link.js';
import { startTestKassa, type TestKassa } from '../support/kassa.js';
import {
  controllableClock,
  expectErrorBody,
  expectErrorCode,
  ISO_DATE,
  PUBLIC_FIELDS,
  UUID,
} from '../support/rest-kassa.js';

/**
 * Issue 12, payment links over REST on a real PostgreSQL: the merchant's signed routes
 * (create, list, get, patch) with every error path, and the payer's public visit that
 * creates a checkout session carrying the link's fields.
 */

const time = controllableClock();
let kassa: TestKassa;
let shop: TestMerchant;
let other: TestMerchant;

beforeAll(async () => {
  kassa = await startTestKassa({ clock: time.clock });
  shop = await createMerchant(kassa.ctx, { name: 'Bean Shop' });
  other = await createMerchant(kassa.ctx);
});

afterAll(async () => {
  await kassa?.close();
});

// Payers' keys on the public route: at least 16 characters (docs/hosted-pages.md#payment-links).
const KEY_1 = 'visit-1-5f0c2a9e8b7d';
const KEY_2 = 'visit-2-0a1b2c3d4e5f';
const KEY_RULE =
  'Idempotency-Key must be 16 to 255 printable ASCII characters on this public route (a random value, such as a UUID)';

const LINK_FIELDS = [
  'payment_link_id',
  'organisation_id',
  'url',
  'name',
  'currency',
  'items',
  'amount_fiat',
  'total_amount_fiat',
  'expires_in_minutes',
  'identity_options',
  'anonymous',
  'requires_payer_identity',
  'max_uses',
  'uses',
  'active',
  'state',
  'expires_at',
  'metadata',
  'created_at',
  'updated_at',
].sort();

describe('POST /payment-links', () => {
  it('creates a fixed-basket link: 201 with its id and url {checkout_base_url}/l/<id>', async () => {
    const response = await linkCall(
      kassa,
      shop,
      'post',
      '/payment-links',
      paymentLinkRequest({ max_uses: 3, metadata: { campaign: 'spring' }, expires_in_minutes: 30 }),
    );
    expect(response.status, JSON.stringify(response.body)).toBe(201);
    const link = response.body;
    expect(Object.keys(link).sort()).toEqual(LINK_FIELDS);
    expect(link.payment_link_id).toMatch(UUID);
    expect(link.url).toBe(`https://pay.example.test/l/${link.payment_link_id}`);
    expect(link).toMatchObject({
      organisation_id: shop.organisationId,
      name: 'Coffee subscription',
      currency: 'USD',
      items: [
        {
          name: 'Coffee beans',
          quantity: 2,
          unit_price: '12.50000000',
          total_price: '25.00000000',
          product_id: 'beans-1kg',
        },
        { name: 'Grinder', quantity: 1, unit_price: '80.00000000', total_price: '80.00000000', product_id: null },
      ],
      amount_fiat: null,
      total_amount_fiat: '105.00000000',
      expires_in_minutes: 30,
      identity_options: ['email'],
      anonymous: false,
      requires_payer_identity: true,
      max_uses: 3,
      uses: 0,
      active: true,
      state: 'active',
      expires_at: null,
      metadata: { campaign: 'spring' },
    });
    expect(link.created_at).toMatch(ISO_DATE);
  });

  it('creates an open-amount link the payer prices, anonymous when no identity is asked', async () => {
    const link = await createLink(kassa, shop, {
      items: undefined,
      amount_fiat: { min: 5, max: 500.5 },
      identity_options: undefined,
      currency: 'eur',
    });
    expect(link).toMatchObject({
      items: null,
      amount_fiat: { min: '5.00000000', max: '500.50000000' },
      total_amount_fiat: null,
      currency: 'EUR',
      anonymous: true,
      requires_payer_identity: false,
      identity_options: [],
      expires_in_minutes: 60,
    });
  });

  it('refuses a bad body with 400 listing every problem', async () => {
    const both = await linkCall(
      kassa,
      shop,
      'post',
      '/payment-links',
      paymentLinkRequest({
        amount_fiat: { min: 10, max: 5 },
        identity_options: ['email', 'phone'],
        max_uses: 0,
        expires_at: 'tomorrow',
        extra: 1,
      }),
    );
    expectErrorCode(both, 400, 'validation_failed');
    expect(both.body.message).toEqual(
      expect.arrayContaining([
        'property extra should not exist',
        'amount_fiat max must not be less than min',
        'identity_options.1 must be one of email, telegram, username',
        'max_uses must be an integer from 1 to 1000000000, or null',
        'expires_at must be an ISO 8601 date-time with a time zone, or null',
      ]),
    );
    const neither = await linkCall(
      kassa,
      shop,
      'post',
      '/payment-links',
      paymentLinkRequest({ items: undefined, name: '' }),
    );
    expectErrorCode(neither, 400, 'validation_failed', [
      'name should not be empty',
      'body must have exactly one of items and amount_fiat',
    ]);
    const contradicting = await linkCall(
      kassa,
      shop,
      'post',
      '/payment-links',
      paymentLinkRequest({ anonymous: true }),
    );
    expectErrorCode(contradicting, 400, 'validation_failed', ['identity_options must be empty when anonymous is true']);
    const nobody = await linkCall(
      kassa,
      shop,
      'post',
      '/payment-links',
      paymentLinkRequest({ anonymous: false, identity_options: [] }),
    );
    expectErrorCode(nobody, 400, 'validation_failed', [
      'identity_options must name at least one of email, telegram, username unless anonymous is true',
    ]);
    const items = await linkCall(
      kassa,
      shop,
      'post',
      '/payment-links',
      paymentLinkRequest({ items: [{ name: 'x', quantity: 0, unit_price: -1 }] }),
    );
    expectErrorCode(items, 400, 'validation_failed', [
      'items.0.quantity must not be less than 1',
      'items.0.unit_price must not be less than 0',
    ]);
    const currency = await linkCall(kassa, shop, 'post', '/payment-links', paymentLinkRequest({ currency: 'XYZ' }));
    expectErrorCode(currency, 400, 'validation_failed', [
      expect.stringMatching(/^currency XYZ is not supported/),
    ] as never);
    const past = await linkCall(
      kassa,
      shop,
      'post',
      '/payment-links',
      paymentLinkRequest({ expires_at: new Date(Date.now() - 60_000).toISOString() }),
    );
    expectErrorCode(past, 400, 'validation_failed', ['expires_at must be in the future']);
    // A basket that sums to 0 could never be paid (each visit would be refused): refused at creation.
    const free = await linkCall(
      kassa,
      shop,
      'post',
      '/payment-links',
      paymentLinkRequest({ items: [{ name: 'Gift', quantity: 2, unit_price: 0 }] }),
    );
    expectErrorCode(free, 400, 'validation_failed', ['total amount must be greater than 0']);
    expectErrorCode(await linkCall(kassa, shop, 'post', '/payment-links', '[]'), 400, 'validation_failed', [
      'body must be a JSON object',
    ]);
  });

  it('is signed: 401 without or with a wrong signature, before the body is looked at', async () => {
    const unsigned = await kassa.http.post('/payment-links').set('Content-Type', 'application/json').send('{');
    expectErrorBody(
      unsigned,
      401,
      'Missing signing headers: X-Service-Key, X-Service-Timestamp and X-Service-Signature are all required',
    );
    const wrong = await linkCall(
      kassa,
      { apiKey: shop.apiKey, apiSecret: 'sk_wrong' },
      'post',
      '/payment-links',
      paymentLinkRequest(),
    );
    expectErrorCode(wrong, 401, 'signature_invalid', /^Invalid signature/);
  });

  it('answers 422 for an organisation without a receiving wallet, 415 for a non-JSON body, 405 for other methods', async () => {
    const walletless = await createMerchant(kassa.ctx, { wallet: null });
    expectErrorBody(
      await linkCall(kassa, walletless, 'post', '/payment-links', paymentLinkRequest()),
      422,
      /no receiving wallet/,
    );
    const form = await linkCall(kassa, shop, 'post', '/payment-links', 'a=1').set(
      'Content-Type',
      'application/x-www-form-urlencoded',
    );
    expectErrorCode(form, 415, 'unsupported_media_type');
    const put = await kassa.http.put('/payment-links');
    expectErrorCode(put, 405, 'method_not_allowed');
    expect(put.headers.allow).toBe('GET, POST');
  });
});

describe('GET and PATCH /payment-links', () => {
  it("lists the caller's links newest first and never another organisation's", async () => {
    const mine = await createLink(kassa, shop, { name: 'Listed' });
    await createLink(kassa, other, { name: 'Not mine' });
    const list = await linkCall(kassa, shop, 'get', '/payment-links');
    expect(list.status).toBe(200);
    expect(Object.keys(list.body)).toEqual(['data']);
    expect(list.body.data[0].payment_link_id).toBe(mine.payment_link_id);
    expect(
      list.body.data.every((link: { organisation_id: string }) => link.organisation_id === shop.organisationId),
    ).toBe(true);
  });

  it('shows one link; 404 for an unknown one or another organisation’s, 400 for a malformed id', async () => {
    const link = await createLink(kassa, shop);
    const shown = await linkCall(kassa, shop, 'get', `/payment-links/${link.payment_link_id}`);
    expect(shown.status).toBe(200);
    expect(shown.body).toEqual(link);
    expectErrorCode(
      await linkCall(kassa, other, 'get', `/payment-links/${link.payment_link_id}`),
      404,
      'not_found',
      `Payment link ${link.payment_link_id} not found`,
    );
    expectErrorCode(
      await linkCall(kassa, shop, 'get', '/payment-links/00000000-0000-4000-8000-000000000000'),
      404,
      'not_found',
    );
    expectErrorCode(await linkCall(kassa, shop, 'get', '/payment-links/nope'), 400, 'validation_failed', [
      'id must be a UUID',
    ]);
    expectErrorBody(await kassa.http.get(`/payment-links/${link.payment_link_id}`), 401);
    expectErrorCode(await kassa.http.delete(`/payment-links/${link.payment_link_id}`), 405, 'method_not_allowed');
  });

  it('renames, deactivates and changes the limits; refuses what cannot change', async () => {
    const link = await createLink(kassa, shop);
    const patched = await linkCall(kassa, shop, 'patch', `/payment-links/${link.payment_link_id}`, {
      name: 'Renamed',
      active: false,
      max_uses: 10,
      metadata: { v: 2 },
    });
    expect(patched.status, JSON.stringify(patched.body)).toBe(200);
    expect(patched.body).toMatchObject({
      name: 'Renamed',
      active: false,
      state: 'inactive',
      max_uses: 10,
      metadata: { v: 2 },
    });
    const cleared = await linkCall(kassa, shop, 'patch', `/payment-links/${link.payment_link_id}`, {
      max_uses: null,
      active: true,
    });
    expect(cleared.body).toMatchObject({ max_uses: null, active: true, state: 'active' });
    const immutable = await linkCall(kassa, shop, 'patch', `/payment-links/nope`, { currency: 'EUR', active: 'no' });
    expectErrorCode(immutable, 400, 'validation_failed', [
      'id must be a UUID',
      'active must be a boolean',
      'property currency should not exist',
    ]);
    expectErrorCode(
      await linkCall(kassa, other, 'patch', `/payment-links/${link.payment_link_id}`, { active: false }),
      404,
      'not_found',
    );
    const past = await linkCall(kassa, shop, 'patch', `/payment-links/${link.payment_link_id}`, {
      expires_at: '2000-01-01T00:00:00Z',
    });
    expectErrorCode(past, 400, 'validation_failed', ['expires_at must be in the future']);
  });
});

describe('POST /payment-links/:id/sessions (the payer, no key)', () => {
  it('creates a session with the link’s fields and the payer’s identity; 201 with the public view and checkout_url', async () => {
    const link = await createLink(kassa, shop, {
      identity_options: ['email', 'telegram'],
      metadata: { campaign: 'spring' },
      expires_in_minutes: 30,
    });
    const response = await visitLink(kassa, link.payment_link_id, {
      email: 'payer@example.com',
      telegram: '@Payer_One',
    });
    expect(response.status, JSON.stringify(response.body)).toBe(201);
    const session = response.body;
    expect(Object.keys(session).sort()).toEqual([...PUBLIC_FIELDS, 'checkout_url'].sort());
    expect(session.checkout_url).toBe(`https://pay.example.test/pay/${session.session_id}`);
    expect(session).toMatchObject({
      status: 'waiting_payment',
      source: 'payment_link',
      from_payment_link: true,
      product_payment_link_id: link.payment_link_id,
      anonymous: false,
      requires_payer_identity: true,
      identity_options: ['email', 'telegram'],
      total_amount_fiat: '105.00000000',
      fiat_currency: 'USD',
      user: { email: 'payer@example.com', telegram_id: '@payer_one', username: null },
    });
    expect(session.user.id).toMatch(/^payer_[0-9a-f]{32}$/);
    expect(Date.parse(session.expires_at) - time.clock().getTime()).toBeGreaterThan(29 * 60_000);
    // The same identity on another visit: the same opaque id.
    const again = await visitLink(kassa, link.payment_link_id, { email: 'PAYER@example.com', telegram: '@payer_one' });
    expect(again.body.user.id).toBe(session.user.id);
    // The merchant's view and the created event say which link; metadata and items come from the link.
    const event = await kassa.runtime.db.prisma.outboxEvent.findFirst({
      where: { sessionId: session.session_id, type: 'checkout_session.created' },
    });
    expect(event!.payload).toMatchObject({
      product_payment_link_id: link.payment_link_id,
      source: 'payment_link',
      from_payment_link: true,
      organisation_name: 'Bean Shop',
      metadata: { campaign: 'spring' },
      items: [
        { name: 'Coffee beans', quantity: 2, product_id: 'beans-1kg' },
        { name: 'Grinder', quantity: 1 },
      ],
    });
    expect((await linkCall(kassa, shop, 'get', `/payment-links/${link.payment_link_id}`)).body.uses).toBe(2);
  });

  it('checks the identity against what the link asks: 400 naming each problem', async () => {
    const link = await createLink(kassa, shop, { identity_options: ['email', 'telegram'] });
    expectErrorCode(await visitLink(kassa, link.payment_link_id, {}), 400, 'validation_failed', [
      'one of email, telegram is required',
    ]);
    expectErrorCode(
      await visitLink(kassa, link.payment_link_id, { email: 'not-an-email', telegram: '@ab' }),
      400,
      'validation_failed',
      [
        'email must be an email address',
        'telegram must be a Telegram username (@name, 5 to 32 letters, digits or _) or a numeric user id',
      ],
    );
    // The body's shape is checked first, as for create; then the link's rules, all at once.
    expectErrorCode(
      await visitLink(kassa, link.payment_link_id, { email: 'a@b.example', other: 1 }),
      400,
      'validation_failed',
      ['property other should not exist'],
    );
    expectErrorCode(
      await visitLink(kassa, link.payment_link_id, { email: 'a@b.example', username: 'bob', amount: '5' }),
      400,
      'validation_failed',
      [
        'username is not asked for by this payment link',
        'amount is not asked for by this payment link (it has a fixed price)',
      ],
    );
    expect((await linkCall(kassa, shop, 'get', `/payment-links/${link.payment_link_id}`)).body.uses).toBe(0);
  });

  it('refuses markup and control, bidi or format characters in every identity field (400, every problem named)', async () => {
    const link = await createLink(kassa, shop, { identity_options: ['email', 'telegram', 'username'] });
    for (const email of ['"><svg/onload=alert(1)>@x.yz', '<b>@a.bc']) {
      expectErrorCode(await visitLink(kassa, link.payment_link_id, { email }), 400, 'validation_failed', [
        'email must be an email address',
      ]);
    }
    expectErrorCode(
      await visitLink(kassa, link.payment_link_id, {
        email: 'pay\u202eer@example.com',
        telegram: '\ufeff@alice_1',
        username: 'bob\u009b',
      }),
      400,
      'validation_failed',
      [
        'email must not contain control or invisible formatting characters (found U+202E)',
        'telegram must not contain control or invisible formatting characters (found U+FEFF)',
        'username must not contain control or invisible formatting characters (found U+009B)',
      ],
    );
    expectErrorCode(
      await visitLink(kassa, link.payment_link_id, { username: '<img src=x onerror=alert(1)>' }),
      400,
      'validation_failed',
      ['username must not contain < or >'],
    );
    expectErrorCode(
      await visitLink(kassa, link.payment_link_id, { username: '\u202eevil' }),
      400,
      'validation_failed',
      ['username must not contain control or invisible formatting characters (found U+202E)'],
    );
    expect((await linkCall(kassa, shop, 'get', `/payment-links/${link.payment_link_id}`)).body.uses).toBe(0);
    const accepted = await visitLink(kassa, link.payment_link_id, { username: "  O'Brien & Söhne " });
    expect(accepted.status, JSON.stringify(accepted.body)).toBe(201);
    expect(accepted.body.user).toMatchObject({ username: "O'Brien & Söhne", email: null, telegram_id: null });
  });

  it('prices an open amount at the payer’s choice within the link’s range, as one line item', async () => {
    const link = await createLink(kassa, shop, {
      name: 'Donation',
      items: undefined,
      amount_fiat: { min: 1, max: 100 },
      identity_options: undefined,
    });
    const session = await visitLink(kassa, link.payment_link_id, { amount: '12.34' });
    expect(session.status, JSON.stringify(session.body)).toBe(201);
    expect(session.body).toMatchObject({
      total_amount_fiat: '12.34000000',
      anonymous: true,
      requires_payer_identity: false,
      identity_options: [],
      user: { email: null, telegram_id: null, username: null },
    });
    expect(session.body.user.id).toMatch(/^anon_[0-9a-f]{32}$/);
    const merchantView = await kassa.runtime.db.prisma.checkoutSessionItem.findMany({
      where: { sessionId: session.body.session_id },
    });
    expect(merchantView.map((item) => [item.name, item.quantity, item.unitPrice.toString()])).toEqual([
      ['Donation', 1, '12.34'],
    ]);
    expectErrorCode(await visitLink(kassa, link.payment_link_id, { amount: '100.01' }), 400, 'validation_failed', [
      'amount must be from 1 to 100 USD',
    ]);
    expectErrorCode(await visitLink(kassa, link.payment_link_id, { amount: '1e3' }), 400, 'validation_failed', [
      'amount must be a decimal number with at most 8 decimal places',
    ]);
    expectErrorCode(await visitLink(kassa, link.payment_link_id, {}), 400, 'validation_failed', ['amount is required']);
    expectErrorCode(
      await visitLink(kassa, link.payment_link_id, { email: 'a@b.example', amount: 5 }),
      400,
      'validation_failed',
      ['email is not asked for by this payment link'],
    );
  });

  it('an inactive or expired link answers 410, a used-up one 409; unknown 404, malformed 400', async () => {
    const inactive = await createLink(kassa, shop, { active: false });
    expectErrorCode(
      await visitLink(kassa, inactive.payment_link_id, { email: 'a@b.example' }),
      410,
      'link_inactive',
      `Payment link ${inactive.payment_link_id} is no longer active`,
    );
    const expiresAt = new Date(time.clock().getTime() + 60_000).toISOString();
    const expiring = await createLink(kassa, shop, { expires_at: expiresAt });
    time.freeze(Date.parse(expiresAt) + 1);
    try {
      expectErrorCode(
        await visitLink(kassa, expiring.payment_link_id, { email: 'a@b.example' }),
        410,
        'link_expired',
        `Payment link ${expiring.payment_link_id} expired at ${expiresAt}`,
      );
    } finally {
      time.release();
    }
    const once = await createLink(kassa, shop, { max_uses: 1 });
    expect((await visitLink(kassa, once.payment_link_id, { email: 'a@b.example' })).status).toBe(201);
    // The page hides counts, and so does its API: the 409 does not say what max_uses is.
    expectErrorCode(
      await visitLink(kassa, once.payment_link_id, { email: 'a@b.example' }),
      409,
      'link_used_up',
      `Payment link ${once.payment_link_id} has been used the most times allowed`,
    );
    expect((await linkCall(kassa, shop, 'get', `/payment-links/${once.payment_link_id}`)).body).toMatchObject({
      uses: 1,
      state: 'used_up',
    });
    expectErrorCode(
      await visitLink(kassa, '00000000-0000-4000-8000-000000000000', {}),
      404,
      'not_found',
      'Payment link 00000000-0000-4000-8000-000000000000 not found',
    );
    expectErrorCode(await visitLink(kassa, 'nope', {}), 400, 'validation_failed', ['id must be a UUID']);
    expectErrorCode(await visitLink(kassa, once.payment_link_id, '{'), 400, 'validation_failed');
    expectErrorCode(await kassa.http.get(`/payment-links/${once.payment_link_id}/sessions`), 405, 'method_not_allowed');
  });

  it('honours Idempotency-Key: a retried visit answers the same session and counts no second use', async () => {
    const link = await createLink(kassa, shop, { max_uses: 1, identity_options: undefined });
    const first = await visitLink(kassa, link.payment_link_id, {}, { idempotencyKey: KEY_1 });
    expect(first.status).toBe(201);
    // Used up now, but the retry of the visit that used it still gets its session.
    const retry = await visitLink(kassa, link.payment_link_id, {}, { idempotencyKey: KEY_1 });
    expect(retry.status).toBe(201);
    expect(retry.headers['idempotent-replayed']).toBe('true');
    expect(retry.body.session_id).toBe(first.body.session_id);
    expect((await linkCall(kassa, shop, 'get', `/payment-links/${link.payment_link_id}`)).body.uses).toBe(1);
    expectErrorBody(await visitLink(kassa, link.payment_link_id, {}, { idempotencyKey: KEY_2 }), 409);
    expectErrorCode(
      await visitLink(kassa, link.payment_link_id, {}, { idempotencyKey: 'k'.repeat(256) }),
      400,
      'validation_failed',
      [KEY_RULE],
    );
  });

  it('takes only keys of at least 16 characters on this public route: a short one could be guessed', async () => {
    const link = await createLink(kassa, shop, { identity_options: undefined });
    for (const key of ['visit-1', '1', 'k'.repeat(15)])
      expectErrorCode(
        await visitLink(kassa, link.payment_link_id, {}, { idempotencyKey: key }),
        400,
        'validation_failed',
        [KEY_RULE],
      );
    expect((await visitLink(kassa, link.payment_link_id, {}, { idempotencyKey: 'k'.repeat(16) })).status).toBe(201);
    expect((await linkCall(kassa, shop, 'get', `/payment-links/${link.payment_link_id}`)).body.uses).toBe(1);
  });

  it('scopes a key to what the payer sent: the same key with other details or another amount is another visit, never the first payer’s session', async () => {
    const link = await createLink(kassa, shop, { identity_options: ['email'] });
    const first = await visitLink(
      kassa,
      link.payment_link_id,
      { email: 'first@example.com' },
      { idempotencyKey: KEY_1 },
    );
    const other = await visitLink(
      kassa,
      link.payment_link_id,
      { email: 'second@example.com' },
      { idempotencyKey: KEY_1 },
    );
    expect(other.status, JSON.stringify(other.body)).toBe(201);
    expect(other.headers['idempotent-replayed']).toBeUndefined();
    expect(other.body.session_id).not.toBe(first.body.session_id);
    expect(other.body.user.email).toBe('second@example.com');
    const open = await createLink(kassa, shop, {
      items: undefined,
      amount_fiat: { min: 1, max: 100 },
      identity_options: undefined,
    });
    const five = await visitLink(kassa, open.payment_link_id, { amount: '5' }, { idempotencyKey: KEY_1 });
    const six = await visitLink(kassa, open.payment_link_id, { amount: '6' }, { idempotencyKey: KEY_1 });
    expect(six.status, JSON.stringify(six.body)).toBe(201);
    expect(six.body.session_id).not.toBe(five.body.session_id);
    expect(six.body.total_amount_fiat).toBe('6.00000000');
    // The same amount written another way is the same visit.
    const again = await visitLink(kassa, open.payment_link_id, { amount: 5.0 }, { idempotencyKey: KEY_1 });
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(again.body.session_id).toBe(five.body.session_id);
  });

  it('a retry after the merchant changed the link’s name or metadata is still the same visit (only what the payer sent counts)', async () => {
    const link = await createLink(kassa, shop, {
      name: 'Donation',
      items: undefined,
      amount_fiat: { min: 1, max: 100 },
      identity_options: undefined,
      metadata: { campaign: 'spring' },
    });
    const first = await visitLink(kassa, link.payment_link_id, { amount: '12.5' }, { idempotencyKey: KEY_1 });
    expect(first.status).toBe(201);
    const patched = await linkCall(kassa, shop, 'patch', `/payment-links/${link.payment_link_id}`, {
      name: 'Donation (renamed)',
      metadata: { campaign: 'summer' },
    });
    expect(patched.status).toBe(200);
    const retry = await visitLink(kassa, link.payment_link_id, { amount: '12.5' }, { idempotencyKey: KEY_1 });
    expect(retry.status, JSON.stringify(retry.body)).toBe(201);
    expect(retry.headers['idempotent-replayed']).toBe('true');
    expect(retry.body.session_id).toBe(first.body.session_id);
  });

  it('gives the use back when no session could be made (the rates answer nothing)', async () => {
    const link = await createLink(kassa, shop, { max_uses: 1, currency: 'USD' });
    const original = kassa.ctx.rates.quoteRates;
    (kassa.ctx.rates as { quoteRates: typeof original }).quoteRates = async () => [];
    try {
      expectErrorBody(await visitLink(kassa, link.payment_link_id, { email: 'a@b.example' }), 503);
    } finally {
      (kassa.ctx.rates as { quoteRates: typeof original }).quoteRates = original;
    }
    expect((await linkCall(kassa, shop, 'get', `/payment-links/${link.payment_link_id}`)).body.uses).toBe(0);
    expect((await visitLink(kassa, link.payment_link_id, { email: 'a@b.example' })).status).toBe(201);
  });
});

describe('user.id of a link session', () => {
  it('is keyed by a secret of the installation: the same organisation id and e-mail give another id elsewhere', async () => {
    const link = await createLink(kassa, shop, { identity_options: ['email'] });
    const here = await visitLink(kassa, link.payment_link_id, { email: 'guess@example.com' });
    expect(here.status).toBe(201);
    // Another installation that knows the organisation id (all that was needed to recompute the old unkeyed hash).
    const elsewhere = await startTestKassa();
    try {
      await elsewhere.ctx.store.organisations.create({
        id: shop.organisationId,
        name: 'Bean Shop',
        wallets: { local: shop.wallet },
      });
      const copy = await createPaymentLink(elsewhere.ctx, shop.organisationId, {
        name: 'Copy',
        currency: 'USD',
        items: [{ name: 'x', quantity: 1, unitPrice: '1' }],
        identityOptions: ['email'],
      });
      const there = await visitLink(elsewhere, copy.id, { email: 'guess@example.com' });
      expect(there.status, JSON.stringify(there.body)).toBe(201);
      expect(there.body.user.id).toMatch(/^payer_[0-9a-f]{32}$/);
      expect(there.body.user.id).not.toBe(here.body.user.id);
    } finally {
      await elsewhere.close();
    }
  });

  it('stays the same across a restart and on another instance sharing the database', async () => {
    const link = await createLink(kassa, shop, { identity_options: ['telegram'] });
    const first = await visitLink(kassa, link.payment_link_id, { telegram: '@steady_payer' });
    const second = await startTestKassa({ database: kassa.database });
    try {
      const again = await visitLink(second, link.payment_link_id, { telegram: '@Steady_Payer' });
      expect(again.status, JSON.stringify(again.body)).toBe(201);
      expect(again.body.user.id).toBe(first.body.user.id);
    } finally {
      await second.close();
    }
  });
});

describe('GET /l/:id and GET /brand/logo/:sha256 over HTTP', () => {
  it('serves the link page under the strict CSP; unavailable links are readable pages with 410/409, bad ids 400/404', async () => {
    const link = await createLink(kassa, shop);
    const page = await kassa.http.get(`/l/${link.payment_link_id}`).set('Accept-Language', 'fr-CH, de;q=0.8, en;q=0.5');
    expect(page.status).toBe(200);
    expect(page.headers['content-type']).toMatch(/^text\/html/);
    expect(page.headers['content-security-policy']).toBe(
      "default-src 'self'; connect-src 'self'; img-src 'self' data:; base-uri 'none'; form-action 'self'; frame-ancestors 'none'",
    );
    expect(page.headers['referrer-policy']).toBe('no-referrer');
    expect(page.text).toContain('<html lang="de">');
    expect(page.text).not.toMatch(/<script(?![^>]*\bsrc=)(?![^>]*type="application\/json")[^>]*>/);
    expect(page.text).not.toMatch(/(src|href)="(https?:)?\/\//);
    const data = JSON.parse(
      /<script type="application\/json" id="kassa-page-data">(.*?)<\/script>/.exec(page.text)![1]!,
    );
    // The payer sees the basket, never the organisation id, metadata or counts.
    expect(Object.keys(data.link).sort()).toEqual([
      'amountMax',
      'amountMin',
      'currency',
      'id',
      'identityOptions',
      'items',
      'name',
      'requiresPayerIdentity',
      'totalAmountFiat',
    ]);
    expect(page.text).not.toContain(shop.organisationId);

    await linkCall(kassa, shop, 'patch', `/payment-links/${link.payment_link_id}`, { active: false });
    const inactive = await kassa.http.get(`/l/${link.payment_link_id}?lang=en`);
    expect(inactive.status).toBe(410);
    expect(inactive.text).toContain('This payment link is no longer active');
    const once = await createLink(kassa, shop, { max_uses: 1 });
    await visitLink(kassa, once.payment_link_id, { email: 'a@b.example' });
    const usedUp = await kassa.http.get(`/l/${once.payment_link_id}`);
    expect(usedUp.status).toBe(409);
    expect(usedUp.text).toContain('This payment link has been used up');
    expect((await kassa.http.get('/l/nope')).status).toBe(400);
    expect((await kassa.http.get('/l/00000000-0000-4000-8000-000000000000')).text).toContain(
      'This payment link does not exist',
    );
    expect((await kassa.http.post(`/l/${once.payment_link_id}`)).status).toBe(405);
  });

  it('serves a logo as the image it is, from Kassa, cacheable for good; 400 and 404 otherwise', async () => {
    const { setBranding } = await import('../../src/domain/organisations/branding.js');
    const png = Buffer.concat([
      Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
      Buffer.from('rest of a png'),
    ]);
    const branding = await setBranding(kassa.ctx, shop.organisationId, { logo: png });
    const logo = await kassa.http.get(`/brand/logo/${branding.logoSha256}`);
    expect(logo.status).toBe(200);
    expect(logo.headers['content-type']).toBe('image/png');
    expect(logo.headers['x-content-type-options']).toBe('nosniff');
    expect(logo.headers['content-security-policy']).toBe("default-src 'none'; sandbox");
    expect(logo.headers['cache-control']).toBe('public, max-age=31536000, immutable');
    expect(Buffer.from(logo.body).equals(png)).toBe(true);
    const page = await kassa.http.get(`/l/${(await createLink(kassa, shop)).payment_link_id}`);
    expect(page.text).toContain(
      `<img class="merchant-logo" src="/brand/logo/${branding.logoSha256}" alt="" width="40" height="40">`,
    );
    expectErrorCode(await kassa.http.get('/brand/logo/nope'), 400, 'validation_failed');
    expectErrorCode(await kassa.http.get(`/brand/logo/${'0'.repeat(64)}`), 404, 'not_found');
  });
});
