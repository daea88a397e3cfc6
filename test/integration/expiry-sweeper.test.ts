import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { expireDueSessions, purgeIdempotencyKeys } from '../../src/domain/sessions/expire-sessions.js';
import type { DomainContext } from '../../src/domain/context.js';
import { checkoutRequest } from '../factories/checkout-request.js';
import { createMerchant, signed, type TestMerchant } from '../factories/merchant.js';
import { startTestKassa, type TestKassa } from '../support/kassa.js';

/**
 * Several Kassa processes may share one database, so the expiry sweep must be
 * safe with two instances running (docs/payment-rules.md#statuses). Two real instances on one
 * PostgreSQL database, a clock both share, moved past expiry.
 */

const GRACE_MINUTES = 30;
const MINUTE = 60_000;

let offsetMs = 0;
let fixedNow: Date | null = null;
const clock = () => fixedNow ?? new Date(Date.now() + offsetMs);

let first: TestKassa;
let second: TestKassa;
let merchant: TestMerchant;
let db: pg.Pool;

beforeAll(async () => {
  const env = { KASSA_INFLIGHT_GRACE_MINUTES: String(GRACE_MINUTES) };
  first = await startTestKassa({ clock, env });
  second = await startTestKassa({ clock, env, database: first.database });
  merchant = await createMerchant(first.ctx);
  db = new pg.Pool({ connectionString: first.database.databaseUrl!, max: 2 });
});

afterAll(async () => {
  await db?.end();
  await second?.close();
  await first?.close();
});

beforeEach(() => {
  // Sessions are created and signed at real time; each test moves the clock itself.
  offsetMs = 0;
  fixedNow = null;
});

/** Creates a session over HTTP on one of the instances; returns its id. */
async function createSession(
  kassa: TestKassa,
  extra: Record<string, unknown> = {},
  idempotencyKey?: string,
): Promise<string> {
  let request = signed(kassa.http.post('/checkout-sessions'), merchant, JSON.stringify(checkoutRequest(extra)));
  if (idempotencyKey) request = request.set('Idempotency-Key', idempotencyKey);
  const response = await request;
  expect(response.status, JSON.stringify(response.body)).toBe(201);
  return response.body.session_id as string;
}

/** One instance's expiry worker: sweeps in batches until it finds nothing; returns how many sessions it settled. */
async function sweepUntilIdle(ctx: DomainContext, batchSize: number): Promise<number> {
  let total = 0;
  for (let sweep = 0; sweep < 100; sweep++) {
    const examined = await expireDueSessions(ctx, batchSize);
    total += examined;
    if (examined === 0) return total;
  }
  // The background job drains the same way (while a batch is full): it would spin here too.
  throw new Error(
    `the sweep never became idle (${total} sessions examined): it keeps selecting sessions it does not expire`,
  );
}

interface SessionAudit {
  id: string;
  status: string;
  expired_history: number;
  expired_events: number;
  causes: string[];
}

async function audit(ids: readonly string[]): Promise<Map<string, SessionAudit>> {
  const { rows } = await db.query<SessionAudit>(
    `SELECT s.id::text AS id, s.status::text AS status,
            (SELECT count(*)::int FROM checkout_session_status_history h WHERE h.session_id = s.id AND h.to_status = 'expired') AS expired_history,
            (SELECT count(*)::int FROM outbox_events e WHERE e.session_id = s.id AND e.type = 'checkout_session.expired') AS expired_events,
            ARRAY(SELECT h.cause FROM checkout_session_status_history h WHERE h.session_id = s.id AND h.to_status = 'expired') AS causes
     FROM checkout_sessions s WHERE s.id = ANY($1::uuid[])`,
    [ids],
  );
  return new Map(rows.map((row) => [row.id, row]));
}

