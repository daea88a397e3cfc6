import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkoutRequest } from '../factories/checkout-request.js';
import { createMerchant, type TestMerchant } from '../factories/merchant.js';
import { startTestKassa, type TestKassa } from '../support/kassa.js';
import { createSession, expectErrorBody, UUID } from '../support/rest-kassa.js';
import { signedRequest } from '../support/webhooks.js';

/** GET /events: the signed feed merchants reconcile with (docs/api/webhooks.md#events-feed). */

let kassa: TestKassa;
let merchant: TestMerchant;

beforeAll(async () => {
  kassa = await startTestKassa({ env: { KASSA_OUTBOX_GAP_SECONDS: '1' } });
  merchant = await createMerchant(kassa.ctx);
});

afterAll(async () => {
  await kassa?.close();
});

interface Page {
  data: Array<{ id: string; type: string; created_at: string; data: Record<string, any> }>;
  next_cursor: string | null;
  has_more: boolean;
}

async function page(owner: TestMerchant, query: string): Promise<Page> {
  const response = await signedRequest(kassa, owner, 'get', `/events${query}`);
  expect(response.status, JSON.stringify(response.body)).toBe(200);
  return response.body as Page;
}

/** Reads every page from `cursor` on until has_more is false. */
async function drain(
  owner: TestMerchant,
  cursor: string | null,
  limit: number,
): Promise<{ events: Page['data']; cursor: string | null }> {
  const events: Page['data'] = [];
  for (;;) {
    const next = await page(owner, `?limit=${limit}${cursor ? `&after=${cursor}` : ''}`);
    events.push(...next.data);
    cursor = next.next_cursor;
    if (!next.has_more) return { events, cursor };
  }
}

