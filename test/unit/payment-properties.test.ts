import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { amountStep, Decimal, fromBaseUnits, roundUpToStep, toBaseUnitsCeil } from '../../src/domain/shared/money.js';
import { attributeTransfer } from '../../src/domain/payments/payments.js';
import { NO_HOLDS, transition, type SessionState } from '../../src/domain/sessions/status-machine.js';
import type { CheckoutSessionStatus } from '../../src/domain/sessions/checkout-session.js';

/**
 * docs/payment-rules.md (rules 4 and 5), as properties over random quotes, token decimals (0, 6, 8, 18)
 * and payments: amounts are whole units of the token, a session is paid exactly when the
 * base units received reach the base units required, money is credited at most once and
 * never more than arrived.
 */

const DECIMALS = [0, 6, 8, 18] as const;
const EXPIRES = new Date('2030-01-01T00:00:00Z');
const NOW = new Date('2029-12-31T23:00:00Z');

const decimalText = (maxWhole: number, fraction: number) =>
  fc
    .tuple(fc.integer({ min: 0, max: maxWhole }), fc.integer({ min: 0, max: 10 ** fraction - 1 }))
    .map(([w, f]) => new Decimal(`${w}.${String(f).padStart(fraction, '0')}`));
const positive = (maxWhole: number, fraction: number) =>
  decimalText(maxWhole, fraction).filter((d) => d.greaterThan(0));

/** The quote of one asset: fiat total / unit price, rounded up to the token's smallest quoted unit. */
function quote(total: Decimal, price: Decimal, decimals: number) {
  const step = amountStep([decimals]);
  const required = roundUpToStep(total.dividedBy(price), step);
  return { step, required, requiredUnits: toBaseUnitsCeil(required, decimals) };
}

/** Feeds confirmed payments one by one through the status machine, as settling does. */
function settle(required: Decimal, dust: Decimal, paymentsUnits: readonly bigint[], decimals: number) {
  let state: SessionState = { status: 'waiting_payment', overpaid: false, expiresAt: EXPIRES };
  let received = new Decimal(0);
  for (const units of paymentsUnits) {
    const next = received.plus(fromBaseUnits(units, decimals));
    const result = transition(
      state,
      {
        kind: 'payments_changed',
        received: { onTime: next, late: new Decimal(0) },
        previous: { onTime: received, late: new Decimal(0) },
        required,
        tolerancePercent: new Decimal(0),
        dust,
        holds: NO_HOLDS,
      },
      NOW,
      { inflightGraceMinutes: 60 },
    );
    if (result) state = { ...state, status: result.to as CheckoutSessionStatus, overpaid: result.overpaid };
    received = next;
  }
  return { state, received };
}

describe('amounts in the token’s own units', () => {
  it('the required amount is a whole number of base units, pays the fiat total, and one step less would not', () => {
    fc.assert(
      fc.property(
        positive(1_000_000, 8),
        positive(200_000, 8),
        fc.constantFrom(...DECIMALS),
        (total, price, decimals) => {
          const { step, required, requiredUnits } = quote(total, price, decimals);
          expect(fromBaseUnits(requiredUnits, decimals).equals(required)).toBe(true);
          expect(required.times(price).greaterThanOrEqualTo(total)).toBe(true);
          expect(required.minus(step).times(price).lessThan(total)).toBe(true);
          // At most 8 fractional digits on the wire, exactly the amount.
          expect(new Decimal(required.toFixed(8)).equals(required)).toBe(true);
        },
      ),
      { numRuns: 500 },
    );
  });
});

describe('paid exactly when the base units received reach the base units required', () => {
  it('paid iff Σ received ≥ required (base units); overpaid only beyond one smallest quoted unit', () => {
    fc.assert(
      fc.property(
        positive(10_000, 8),
        positive(100_000, 8),
        fc.constantFrom(...DECIMALS),
        fc.array(fc.bigInt({ min: 1n, max: 10n ** 20n }), { minLength: 1, maxLength: 6 }),
        fc.boolean(),
        (total, price, decimals, randomUnits, endExact) => {
          const { step, required, requiredUnits } = quote(total, price, decimals);
          // Half the runs pay exactly: the first payments short, then exactly the rest.
          const units = endExact ? exactlyInParts(requiredUnits, randomUnits) : randomUnits;
          const { state } = settle(required, step, units, decimals);
          const sum = units.reduce((a, b) => a + b, 0n);
          expect(state.status === 'paid').toBe(sum >= requiredUnits);
          if (sum < requiredUnits) expect(state.status).toBe(sum > 0n ? 'partial' : 'waiting_payment');
          const stepUnits = toBaseUnitsCeil(step, decimals);
          expect(state.overpaid).toBe(sum - requiredUnits >= stepUnits && sum > requiredUnits);
          if (endExact) expect([state.status, state.overpaid]).toEqual(['paid', false]);
        },
      ),
      { numRuns: 500 },
    );
  });
});

/** `required` split into up to `parts.length` payments, the last one exactly what is left. */
function exactlyInParts(required: bigint, parts: readonly bigint[]): bigint[] {
  const out: bigint[] = [];
  let left = required;
  for (const part of parts.slice(0, -1)) {
    const take = part % left;
    if (take === 0n || take >= left) continue;
    out.push(take);
    left -= take;
  }
  out.push(left);
  return out;
}

describe('crediting over many sessions on one wallet', () => {
  it('nothing is credited twice, the sum credited never exceeds the sum received, and every exact payment pays its own session', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 30 }),
        positive(500, 2),
        fc.constantFrom(...DECIMALS),
        fc.array(
          fc.record({ session: fc.nat(), exact: fc.boolean(), units: fc.bigInt({ min: 1n, max: 10n ** 12n }) }),
          { maxLength: 40 },
        ),
        (sessionCount, total, decimals, transfers) => {
          const { step, required } = quote(total, new Decimal('1.0002'), decimals);
          // Unique amounts, as the claims table hands them out: base + k steps.
          const amounts = Array.from({ length: sessionCount }, (_, k) => required.plus(step.times(k)));
          const owner = new Map(amounts.map((amount, k) => [toBaseUnitsCeil(amount, decimals).toString(), k]));
          expect(owner.size).toBe(sessionCount);

          const credited = new Map<number, bigint>();
          const creditedTransfers = new Set<number>();
          let receivedUnits = 0n;
          transfers.forEach((transfer, index) => {
            const target = transfer.session % sessionCount;
            const units = transfer.exact ? toBaseUnitsCeil(amounts[target]!, decimals) : transfer.units;
            receivedUnits += units;
            const exactOwner = owner.get(units.toString());
            const match = attributeTransfer({
              exactAmountSessionId: exactOwner === undefined ? null : String(exactOwner),
            });
            if (!match) return;
            expect(creditedTransfers.has(index)).toBe(false);
            creditedTransfers.add(index);
            const session = Number(match.sessionId);
            credited.set(session, (credited.get(session) ?? 0n) + units);
            if (transfer.exact) expect(session).toBe(target);
          });
          const sumCredited = [...credited.values()].reduce((a, b) => a + b, 0n);
          expect(sumCredited <= receivedUnits).toBe(true);
          for (const [index, transfer] of transfers.entries()) {
            if (transfer.exact) expect(creditedTransfers.has(index)).toBe(true);
          }
          for (const [session, units] of credited) {
            const { state } = settle(amounts[session]!, step, [units], decimals);
            expect(state.status === 'paid').toBe(units >= toBaseUnitsCeil(amounts[session]!, decimals));
          }
        },
      ),
      { numRuns: 300 },
    );
  });
});