describe('two instances sweeping one database at once', () => {
  it('expire each due session exactly once: one history row and one expired event per session', async () => {
    const due: string[] = [];
    for (let i = 0; i < 4; i++) {
      due.push(
        ...(await Promise.all(
          Array.from({ length: 6 }, (_, j) => createSession((i + j) % 2 ? first : second, { expires_in_minutes: 5 })),
        )),
      );
    }
    const notDue = await Promise.all([
      createSession(first, { expires_in_minutes: 120 }),
      createSession(second, { expires_in_minutes: 120 }),
    ]);

    offsetMs = 6 * MINUTE;
    // Four workers on two instances, small batches, so they compete for the same rows.
    const settled = await Promise.all([
      sweepUntilIdle(first.ctx, 3),
      sweepUntilIdle(second.ctx, 3),
      sweepUntilIdle(first.ctx, 5),
      sweepUntilIdle(second.ctx, 5),
    ]);
    expect(
      settled.reduce((sum, n) => sum + n, 0),
      `settled per worker: ${settled.join(', ')}`,
    ).toBe(due.length);

    const audited = await audit([...due, ...notDue]);
    for (const id of due) {
      expect(audited.get(id), id).toMatchObject({
        status: 'expired',
        expired_history: 1,
        expired_events: 1,
        causes: ['session expired'],
      });
    }
    for (const id of notDue)
      expect(audited.get(id), id).toMatchObject({ status: 'waiting_payment', expired_history: 0, expired_events: 0 });

    const { rows: events } = await db.query<{ payload: { status: string; session_id: string } }>(
      `SELECT payload FROM outbox_events WHERE type = 'checkout_session.expired' AND session_id = ANY($1::uuid[])`,
      [due],
    );
    expect(events.map((event) => event.payload.status)).toEqual(due.map(() => 'expired'));
    expect(new Set(events.map((event) => event.payload.session_id))).toEqual(new Set(due));

    // Sweeping again finds nothing.
    expect(await Promise.all([expireDueSessions(first.ctx), expireDueSessions(second.ctx)])).toEqual([0, 0]);
  });

  it('an instance skips sessions another holds locked instead of waiting for them', async () => {
    const due = await Promise.all(Array.from({ length: 5 }, () => createSession(first, { expires_in_minutes: 5 })));
    offsetMs = 6 * MINUTE;
    const holder = await db.connect();
    try {
      await holder.query('BEGIN');
      await holder.query('SELECT id FROM checkout_sessions WHERE id = ANY($1::uuid[]) FOR UPDATE', [due.slice(0, 2)]);
      const waited = new Promise<never>((_, reject) =>
        setTimeout(
          () =>
            reject(
              new Error('the sweep waited for rows another instance holds locked (FOR UPDATE without SKIP LOCKED?)'),
            ),
          5_000,
        ).unref(),
      );
      expect(await Promise.race([expireDueSessions(second.ctx), waited])).toBe(3);
    } finally {
      await holder.query('COMMIT');
      holder.release();
    }
    expect(await expireDueSessions(first.ctx)).toBe(2);
    const audited = await audit(due);
    for (const id of due)
      expect(audited.get(id), id).toMatchObject({ status: 'expired', expired_history: 1, expired_events: 1 });
  });
});

describe('a payment sent before expiry and not confirmed yet', () => {
  it(`keeps the session open for KASSA_INFLIGHT_GRACE_MINUTES (${GRACE_MINUTES}) after expiry, then expires it once`, async () => {
    const [held, unheld] = await Promise.all([
      createSession(first, { expires_in_minutes: 5 }),
      createSession(second, { expires_in_minutes: 5 }),
    ]);
    // A transfer credited to the session, mined a minute after it was created and seen but not
    // confirmed yet, as the chain watcher records one (test/e2e/payment-trust.test.ts does it on anvil).
    await db.query(
      `INSERT INTO payments (id, network, chain_id, tx_hash, log_index, from_address, to_address, asset, token_address, base_units, amount,
                             block_number, block_hash, block_time, state, session_id, attribution)
       VALUES (gen_random_uuid(), 'local', '31337', $1, 0, $2, $3, 'ETH', NULL, 1, 0.000000000000000001, 7, $4, now() + interval '1 minute',
               'seen', $5, 'exact_amount')`,
      [
        `0x${randomBytes(32).toString('hex')}`,
        `0x${'1'.repeat(40)}`,
        `0x${'2'.repeat(40)}`,
        `0x${randomBytes(32).toString('hex')}`,
        held,
      ],
    );

    const sweepBoth = () => Promise.all([sweepUntilIdle(first.ctx, 10), sweepUntilIdle(second.ctx, 10)]);

    offsetMs = 6 * MINUTE; // 1 minute past expiry
    await sweepBoth();
    let audited = await audit([held, unheld]);
    expect(audited.get(unheld)).toMatchObject({ status: 'expired', expired_history: 1, expired_events: 1 });
    expect(audited.get(held)).toMatchObject({ status: 'waiting_payment', expired_history: 0, expired_events: 0 });

    offsetMs = (5 + GRACE_MINUTES - 1) * MINUTE; // a minute before the grace ends
    await sweepBoth();
    expect((await audit([held])).get(held)).toMatchObject({
      status: 'waiting_payment',
      expired_history: 0,
      expired_events: 0,
    });

    offsetMs = (5 + GRACE_MINUTES + 1) * MINUTE; // a minute after it
    await sweepBoth();
    await sweepBoth();
    audited = await audit([held, unheld]);
    expect(audited.get(held)).toMatchObject({
      status: 'expired',
      expired_history: 1,
      expired_events: 1,
      causes: ['the payment in flight did not confirm within the in-flight grace'],
    });
    expect(audited.get(unheld)).toMatchObject({ expired_history: 1, expired_events: 1 });
  });

  it('a transaction bound before expiry that no chain knows holds nothing open', async () => {
    const id = await createSession(first, { expires_in_minutes: 5 });
    const bind = await first.http
      .post(`/checkout-sessions/${id}/bind-tx`)
      .send({ tx_hash: `0x${randomBytes(32).toString('hex')}`, chain_id: '1', crypto_currency: 'ETH' });
    expect(bind.status, JSON.stringify(bind.body)).toBe(200);
    offsetMs = 6 * MINUTE;
    await Promise.all([sweepUntilIdle(first.ctx, 10), sweepUntilIdle(second.ctx, 10)]);
    expect((await audit([id])).get(id)).toMatchObject({
      status: 'expired',
      expired_history: 1,
      expired_events: 1,
      causes: ['session expired'],
    });
  });
});