describe('GET /events', () => {
  it('lists the organisation’s events in order with a cursor, by session too', async () => {
    const owner = await createMerchant(kassa.ctx);
    const other = await createMerchant(kassa.ctx);
    const a = await createSession(kassa, owner, checkoutRequest());
    await createSession(kassa, other, checkoutRequest());
    const b = await createSession(kassa, owner, checkoutRequest());

    const first = await page(owner, '?limit=1');
    expect(first.has_more).toBe(true);
    expect(first.data).toHaveLength(1);
    const event = first.data[0]!;
    expect(Object.keys(event).sort()).toEqual(['created_at', 'data', 'id', 'type']);
    expect(event).toMatchObject({ type: 'checkout_session.created', data: { session_id: a.session_id } });
    expect(event.id).toMatch(UUID);
    expect(first.next_cursor).toMatch(/^ev1_[A-Za-z0-9_-]{22}$/);

    const second = await page(owner, `?limit=1&after=${first.next_cursor}`);
    expect(second.data.map((e) => e.data.session_id)).toEqual([b.session_id]);
    expect(second.has_more).toBe(false);
    const empty = await page(owner, `?after=${second.next_cursor}`);
    expect(empty).toEqual({ data: [], next_cursor: second.next_cursor, has_more: false });

    const bySession = await page(owner, `?session_id=${b.session_id}`);
    expect(bySession.data.map((e) => e.data.session_id)).toEqual([b.session_id]);
    // Another organisation's session id shows nothing.
    expect((await page(other, `?session_id=${b.session_id}`)).data).toEqual([]);
  });

  it("shows nothing of other organisations' events: the cursor is sealed, refused for another organisation, forged or bare", async () => {
    const owner = await createMerchant(kassa.ctx);
    const other = await createMerchant(kassa.ctx);
    await createSession(kassa, owner, checkoutRequest());
    const before = (await drain(owner, null, 100)).cursor!;
    // Another organisation's events between two of the owner's: the owner's cursors say nothing of them.
    for (let i = 0; i < 3; i++) await createSession(kassa, other, checkoutRequest());
    await createSession(kassa, owner, checkoutRequest());
    const after = (await drain(owner, before, 100)).cursor!;
    for (const cursor of [before, after]) expect(cursor).toMatch(/^ev1_[A-Za-z0-9_-]{22}$/);
    const seqs = (
      await kassa.runtime.db.prisma.outboxEvent.findMany({
        where: { organisationId: owner.organisationId },
        orderBy: { seq: 'asc' },
      })
    ).map((event) => event.seq.toString());
    const otherCursor = (await drain(other, null, 100)).cursor!;
    const refused = async (who: TestMerchant, cursor: string) =>
      expectErrorBody(await signedRequest(kassa, who, 'get', `/events?after=${cursor}`), 400, [
        'after must be a cursor returned as next_cursor',
      ]);
    // The owner's cursor is no cursor for the other organisation, nor the other's for the owner.
    await refused(other, after);
    await refused(owner, otherCursor);
    // One character changed: not a cursor this installation made.
    await refused(owner, `${after.slice(0, 10)}${after[10] === 'A' ? 'B' : 'A'}${after.slice(11)}`);
    // The outbox sequence itself (what next_cursor was before): refused, so nobody can probe where events sit.
    await refused(owner, seqs.at(-1)!);
    expect((await page(owner, `?after=${after}`)).data).toEqual([]);
  });

  it('refuses unsigned calls and bad queries with the spec error body', async () => {
    expectErrorBody(await kassa.http.get('/events'), 401);
    expectErrorBody(await signedRequest(kassa, merchant, 'get', '/events?limit=0'), 400, [
      'limit must not be less than 1',
    ]);
    expectErrorBody(await signedRequest(kassa, merchant, 'get', '/events?limit=101'), 400, [
      'limit must not be greater than 100',
    ]);
    expectErrorBody(await signedRequest(kassa, merchant, 'get', '/events?limit=x'), 400, [
      'limit must be an integer from 1 to 100',
    ]);
    expectErrorBody(await signedRequest(kassa, merchant, 'get', '/events?after=abc'), 400, [
      'after must be a cursor returned as next_cursor',
    ]);
    expectErrorBody(await signedRequest(kassa, merchant, 'get', '/events?session_id=nope'), 400, [
      'session_id must be a UUID',
    ]);
    expectErrorBody(await signedRequest(kassa, merchant, 'get', '/events?foo=1'), 400, [
      'property foo should not exist',
    ]);
    // A repeated parameter is an array to Express: named in the project's wording, not zod's.
    expectErrorBody(await signedRequest(kassa, merchant, 'get', '/events?limit=1&limit=2'), 400, [
      'limit must be an integer from 1 to 100',
    ]);
    expectErrorBody(await signedRequest(kassa, merchant, 'get', '/events?after=1&after=2'), 400, [
      'after must be a cursor returned as next_cursor',
    ]);
    expectErrorBody(await signedRequest(kassa, merchant, 'get', '/events?session_id=a&session_id=b'), 400, [
      'session_id must be a UUID',
    ]);
    // Every problem at once.
    expectErrorBody(
      await signedRequest(kassa, merchant, 'get', '/events?after=abc&limit=x&session_id=nope&foo=1'),
      400,
      [
        'after must be a cursor returned as next_cursor',
        'limit must be an integer from 1 to 100',
        'session_id must be a UUID',
        'property foo should not exist',
      ],
    );
    expectErrorBody(await kassa.http.post('/events'), 405);
  });

  it('pages under concurrent writes without skipping or repeating an event', async () => {
    const owner = await createMerchant(kassa.ctx);
    const seen: Page['data'] = [];
    let cursor: string | null = null;
    let writing = true;
    const writes = (async () => {
      for (let round = 0; round < 8; round++)
        await Promise.all(Array.from({ length: 5 }, () => createSession(kassa, owner, checkoutRequest())));
      writing = false;
    })();
    while (writing) {
      const next = await drain(owner, cursor, 3);
      seen.push(...next.events);
      cursor = next.cursor;
    }
    await writes;
    seen.push(...(await drain(owner, cursor, 3)).events);
    const stored = await kassa.runtime.db.prisma.outboxEvent.findMany({
      where: { organisationId: owner.organisationId },
      orderBy: { seq: 'asc' },
    });
    expect(stored).toHaveLength(40);
    expect(seen.map((e) => e.id)).toEqual(stored.map((e) => e.id));
  });

  it('never steps over an event whose transaction is still open, and steps over a rolled-back one after the gap time', async () => {
    const owner = await createMerchant(kassa.ctx);
    const { cursor: start } = await drain(owner, null, 100);
    const client = new pg.Client({ connectionString: kassa.database.databaseUrl! });
    await client.connect();
    try {
      const held = randomUUID();
      await client.query('BEGIN');
      await client.query(
        `INSERT INTO outbox_events (id, organisation_id, type, payload) VALUES ($1, $2, 'checkout_session.created', '{}')`,
        [held, owner.organisationId],
      );
      const later = await createSession(kassa, owner, checkoutRequest());
      // The later event is committed, but an earlier seq is in flight: the feed waits.
      expect((await drain(owner, start, 10)).events).toEqual([]);
      await client.query('COMMIT');
      const both = (await drain(owner, start, 10)).events;
      expect(both.map((e) => e.id)[0]).toBe(held);
      expect(both[1]!.data.session_id).toBe(later.session_id);

      // A rolled-back transaction leaves a hole for good: after KASSA_OUTBOX_GAP_SECONDS it is stepped over.
      const after = (await drain(owner, start, 10)).cursor;
      await client.query('BEGIN');
      await client.query(
        `INSERT INTO outbox_events (id, organisation_id, type, payload) VALUES ($1, $2, 'checkout_session.created', '{}')`,
        [randomUUID(), owner.organisationId],
      );
      await client.query('ROLLBACK');
      const next = await createSession(kassa, owner, checkoutRequest());
      expect((await drain(owner, after, 10)).events).toEqual([]);
      await new Promise((resolve) => setTimeout(resolve, 1_200));
      expect((await drain(owner, after, 10)).events.map((e) => e.data.session_id)).toEqual([next.session_id]);
    } finally {
      await client.end();
    }
  });
});
