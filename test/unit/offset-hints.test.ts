import { Decimal } from '../../src/domain/shared/money.js';
import { describe, expect, it } from 'vitest';
import { OffsetHints } from '../../src/db/sessions/create-session.store.js';
import type { AmountClaimRequest } from '../../src/domain/payments/payment-ports.js';
import { amountLane, laneSize } from '../../src/domain/rates/quotes.js';

const wallets = [
  { network: 'ethereum', walletAddress: '0x00000000000000000000000000000000000000AA' },
  { network: 'base', walletAddress: '0x00000000000000000000000000000000000000aa' },
];
const claim = (base: string, on = wallets): AmountClaimRequest => ({
  ticker: 'USDT',
  baseAmount: new Decimal(base),
  step: new Decimal('0.000001'),
  wallets: on,
});

describe('the step a unique amount tries first (src/db/sessions/create-session.store.ts, docs/payment-rules.md rule 4)', () => {
  // Found by profiling create (issue 10): creates of one price drafted before the previous one's write returned were
  // all given the same step; every one of them but the first fell back to kassa_claim_amount's search.
  it('creates of one price drafted at once are handed consecutive steps, before any write returns', () => {
    const hints = new OffsetHints();
    expect([0, 1, 2, 3].map(() => hints.take(claim('10'), 100))).toEqual([0, 1, 2, 3]);
  });

  it('each base on each list of wallets counts on its own; a wallet is the same in any letter case', () => {
    const hints = new OffsetHints();
    hints.take(claim('10'), 100);
    expect(hints.take(claim('11'), 100)).toBe(0);
    expect(hints.take(claim('10', [wallets[0]!]), 100)).toBe(0);
    const upper = wallets.map((wallet) => ({ ...wallet, walletAddress: wallet.walletAddress.toUpperCase() }));
    expect(hints.take(claim('10', upper), 100)).toBe(1);
  });

  it('never hands out a step at or beyond the cap: it goes round to 0', () => {
    const hints = new OffsetHints();
    expect(Array.from({ length: 5 }, () => hints.take(claim('10'), 3))).toEqual([0, 1, 2, 0, 1]);
    const smaller = new OffsetHints();
    for (let i = 0; i < 8; i++) smaller.take(claim('10'), 10);
    expect(smaller.take(claim('10'), 5)).toBe(0);
  });

  it('a write that claimed another step than it tried moves the hint on from that one; one as tried does not', () => {
    const hints = new OffsetHints();
    const tried = hints.take(claim('10'), 100);
    hints.take(claim('10'), 100);
    hints.learn(claim('10'), tried, tried, 100);
    expect(hints.take(claim('10'), 100)).toBe(2);
    hints.learn(claim('10'), 2, 40, 100);
    expect(hints.take(claim('10'), 100)).toBe(41);
    hints.learn(claim('10'), 41, null, 100);
    expect(hints.take(claim('10'), 100)).toBe(0);
  });

  it('a claim without wallets takes step 0 and hands nothing out', () => {
    const hints = new OffsetHints();
    expect(hints.take(claim('10', []), 100)).toBe(0);
    expect(hints.take(claim('10', []), 100)).toBe(0);
  });

  it('forgets the oldest base first once it holds `capacity` of them', () => {
    const hints = new OffsetHints(2);
    hints.take(claim('1'), 100);
    hints.take(claim('2'), 100);
    hints.take(claim('1'), 100);
    hints.take(claim('3'), 100);
    expect(hints.take(claim('2'), 100)).toBe(0);
    expect(hints.take(claim('3'), 100)).toBe(1);
  });
});

describe("a payment link's lane of a price's amounts (src/domain/rates/quotes.ts, docs/payment-rules.md rule 4)", () => {
  it('link sessions take the odd steps, API creates any; with a single step there is no lane', () => {
    expect(amountLane(true, 100)).toEqual({ first: 1, stride: 2 });
    expect(amountLane(false, 100)).toEqual({ first: 0, stride: 1 });
    expect(amountLane(true, 1)).toEqual({ first: 0, stride: 1 });
    expect(laneSize(amountLane(true, 100), 100)).toBe(50);
    expect(laneSize(amountLane(true, 5), 5)).toBe(2);
    expect(laneSize(amountLane(false, 100), 100)).toBe(100);
  });

  it("hints walk a link lane's odd steps, go round to its first, and count apart from the API's", () => {
    const link = { ...claim('10'), lane: amountLane(true, 6) };
    const hints = new OffsetHints();
    expect(Array.from({ length: 4 }, () => hints.take(link, 6))).toEqual([1, 3, 5, 1]);
    expect(hints.take({ ...claim('10'), lane: amountLane(false, 6) }, 6)).toBe(0);
    hints.learn(link, 3, 4, 6);
    expect(hints.take(link, 6)).toBe(1);
  });
});
