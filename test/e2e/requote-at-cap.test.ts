import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AssetTicker } from '../../src/domain/shared/assets.js';
import type { RatesProvider } from '../../src/domain/rates/rates-ports.js';
import { requoteDueSessions } from '../../src/domain/sessions/requote-sessions.js';
import { checkoutRequest } from '../factories/checkout-request.js';
import { createMerchant } from '../factories/merchant.js';
import type { TestKassa } from '../support/kassa.js';
import { startChainKassa, startTestChain, type ChainKassa, type TestChain } from '../support/chain.js';
import { fixedRates } from '../support/fixed-rates.js';
import { controllableClock, createSession } from '../support/rest-kassa.js';

/**
 * docs/payment-rules.md, rules 4 and 7: a re-pricing that finds every unique amount of its new price held is undone
 * and the old quote is honoured for another lifetime. Found by review: undone alone, such a session kept the oldest
 * quote time and was tried first by every round, so a round's batch full of them re-priced no session behind them.
 */

const MIN = 60_000;
const time = controllableClock();
let chain: TestChain;
let node: ChainKassa;
let kassa: TestKassa;
const fixed = fixedRates();
// USD as fixedRates quotes it, and EUR at the same figures while `euroRates` is on (off: no source prices EUR).
let euroRates = true;
const rates = {
  supportsCurrency: (fiat: string) => fiat === 'USD' || fiat === 'EUR',
  quoteRates: async (fiat: string, tickers: readonly AssetTicker[], now: Date) =>
    fiat === 'EUR' && !euroRates ? [] : fixed.rates.quoteRates('USD', tickers, now),
} as unknown as RatesProvider;

beforeAll(async () => {
  chain = await startTestChain();
  node = await startChainKassa(chain.url, {
    clock: time.clock,
    override: { rates },
    env: { KASSA_UNIQUE_AMOUNT_STEPS: '2', KASSA_QUOTE_TTL_MINUTES: '30' },
  });
  kassa = node.kassa;
}, 90_000);

afterAll(async () => {
  time.release();
  await node?.close();
  await chain?.stop();
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

  // Found by review: a session whose currency had no fresh rates stayed at the head of the queue (its old quote stands
  // until rates come back), so a round's batch full of them re-priced none of the sessions behind them.
  it('a session without fresh rates for its currency does not hold up the sessions behind it', async () => {
    const merchant = await createMerchant(kassa.ctx, { wallet: `0x${randomBytes(20).toString('hex')}` });
    // A day on: every session of the tests before has expired.
    const t0 = Date.now() + 24 * 60 * MIN;
    time.freeze(t0);
    const euro = await createSession(
      kassa,
      merchant,
      checkoutRequest({
        currency: 'EUR',
        expires_in_minutes: 600,
        items: [{ name: 'Euro lamp', quantity: 1, unit_price: 3 }],
      }),
    );
    time.freeze(t0 + 1_000);
    const dollar = await createSession(
      kassa,
      merchant,
      checkoutRequest({ expires_in_minutes: 600, items: [{ name: 'Dollar lamp', quantity: 1, unit_price: 5 }] }),
    );
    const btc = (session: { crypto_options: Array<{ ticker: string; unit_price_fiat: string }> }) =>
      session.crypto_options.find((option) => option.ticker === 'BTC')!.unit_price_fiat;
    const read = async (id: string) => (await kassa.http.get(`/checkout-sessions/${id}`)).body;

    euroRates = false;
    fixed.prices.BTC = '90000';
    try {
      // Both are due, the euro session first; a round of one re-prices the dollar session, not nothing.
      time.freeze(t0 + 30 * MIN + (kassa.ctx.inflightGraceMinutes + 1) * MIN);
      expect(await requoteDueSessions(kassa.ctx, 1)).toBe(1);
      expect(btc(await read(dollar.session_id))).toBe('90000.00000000');
      expect(btc(await read(euro.session_id))).toBe('100000.00000000');
      // Only the euro session is due now, and nothing prices it: the round re-prices nothing, and fails nothing.
      expect(await requoteDueSessions(kassa.ctx, 1)).toBe(0);
      // With rates for EUR again, the euro session is re-priced by the next round.
      euroRates = true;
      time.freeze(t0 + 30 * MIN + (kassa.ctx.inflightGraceMinutes + 2) * MIN);
      expect(await requoteDueSessions(kassa.ctx, 1)).toBe(1);
      expect(btc(await read(euro.session_id))).toBe('90000.00000000');
    } finally {
      euroRates = true;
      fixed.prices.BTC = '100000';
    }
  });

  // Found by review (e6f0875): the re-pricing used to be written with the base amount, whose claim it had just
  // released, so the payer's transfer of the amount the page showed was no one's by amount and stayed unattributed.
  it('the old amounts still pay their sessions by exact amount on the chain', async () => {
    const merchant = await createMerchant(kassa.ctx, { wallet: `0x${randomBytes(20).toString('hex')}` });
    // Created in the past, so the re-pricing runs a minute ago: the transfers are mined after it, by every clock.
    const dueAfter = 30 * MIN + (kassa.ctx.inflightGraceMinutes + 1) * MIN;
    const t0 = Date.now() - dueAfter - MIN;
    time.freeze(t0);
    const basket = checkoutRequest({ expires_in_minutes: 600 });
    const a = await createSession(kassa, merchant, basket);
    const b = await createSession(kassa, merchant, basket);
    time.freeze(t0 + dueAfter);
    expect(await requoteDueSessions(kassa.ctx, 2)).toBe(0);
    time.release();

    for (const session of [a, b]) {
      const usdt = (session.crypto_options as Array<{ ticker: string; amount: string }>).find(
        (option) => option.ticker === 'USDT',
      )!.amount;
      const sent = await chain.pay(merchant.wallet, 'USDT', usdt, { from: 3 });
      await node.watchers.tick();
      const paid = (await kassa.http.get(`/checkout-sessions/${session.session_id}`)).body;
      expect(paid).toMatchObject({ status: 'paid', overpaid: false });
      const payments = await kassa.ctx.store.chain.paymentsOfSession(session.session_id as string);
      expect(payments.map((payment) => [payment.txHash, payment.attribution])).toEqual([[sent.hash, 'exact_amount']]);
    }
  });
});
