import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestKassa, TEST_ENV, type TestKassa } from '../support/kassa.js';
import { createMerchant, type TestMerchant } from '../factories/merchant.js';
import { checkoutRequest, txHash } from '../factories/checkout-request.js';
import { createLink, visitLink } from '../factories/payment-link.js';
import { expectErrorBody, postBind, postCreate } from '../support/rest-kassa.js';
import { signedRequest } from '../support/webhooks.js';

/**
 * Issue 38 (items 1, 2, 12): every guard at its built-in default, and a merchant's whole integration run — the
 * spec's flows (create, get, bind) with events, payment links and webhook endpoints, its own tests of 401 handling
 * and a few reads of ids that are not there — sent from ONE address at a busy shop's volume. No valid call is
 * refused; only the failing ones are answered as failures.
 */

let kassa: TestKassa;
let merchant: TestMerchant;
beforeAll(async () => {
  // '' is unset: each limit's built-in default (docs/api/rest.md#rate-limits), not the suite's raised ones.
  const defaults = Object.fromEntries(
    Object.keys(TEST_ENV)
      .filter((name) => name.startsWith('KASSA_RATE_LIMIT_'))
      .map((name) => [name, '']),
  );
  kassa = await startTestKassa({ env: defaults });
  merchant = await createMerchant(kassa.ctx);
});
afterAll(() => kassa?.close());

const badSignature = () =>
  kassa.http
    .post('/checkout-sessions')
    .set('Content-Type', 'application/json')
    .set({
      'X-Service-Key': merchant.apiKey,
      'X-Service-Timestamp': String(Date.now()),
      'X-Service-Signature': 'ab'.repeat(32),
    })
    .send(JSON.stringify(checkoutRequest()));

/** A price per order: one price holds only so many open sessions per wallet (KASSA_UNIQUE_AMOUNT_STEPS). */
const order = (n: number) =>
  checkoutRequest({ items: [{ name: `Order ${n}`, quantity: 1, unit_price: Number((20 + n / 100).toFixed(2)) }] });

describe('valid calls from one address, every limit at its default', () => {
  it("a merchant's integration run: nothing valid is refused, before or after its own failing calls", async () => {
    const refused: string[] = [];
    const expectStatus = (what: string, status: number, wanted: number) => {
      if (status !== wanted) refused.push(`${what}: ${status}`);
    };

    // The merchant's own tests of their 401 handling: more than the address's failure budget.
    const failures: number[] = [];
    for (let i = 0; i < 25; i++) failures.push((await badSignature()).status);
    expect(failures.filter((status) => status === 401).length).toBe(20);
    expect(failures.filter((status) => status === 429).length).toBe(5);

    // Creates: a busy minute's worth, some with Idempotency-Key and a replay of one.
    const sessions: string[] = [];
    for (let round = 0; round < 12; round++) {
      const answers = await Promise.all(
        Array.from({ length: 10 }, (_, index) => {
          const n = round * 10 + index;
          return postCreate(kassa, merchant, order(n), n % 3 === 0 ? { idempotencyKey: `order-${n}` } : {});
        }),
      );
      for (const answer of answers) {
        expectStatus('create', answer.status, 201);
        if (answer.status === 201) sessions.push(answer.body.session_id as string);
      }
    }
    expectStatus(
      'idempotent replay',
      (await postCreate(kassa, merchant, order(3), { idempotencyKey: 'order-3' })).status,
      201,
    );

    // Get: the merchant and their payers' pages read every session a few times.
    for (let pass = 0; pass < 3; pass++)
      for (const id of sessions) expectStatus('get', (await kassa.http.get(`/checkout-sessions/${id}`)).status, 200);
    // A few reads of ids that are not there (a typo, a deleted test order): 404, not a lockout.
    for (let i = 0; i < 5; i++)
      expectStatus('get unknown', (await kassa.http.get(`/checkout-sessions/${randomUUID()}`)).status, 404);
    expectStatus('get after unknown', (await kassa.http.get(`/checkout-sessions/${sessions[0]}`)).status, 200);

    // Bind: payers of a dozen sessions bind their transactions (one repeats its bind).
    for (let i = 0; i < 12; i++) {
      const body = { tx_hash: txHash(1_000 + i), chain_id: '31337', crypto_currency: 'ETH' };
      expectStatus('bind', (await postBind(kassa, sessions[i]!, body)).status, 200);
    }
    const again = { tx_hash: txHash(1_000), chain_id: '31337', crypto_currency: 'ETH' };
    expectStatus('bind again', (await postBind(kassa, sessions[0]!, again)).status, 200);

    // Events: the merchant pages through the feed, and reads one session's events.
    let after: string | null = null;
    for (let page = 0; page < 5; page++) {
      const response = await signedRequest(kassa, merchant, 'get', `/events?limit=30${after ? `&after=${after}` : ''}`);
      expectStatus('events', response.status, 200);
      if (response.status !== 200 || !response.body.has_more) break;
      after = response.body.next_cursor as string;
    }
    expectStatus(
      'events of a session',
      (await signedRequest(kassa, merchant, 'get', `/events?session_id=${sessions[1]}`)).status,
      200,
    );

    // Payment links: made, listed, read, changed; payers visit one.
    const link = await createLink(kassa, merchant, { identity_options: [] });
    expectStatus('list links', (await signedRequest(kassa, merchant, 'get', '/payment-links')).status, 200);
    const linkPath = `/payment-links/${link.payment_link_id}`;
    expectStatus('get link', (await signedRequest(kassa, merchant, 'get', linkPath)).status, 200);
    expectStatus(
      'patch link',
      (await signedRequest(kassa, merchant, 'patch', linkPath, { name: 'Beans' })).status,
      200,
    );
    for (let i = 0; i < 5; i++) {
      const visit = await visitLink(kassa, link.payment_link_id as string, {});
      expectStatus('visit link', visit.status, 201);
      if (visit.status === 201)
        expectStatus(
          'get link session',
          (await kassa.http.get(`/checkout-sessions/${visit.body.session_id}`)).status,
          200,
        );
    }

    // Webhook endpoints: made, listed, read, changed, its secret rotated, deleted.
    const made = await signedRequest(kassa, merchant, 'post', '/webhook-endpoints', {
      url: 'http://127.0.0.1:9/hooks',
    });
    expectStatus('create endpoint', made.status, 201);
    const endpoint = `/webhook-endpoints/${made.body.id}`;
    expectStatus('list endpoints', (await signedRequest(kassa, merchant, 'get', '/webhook-endpoints')).status, 200);
    expectStatus('get endpoint', (await signedRequest(kassa, merchant, 'get', endpoint)).status, 200);
    expectStatus(
      'patch endpoint',
      (await signedRequest(kassa, merchant, 'patch', endpoint, { enabled: false })).status,
      200,
    );
    expectStatus(
      'rotate secret',
      (await signedRequest(kassa, merchant, 'post', `${endpoint}/rotate-secret`)).status,
      200,
    );
    expectStatus('delete endpoint', (await signedRequest(kassa, merchant, 'delete', endpoint)).status, 204);

    expect(refused).toEqual([]);
    expect(sessions).toHaveLength(120);
    // And the failing calls are still answered as failures (the address is over its budget of them).
    expectErrorBody(await badSignature(), 429);
  }, 120_000);
});
