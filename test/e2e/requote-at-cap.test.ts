import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { requoteDueSessions } from '../../src/domain/requote-sessions.js';
import { checkoutRequest } from '../factories/checkout-request.js';
import { createMerchant } from '../factories/merchant.js';
import { startTestKassa, type TestKassa } from '../support/kassa.js';
import { fixedRates } from '../support/fixed-rates.js';
import { controllableClock, createSession } from '../support/rest-kassa.js';

/**
 * docs/payment-rules.md, rules 4 and 7: a re-pricing that finds every unique amount of its new price held is undone
 * and the old quote is honoured for another lifetime. Found by review: undone alone, such a session kept the oldest
 * quote time and was tried first by every round, so a round's batch full of them re-priced no session behind them.
 */

const MIN = 60_000;
const time = controllableClock();
let kassa: TestKassa;
const { rates } = fixedRates();

beforeAll(async () => {
  kassa = await startTestKassa({
    clock: time.clock,
    override: { rates },
    env: { KASSA_UNIQUE_AMOUNT_STEPS: '2', KASSA_QUOTE_TTL_MINUTES: '30' },
  });
});

afterAll(async () => {
  time.release();
  await kassa?.close();
});

const unreleasedClaims = async (id: string) =>
  (
    await kassa.runtime.db.prisma.$queryRaw<Array<{ n: number }>>`
      SELECT count(*)::int AS n FROM payment_amount_claims WHERE session_id = ${id}::uuid AND released_at IS NULL`
  )[0]!.n;

describe('re-pricing when every unique amount of the new price is held', () => {
  it('keeps the old quote and its amounts for another lifetime, and does not hold up the sessions behind it', async () => {
    const merchant = await createMerchant(kassa.ctx);
    const t0 = Date.now();
    time.freeze(t0);
    const basket = checkoutRequest({ expires_in_minutes: 600 });
    const a = await createSession(kassa, merchant, basket);
    const b = await createSession(kassa, merchant, basket);
    time.freeze(t0 + 1_000);
    await createSession(
      kassa,
      merchant,
      checkoutRequest({ expires_in_minutes: 600, items: [{ name: 'Something else', quantity: 1, unit_price: 7 }] }),
    );
    const claimsOfA = await unreleasedClaims(a.session_id);
    expect(claimsOfA).toBeGreaterThan(0);

    // Past the quote's lifetime and the in-flight grace (nothing scans here): all three are due, A and B first. The
    // rates are unchanged, so A's and B's new price is their old one, whose two amounts the two of them hold.
    const later = t0 + 30 * MIN + (kassa.ctx.inflightGraceMinutes + 1) * MIN;
    time.freeze(later);
    expect(await requoteDueSessions(kassa.ctx, 2)).toBe(0);
    for (const session of [a, b]) {
      const now = (await kassa.http.get(`/checkout-sessions/${session.session_id}`)).body;
      expect(now.crypto_options).toEqual(session.crypto_options);
      expect(await unreleasedClaims(session.session_id)).toBe(claimsOfA);
    }

    // The next round reaches C.
    time.freeze(later + 1_000);
    expect(await requoteDueSessions(kassa.ctx, 2)).toBe(1);
    // A and B are due again a lifetime later.
    time.freeze(later + 30 * MIN + (kassa.ctx.inflightGraceMinutes + 1) * MIN);
    expect(await requoteDueSessions(kassa.ctx, 2)).toBe(0);
  });
});
