import { afterAll, describe, expect, it } from 'vitest';
import { checkoutRequest } from '../factories/checkout-request.js';
import { createMerchant } from '../factories/merchant.js';
import { createLink, linkCall, visitLink } from '../factories/payment-link.js';
import type { TestDatabaseMode } from '../support/databases.js';
import { startTestKassaOn, type TestKassa } from '../support/kassa.js';
import { createSession, expectErrorBody } from '../support/rest-kassa.js';

/**
 * Issue 12: max_uses holds under 20 parallel visits, on PostgreSQL and on the embedded
 * database (one pooled connection), and the per-address limit on visits answers 429.
 */

const started: TestKassa[] = [];
afterAll(async () => {
  for (const kassa of started) await kassa.close();
});

async function kassaOn(mode: TestDatabaseMode, env: Record<string, string> = {}): Promise<TestKassa> {
  const kassa = await startTestKassaOn(mode, env);
  started.push(kassa);
  return kassa;
}

describe.each(['postgres', 'embedded'] as const)('max_uses on %s', (mode) => {
  // docs/payment-rules.md, rule 4: a session is never written with an amount another session holds.
  it('a visit that finds every unique amount of its price held on the wallet is refused (409) and uses none of the link', async () => {
    const kassa = await kassaOn(mode);
    const merchant = await createMerchant(kassa.ctx);
    // 100 of the merchant's own sessions of the link's basket (105 USD) hold every amount on the wallet.
    for (let i = 0; i < 100; i += 1) await createSession(kassa, merchant, checkoutRequest());
    const link = await createLink(kassa, merchant, { max_uses: 1 });
    const refused = await visitLink(kassa, link.payment_link_id, { email: 'late@example.com' });
    expectErrorBody(refused, 409);
    expect(refused.body.message).toMatch(/^Every unique amount of this total in \w+ is held by another open/);
    const view = await linkCall(kassa, merchant, 'get', `/payment-links/${link.payment_link_id}`);
    expect(view.body).toMatchObject({ max_uses: 1, uses: 0 });
  });

  it(
    '20 parallel visits of a link with max_uses 5 create exactly 5 sessions; the others get 409',
    { timeout: 60_000 },
    async () => {
      const kassa = await kassaOn(mode);
      const merchant = await createMerchant(kassa.ctx);
      const link = await createLink(kassa, merchant, { max_uses: 5 });
      const answers = await Promise.all(
        Array.from({ length: 20 }, (_, i) =>
          visitLink(kassa, link.payment_link_id, { email: `payer${i}@example.com` }),
        ),
      );
      const statuses = answers.map((answer) => answer.status).sort();
      expect(statuses.filter((status) => status === 201)).toHaveLength(5);
      expect(statuses.filter((status) => status === 409)).toHaveLength(15);
      for (const refused of answers.filter((answer) => answer.status === 409))
        expectErrorBody(refused, 409, `Payment link ${link.payment_link_id} has been used the most times allowed`);
      const sessions = await kassa.runtime.db.prisma.checkoutSession.count({
        where: { productPaymentLinkId: link.payment_link_id },
      });
      expect(sessions).toBe(5);
      expect((await linkCall(kassa, merchant, 'get', `/payment-links/${link.payment_link_id}`)).body).toMatchObject({
        uses: 5,
        state: 'used_up',
      });
    },
  );

  it('one visit retried in parallel (one Idempotency-Key) makes one session and counts one use', async () => {
    const kassa = started.at(-1)!;
    const merchant = await createMerchant(kassa.ctx);
    const link = await createLink(kassa, merchant, { max_uses: 5 });
    const visit = { email: 'retrying@example.com' };
    const answers = await Promise.all(
      Array.from({ length: 10 }, () =>
        visitLink(kassa, link.payment_link_id, visit, { idempotencyKey: 'retried-visit-0001' }),
      ),
    );
    expect(answers.map((answer) => answer.status)).toEqual(Array(10).fill(201));
    expect(new Set(answers.map((answer) => answer.body.session_id)).size).toBe(1);
    expect((await kassa.ctx.store.paymentLinks.findById(link.payment_link_id))!.uses).toBe(1);
  });
});

describe.each(['postgres', 'embedded'] as const)('the use and the session in one statement on %s', (mode) => {
  it('a session write that fails after the use was counted leaves the count as it was', async () => {
    const kassa = await kassaOn(mode);
    const merchant = await createMerchant(kassa.ctx);
    const link = await createLink(kassa, merchant, { max_uses: 1 });
    const other = await createLink(kassa, merchant);
    const taken = (await visitLink(kassa, other.payment_link_id, { email: 'first@example.com' })).body
      .session_id as string;
    // The write of kassa_create_checkout_session counts the use, then inserts the session, which fails
    // here (its id is taken): the whole statement is undone, the count with it.
    const store = kassa.ctx.store;
    const createSession = store.createSession;
    (store as { createSession: typeof createSession }).createSession = (write) =>
      createSession.call(store, { ...write, session: { ...write.session, id: taken } });
    try {
      expectErrorBody(await visitLink(kassa, link.payment_link_id, { email: 'second@example.com' }), 500);
    } finally {
      (store as { createSession: typeof createSession }).createSession = createSession;
    }
    expect((await kassa.ctx.store.paymentLinks.findById(link.payment_link_id))!.uses).toBe(0);
    expect(
      await kassa.runtime.db.prisma.checkoutSession.count({ where: { productPaymentLinkId: link.payment_link_id } }),
    ).toBe(0);
    // Its one use is still there to take.
    expect((await visitLink(kassa, link.payment_link_id, { email: 'second@example.com' })).status).toBe(201);
    expect((await kassa.ctx.store.paymentLinks.findById(link.payment_link_id))!.uses).toBe(1);
  });
});

describe('the visit rate limit', () => {
  it('answers 429 with Retry-After past KASSA_RATE_LIMIT_LINK_SESSIONS from one address', async () => {
    const kassa = await kassaOn('postgres', { KASSA_RATE_LIMIT_LINK_SESSIONS: '2/1h' });
    const merchant = await createMerchant(kassa.ctx);
    const link = await createLink(kassa, merchant, { identity_options: undefined });
    expect((await visitLink(kassa, link.payment_link_id, {})).status).toBe(201);
    expect((await visitLink(kassa, link.payment_link_id, {})).status).toBe(201);
    const refused = await visitLink(kassa, link.payment_link_id, {});
    expectErrorBody(
      refused,
      429,
      /^Too many checkout sessions started from payment links by this address: at most 2 per 3600 s; retry after \d+ s$/,
    );
    expect(Number(refused.headers['retry-after'])).toBeGreaterThan(0);
  });
});
