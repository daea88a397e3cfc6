import { describe, expect, it } from 'vitest';
import { DomainError } from '../../src/domain/shared/errors.js';
import { Decimal } from '../../src/domain/shared/money.js';
import { canMove, REFUND_STATUSES, REFUND_TRANSITIONS, type Refund } from '../../src/domain/refunds/refund.js';
import { chooseSource, fiatToToken, refundAmount } from '../../src/domain/refunds/refund-amounts.js';
import { evmAddressProblem } from '../../src/domain/refunds/refund-address.js';
import { refundInputProblems } from '../../src/domain/refunds/create-refund.js';
import type { ReceivedAsset, RefundableSession } from '../../src/domain/refunds/refund-ports.js';

/** The pure rules of refunds (docs/decisions/0032): amounts per kind, sources, addresses, input, states. */

const usdt: ReceivedAsset = {
  network: 'local',
  chainId: '31337',
  asset: 'USDT',
  tokenAddress: '0x5fbdb2315678afecb367f032d93f642f64180aa3',
  amount: new Decimal('110.5'),
  payers: ['0x3c44cdddb6a900fa2b585dd299e03d12fa4293bc'],
};

function session(overrides: Partial<RefundableSession> = {}): RefundableSession {
  return {
    id: 's',
    organisationId: 'o',
    status: 'paid',
    overpaid: true,
    fiatCurrency: 'USD',
    cryptoCurrency: 'USDT',
    totalAmountCrypto: new Decimal('105.000001'),
    chainId: '31337',
    received: [usdt],
    refunds: [],
    ...overrides,
  };
}

const held = (amount: string, status: Refund['status'] = 'ready') =>
  ({ network: 'local', asset: 'USDT', amount: new Decimal(amount), status }) as Refund;

function refusal(work: () => unknown): string {
  try {
    work();
  } catch (error) {
    expect(error).toBeInstanceOf(DomainError);
    return (error as DomainError).reason;
  }
  throw new Error('no refusal');
}

describe('refund amounts', () => {
  it('full: what is left of what was received, rounded down to the token', () => {
    expect(refundAmount(session(), usdt, 6, { kind: 'full' }).toFixed()).toBe('110.5');
    const left = session({ refunds: [held('10.1234567'), held('5', 'cancelled')] });
    expect(refundAmount(left, usdt, 6, { kind: 'full' }).toFixed()).toBe('100.376543');
    expect(refusal(() => refundAmount(session({ refunds: [held('110.5')] }), usdt, 6, { kind: 'full' }))).toBe(
      'refund_exceeds_received',
    );
  });

  it('excess: above the price in the selected asset, less what refunds hold; only when overpaid', () => {
    expect(refundAmount(session(), usdt, 6, { kind: 'excess' }).toFixed()).toBe('5.499999');
    expect(refundAmount(session({ refunds: [held('2')] }), usdt, 6, { kind: 'excess' }).toFixed()).toBe('3.499999');
    expect(refusal(() => refundAmount(session({ refunds: [held('6')] }), usdt, 6, { kind: 'excess' }))).toBe(
      'refund_exceeds_received',
    );
    expect(refusal(() => refundAmount(session({ overpaid: false }), usdt, 6, { kind: 'excess' }))).toBe('not_overpaid');
    expect(refusal(() => refundAmount(session({ cryptoCurrency: 'BTC' }), usdt, 6, { kind: 'excess' }))).toBe(
      'not_overpaid',
    );
  });

  it('part: at most what is left, at most the token decimals', () => {
    expect(refundAmount(session(), usdt, 6, { kind: 'part', amount: new Decimal('110.5') }).toFixed()).toBe('110.5');
    expect(refusal(() => refundAmount(session(), usdt, 6, { kind: 'part', amount: new Decimal('110.500001') }))).toBe(
      'refund_exceeds_received',
    );
    expect(refusal(() => refundAmount(session(), usdt, 6, { kind: 'part', amount: new Decimal('0.0000001') }))).toBe(
      'validation_failed',
    );
  });

  it('fiat converts at the rate, rounded down', () => {
    expect(fiatToToken(new Decimal(10), new Decimal(3), 6).toFixed()).toBe('3.333333');
    expect(fiatToToken(new Decimal(10), new Decimal(4000), 18).toFixed()).toBe('0.0025');
  });
});

describe('refund sources', () => {
  const eth = { ...usdt, asset: 'ETH' as const, tokenAddress: null, amount: new Decimal(1) };
  it('needs a closed session and names one source when several fit', () => {
    expect(refusal(() => chooseSource(session({ status: 'partial' }), {}))).toBe('session_not_refundable');
    expect(refusal(() => chooseSource(session({ received: [] }), {}))).toBe('session_not_refundable');
    expect(chooseSource(session(), {})).toBe(usdt);
    expect(refusal(() => chooseSource(session({ received: [usdt, eth] }), {}))).toBe('validation_failed');
    expect(chooseSource(session({ received: [usdt, eth] }), { cryptoCurrency: 'ETH' })).toBe(eth);
    expect(refusal(() => chooseSource(session(), { network: 'bsc' }))).toBe('session_not_refundable');
  });
});

describe('refund addresses and input', () => {
  it('checks form, EIP-55 checksum and the zero address', () => {
    expect(evmAddressProblem('0x52908400098527886E0F7030069857D2E4169EE7')).toBeNull();
    expect(evmAddressProblem('0x52908400098527886e0f7030069857d2e4169ee7')).toBeNull();
    expect(evmAddressProblem('0x52908400098527886E0F7030069857D2E4169Ee7')).toMatch(/checksum/);
    expect(evmAddressProblem('0x1234')).toMatch(/must be an address/);
    expect(evmAddressProblem(`0x${'0'.repeat(40)}`)).toMatch(/zero address/);
  });

  it('pairs each amount with its kind and basis', () => {
    expect(refundInputProblems({ kind: 'full' })).toEqual([]);
    expect(refundInputProblems({ kind: 'part' })).toEqual(['amount is required when kind is part']);
    expect(refundInputProblems({ kind: 'full', basis: 'fiat' })).toEqual(['basis must be token unless kind is part']);
    expect(refundInputProblems({ kind: 'excess', amount: new Decimal(1) })).toEqual([
      'amount is only for kind part with basis token',
    ]);
    expect(refundInputProblems({ kind: 'full', destination: '0xabc', claimExpiresInMinutes: 60 })).toHaveLength(2);
    expect(refundInputProblems({ kind: 'full', claimExpiresInMinutes: 4 })).toHaveLength(1);
    expect(refundInputProblems({ kind: 'full', note: 'x'.repeat(501) })).toHaveLength(1);
  });
});

describe('refund states', () => {
  it('allow exactly the documented changes; the ended states none', () => {
    const allowed = REFUND_STATUSES.flatMap((from) =>
      REFUND_STATUSES.filter((to) => canMove(from, to)).map((to) => `${from}→${to}`),
    );
    expect(allowed).toEqual([
      'awaiting_destination→ready',
      'awaiting_destination→cancelled',
      'awaiting_destination→expired',
      'ready→sent',
      'ready→cancelled',
      'sent→confirmed',
      'sent→failed',
      'confirmed→sent',
    ]);
    for (const end of ['cancelled', 'expired', 'failed'] as const) expect(REFUND_TRANSITIONS[end]).toEqual([]);
  });
});