describe('purgeIdempotencyKeys', () => {
  it('removes only keys older than the retention, once, with both instances purging', async () => {
    const keys = ['k-older', 'k-just-older', 'k-at-cutoff', 'k-newer'].map(
      (name) => `${name}-${randomBytes(3).toString('hex')}`,
    );
    for (const [i, key] of keys.entries())
      await createSession(i % 2 ? first : second, { user: { id: `customer-${key}`, email: 'p@example.com' } }, key);

    const now = new Date(Date.now() + 100 * 3_600_000);
    const retentionHours = 48;
    const cutoff = now.getTime() - retentionHours * 3_600_000;
    const createdAt = [cutoff - 3_600_000, cutoff - 1, cutoff, cutoff + 3_600_000];
    for (const [i, key] of keys.entries()) {
      await db.query('UPDATE idempotency_keys SET created_at = $1 WHERE key = $2', [new Date(createdAt[i]!), key]);
    }

    fixedNow = now;
    const deleted = await Promise.all([
      purgeIdempotencyKeys(first.ctx, retentionHours),
      purgeIdempotencyKeys(second.ctx, retentionHours),
    ]);
    expect(deleted[0]! + deleted[1]!).toBe(2);

    const { rows } = await db.query<{ key: string }>(
      'SELECT key FROM idempotency_keys WHERE key = ANY($1) ORDER BY created_at',
      [keys],
    );
    expect(rows.map((row) => row.key)).toEqual([keys[2], keys[3]]);

    // A forgotten key is free again; a kept one still guards its request.
    fixedNow = null;
    await createSession(first, { user: { id: 'another-customer', email: 'p@example.com' } }, keys[0]);
    const reused = await signed(
      first.http.post('/checkout-sessions'),
      merchant,
      JSON.stringify(checkoutRequest({ user: { id: 'x', email: 'p@example.com' } })),
    ).set('Idempotency-Key', keys[3]!);
    expect(reused.status).toBe(409);
  });

  it('purges a backlog larger than one batch (5,000 a statement) whole', async () => {
    const key = `k-bulk-${randomBytes(3).toString('hex')}`;
    await createSession(first, { user: { id: `customer-${key}`, email: 'p@example.com' } }, key);
    const old = new Date(Date.now() - 1_000 * 3_600_000);
    await db.query(
      `INSERT INTO idempotency_keys (organisation_id, key, request_hash, session_id, created_at)
       SELECT organisation_id, key || '-' || g, request_hash, session_id, $2 FROM idempotency_keys, generate_series(1, 12001) g
        WHERE key = $1`,
      [key, old],
    );
    fixedNow = null;
    expect(await purgeIdempotencyKeys(first.ctx, 48)).toBeGreaterThanOrEqual(12_001);
    const { rows } = await db.query<{ count: number }>(
      "SELECT count(*)::int AS count FROM idempotency_keys WHERE key LIKE $1 || '-%'",
      [key],
    );
    expect(rows[0]!.count).toBe(0);
  });
});
