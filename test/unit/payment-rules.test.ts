import { describe, expect, it } from 'vitest';
import type { AssetTicker } from '../../src/domain/shared/assets.js';
import type { CheckoutSession } from '../../src/domain/sessions/checkout-session.js';
import { Decimal } from '../../src/domain/shared/money.js';
import type { Network } from '../../src/domain/shared/networks.js';
import { judgeBoundTransaction, type BoundTxVerdict } from '../../src/domain/payments/bound-transactions.js';
import type { BoundTransaction, BoundTxEvidence } from '../../src/domain/payments/chain-ports.js';
import type { RejectionCode } from '../../src/domain/shared/reason-codes.js';
import { attributeTransfer } from '../../src/domain/payments/payments.js';
import { amountDue, pendingCoversDue } from '../../src/domain/sessions/session-amounts.js';

// docs/payment-rules.md, rules 2 and 3: who a scanned transfer pays, and how a bound transaction is judged.

// --- builders -------------------------------------------------------------------------------

const d = (text: string) => new Decimal(text);

/** config/networks.json `local` (anvil); token addresses checksummed as in the registry. */
const LOCAL: Network = {
  slug: 'local',
  name: 'Local (anvil)',
  chainId: 31337,
  nativeAsset: 'ETH',
  confirmations: 1,
  tokens: [
    { ticker: 'USDT', address: '0x5FbDB2315678afecb367f032d93F642f64180aa3', decimals: 6 },
    { ticker: 'USDC', address: '0xe7f1725E7734CE288F8367e1Bb143E90bb3F0512', decimals: 18 },
    { ticker: 'BTC', address: '0x9fE46736679d2D9a65F0992F2272dE9f3c7fa6e0', decimals: 18 },
  ],
  rpcUrls: ['http://127.0.0.1:8545'],
};
/** The same chain, but three confirmations needed. */
const SLOW: Network = { ...LOCAL, confirmations: 3 };

// Evidence carries lower-case addresses (the watcher lower-cases them).
const USDT = '0x5fbdb2315678afecb367f032d93f642f64180aa3';
const USDC = '0xe7f1725e7734ce288f8367e1bb143e90bb3f0512';
const BTC = '0x9fe46736679d2d9a65f0992f2272de9f3c7fa6e0';
const UNKNOWN_TOKEN = '0xcafecafecafecafecafecafecafecafecafecafe';

/** The session wallet on `local`, checksummed as the organisation entered it. */
const WALLET_CHECKSUMMED = '0x70997970C51812dc3A010C7d01b50e0d17dc79C8';
const WALLET = WALLET_CHECKSUMMED.toLowerCase();
/** The organisation's wallet on another network of the session. */
const ETHEREUM_WALLET = '0x1111111111111111111111111111111111111111';
const PAYER = '0xf39fd6e51aad88f6f4ce6ab8827279cfffb92266';
const STRANGER = '0x3c44cdddb6a900fa2b585dd299e03d12fa4293bc';
const ROUTER = '0x2222222222222222222222222222222222222222';

const HASH = `0x${'ab'.repeat(32)}`;
const BOUND_AT = new Date('2025-01-15T12:10:00.000Z');
const minutesAfterBinding = (minutes: number) => new Date(BOUND_AT.getTime() + minutes * 60_000);
const NOW = minutesAfterBinding(5);
const DROPPED_AFTER = 30;

function session(overrides: Partial<CheckoutSession> = {}): CheckoutSession {
  return {
    id: '7c9e6679-7425-40de-944b-e07fc1f90ae7',
    organisationId: '3f2504e0-4f89-41d3-9a0c-0305e82c3301',
    organisationName: 'Acme Coffee',
    organisationDeleted: false,
    ownerUserId: null,
    status: 'waiting_payment',
    source: 'api',
    fromPaymentLink: false,
    anonymous: false,
    requiresPayerIdentity: false,
    identityOptions: [],
    productPaymentLinkId: null,
    fiatCurrency: 'USD',
    totalAmountFiat: d('25'),
    cryptoCurrency: 'USDT',
    totalAmountCrypto: d('25.005'),
    networks: [
      { network: 'ethereum', chainId: '1', walletAddress: ETHEREUM_WALLET },
      { network: 'local', chainId: '31337', walletAddress: WALLET_CHECKSUMMED },
    ],
    quotes: [
      {
        ticker: 'USDT',
        assetId: 'tether',
        unitPriceFiat: d('0.9998'),
        amount: d('25.005'),
        baseAmount: d('25.005'),
        amountStep: d('0.000001'),
        offsetSteps: 0,
        rateSource: 'static',
        ratedAt: new Date('2025-01-15T12:00:00Z'),
        rounding: 'ceil 8',
      },
    ],
    items: [{ name: 'Coffee beans', quantity: 2, unitPrice: d('12.5'), totalPrice: d('25'), productId: null }],
    expiresAt: new Date('2025-01-15T13:00:00.000Z'),
    overpaid: false,
    boundTxHash: HASH,
    boundAt: BOUND_AT,
    boundTxCheckedAt: null,
    payerWalletAddress: PAYER,
    chainId: '31337',
    failureReason: null,
    amountReceived: d('0'),
    amountReceivedLate: d('0'),
    restAmount: null,
    amountPending: d('0'),
    quotedAt: new Date('2025-01-15T12:00:00.000Z'),
    paymentPolicy: { underpaymentTolerancePercent: d('0'), latePaymentWindowMinutes: 1440 },
    user: { id: 'customer-1', email: 'payer@example.com', telegramId: null, username: null },
    metadata: {},
    createdAt: new Date('2025-01-15T12:00:00.000Z'),
    updatedAt: new Date('2025-01-15T12:10:00.000Z'),
    ...overrides,
  };
}

/** The bound transaction being judged: bound at BOUND_AT for the session's asset, naming PAYER. */
function bound(overrides: Partial<BoundTransaction> = {}): BoundTransaction {
  return {
    id: '00000000-0000-4000-8000-000000000001',
    sessionId: session().id,
    network: 'local',
    chainId: '31337',
    txHash: HASH,
    cryptoCurrency: 'USDT',
    payerWalletAddress: PAYER,
    state: 'unverified',
    reasonCode: null,
    reason: null,
    seenOnChainAt: null,
    clientAddress: null,
    createdAt: BOUND_AT,
    ...overrides,
  };
}

/** A session with no asset selected yet, and the bind asks for `ticker`. */
const expecting = (ticker: AssetTicker) => ({
  session: session({ cryptoCurrency: null, totalAmountCrypto: null, chainId: null }),
  bound: bound({ cryptoCurrency: ticker }),
});

type Transfer = { tokenAddress: string; from: string; to: string; baseUnits: bigint; logIndex: number };
const transfer = (tokenAddress: string, to: string, baseUnits = 25_005_000n, from = PAYER, logIndex = 0): Transfer => ({
  tokenAddress,
  from,
  to,
  baseUnits,
  logIndex,
});

type Mined = Extract<BoundTxEvidence, { kind: 'mined' }>;
const MINED_AT = new Date('2025-01-15T12:09:00.000Z');
function mined(overrides: Partial<Mined> = {}): Mined {
  return {
    kind: 'mined',
    reverted: false,
    blockNumber: 100n,
    blockHash: `0x${'12'.repeat(32)}`,
    blockTime: MINED_AT,
    confirmations: 1,
    transfers: [],
    nativeTo: null,
    nativeValue: 0n,
    sender: PAYER,
    ...overrides,
  };
}

/** A token payment: the transaction calls the token contract, so it moves no native value. */
const tokenCall = (token: string, ...transfers: Transfer[]) => mined({ nativeTo: token, nativeValue: 0n, transfers });
const nativeSend = (to: string, wei = 10n ** 16n) => mined({ nativeTo: to, nativeValue: wei });

const judge = (
  subject: CheckoutSession | { session: CheckoutSession; bound: BoundTransaction },
  evidence: BoundTxEvidence,
  network: Network = LOCAL,
  now: Date = NOW,
) => {
  const pair =
    'bound' in subject
      ? subject
      : {
          session: subject,
          bound: bound({
            payerWalletAddress: subject.payerWalletAddress,
            cryptoCurrency: subject.cryptoCurrency ?? 'USDT',
          }),
        };
  return judgeBoundTransaction(pair.session, pair.bound, network, evidence, now, DROPPED_AFTER);
};

type Verdict = BoundTxVerdict | 'VALID';
const WAIT: Verdict = { kind: 'wait', onChain: false };
const VALID = 'VALID' as const;
/** Each rejection's code, by the words its text begins with (the table states the text; the code must agree). */
const CODE_BY_PREFIX: ReadonlyArray<readonly [string, RejectionCode]> = [
  ['not mined:', 'not_mined'],
  ['wrong chain:', 'wrong_chain'],
  ['dropped:', 'dropped'],
  ['reverted:', 'reverted'],
  ['mined before', 'tx_mined_before_session'],
  ['wrong asset:', 'wrong_asset'],
  ['wrong sender:', 'wrong_sender'],
  ['wrong recipient:', 'wrong_recipient'],
  ['no payment:', 'no_payment'],
];
const codeOf = (reason: string): RejectionCode => CODE_BY_PREFIX.find(([prefix]) => reason.startsWith(prefix))![1];
const failed = (reason: string): Verdict => ({ kind: 'failed', code: codeOf(reason), reason });
/** Valid verdicts carry the paying transfers; the table only asks that it is valid. */
const outcome = (verdict: BoundTxVerdict): Verdict => (verdict.kind === 'valid' ? VALID : verdict);

// --- attributeTransfer ----------------------------------------------------------------------

describe('pendingCoversDue (the hosted page stops asking for more)', () => {
  const covers = (total: string | null, received: string, pending: string) =>
    pendingCoversDue({
      totalAmountCrypto: total === null ? null : new Decimal(total),
      amountReceived: new Decimal(received),
      amountPending: new Decimal(pending),
    });

  it('compares pending (rounded down) with what is due (rounded up) at 8 digits', () => {
    expect(covers('10', '4', '6')).toBe(true);
    expect(covers('10', '4', '7')).toBe(true);
    expect(covers('10', '4', '5.99999999')).toBe(false);
    expect(covers('10.000000001', '0', '10')).toBe(false);
    expect(covers('10', '0', '10.000000009')).toBe(true);
  });

  it('is false with nothing pending or no asset selected', () => {
    expect(covers('10', '10', '0')).toBe(false);
    expect(covers(null, '0', '1')).toBe(false);
  });
});

describe('amountDue (what the page asks for)', () => {
  const due = (status: CheckoutSession['status'], received: string, rest: string | null) =>
    amountDue({
      status,
      totalAmountCrypto: new Decimal('10'),
      amountReceived: new Decimal(received),
      restAmount: rest === null ? null : new Decimal(rest),
    })?.toFixed();

  it("after a partial payment, the rest's own unique amount", () => {
    expect(due('partial', '4', '6.000002')).toBe('6.000002');
    expect(due('partial', '4', null)).toBe('6');
  });

  // Found by a review: a session closed by the clock kept its rest amount, given up with its claims, on show.
  it('never the rest amount of a closed session, nor one below what is owed', () => {
    expect(due('expired', '4', '6.000002')).toBe('6');
    expect(due('failed', '4', '6.000002')).toBe('6');
    expect(due('partial', '3', '6.000002')).toBe('7');
    expect(due('paid', '10', '6.000002')).toBe('0');
  });
});

describe('attributeTransfer', () => {
  it('credits the session whose unique amount the transfer is, exactly', () => {
    expect(attributeTransfer({ exactAmountSessionId: 'exact' })).toEqual({
      sessionId: 'exact',
      attribution: 'exact_amount',
    });
  });

  it('credits nobody otherwise: a bound transaction is credited when its bind is verified, and a sending address proves nothing', () => {
    expect(attributeTransfer({ exactAmountSessionId: null })).toBeNull();
  });
});

// --- judgeBoundTransaction ------------------------------------------------------------------

describe('judgeBoundTransaction: before the receipt', () => {
  it('waits while the transaction is pending within the grace, and says the chain knows it', () => {
    expect(judge(session(), { kind: 'pending' }, LOCAL, minutesAfterBinding(29))).toEqual({
      kind: 'wait',
      onChain: true,
    });
  });

  it('rejects a transaction still pending when the grace after binding is over: it may not hold the session or its quote for ever', () => {
    expect(judge(session(), { kind: 'pending' }, LOCAL, minutesAfterBinding(30))).toEqual({
      kind: 'failed',
      code: 'not_mined',
      reason: `not mined: transaction ${HASH} was still pending on local 30 minutes after it was bound`,
    });
  });

  it('when expires_at falls inside the grace after binding, a pending transaction waits the grace after expires_at', () => {
    const expiring = session({ expiresAt: minutesAfterBinding(20) });
    expect(judge(expiring, { kind: 'pending' }, LOCAL, minutesAfterBinding(49))).toEqual({
      kind: 'wait',
      onChain: true,
    });
    expect(judge(expiring, { kind: 'pending' }, LOCAL, minutesAfterBinding(50))).toMatchObject({
      kind: 'failed',
      reason: expect.stringMatching(/^not mined: /),
    });
  });

  it.each([
    ['just after binding', 0],
    ['within the grace', 29],
    ['a millisecond before the grace ends', 30 - 1 / 60_000],
  ])('waits for a missing transaction %s', (_name, minutes) => {
    expect(judge(session(), { kind: 'missing', foundOn: null }, LOCAL, minutesAfterBinding(minutes))).toEqual(WAIT);
  });

  it.each([
    ['when the grace ends', 30],
    ['long after the grace', 600],
  ])('fails a missing transaction as dropped %s', (_name, minutes) => {
    expect(judge(session(), { kind: 'missing', foundOn: null }, LOCAL, minutesAfterBinding(minutes))).toEqual(
      failed(`dropped: transaction ${HASH} was not found on local within 30 minutes of binding`),
    );
  });

  it('counts the grace from the binding time, with the configured minutes in the reason', () => {
    const verdict = judgeBoundTransaction(
      session(),
      bound(),
      LOCAL,
      { kind: 'missing', foundOn: null },
      minutesAfterBinding(5),
      5,
    );
    expect(verdict).toEqual(failed(`dropped: transaction ${HASH} was not found on local within 5 minutes of binding`));
  });

  it.each([
    ['within the grace', 1],
    ['past the grace', 600],
  ])('fails a transaction found on another network as the wrong chain %s', (_name, minutes) => {
    const evidence: BoundTxEvidence = { kind: 'missing', foundOn: { slug: 'ethereum', chainId: 1 } };
    expect(judge(session(), evidence, LOCAL, minutesAfterBinding(minutes))).toEqual(
      failed(
        `wrong chain: transaction ${HASH} is on ethereum (chain id 1), not on local (chain id 31337) it was bound with`,
      ),
    );
  });
});

describe('judgeBoundTransaction: judged once mined, whatever the confirmations (the money counts only once confirmed)', () => {
  const payment = tokenCall(USDT, transfer(USDT, WALLET));

  it.each([1, 2, 3])('judges with %i of the 3 confirmations the network needs', (confirmations) => {
    expect(outcome(judge(session(), { ...payment, confirmations }, SLOW))).toEqual(VALID);
  });

  it('calls a revert at once: a reverted transaction moved nothing', () => {
    expect(judge(session(), mined({ reverted: true, confirmations: 1, blockNumber: 7n }), SLOW)).toEqual(
      failed(`reverted: transaction ${HASH} reverted in block 7 on local`),
    );
  });
});

describe('judgeBoundTransaction: mined while the session existed, to the second, with no skew', () => {
  const created = session().createdAt.getTime();
  const before = (at: string, createdAt = '2025-01-15T12:00:00.000Z') =>
    failed(
      `mined before this checkout session was created: transaction ${HASH} is in block 100 of ${at}, the session was ` +
        `created at ${createdAt}`,
    );
  it.each<[string, number, Verdict]>([
    ['a block an hour before', -3_600_000, before('2025-01-15T11:00:00.000Z')],
    [
      'a block 30 s before (a skew allowed only to exact amounts found by a scan)',
      -30_000,
      before('2025-01-15T11:59:30.000Z'),
    ],
    ['a block 1 s before', -1_000, before('2025-01-15T11:59:59.000Z')],
    ['a block of the second the session was created in', 0, VALID],
    ['a block after', 60_000, VALID],
  ])('%s', (_name, offset, expected) => {
    expect(
      outcome(judge(session(), { ...tokenCall(USDT, transfer(USDT, WALLET)), blockTime: new Date(created + offset) })),
    ).toEqual(expected);
  });

  it('a session created within a second is not newer than a block of that second (block times are whole seconds)', () => {
    const later = session({ createdAt: new Date(created + 999) });
    const blockTime = new Date(created);
    expect(outcome(judge(later, { ...tokenCall(USDT, transfer(USDT, WALLET)), blockTime }))).toEqual(VALID);
    const next = session({ createdAt: new Date(created + 1_000) });
    expect(outcome(judge(next, { ...tokenCall(USDT, transfer(USDT, WALLET)), blockTime }))).toEqual(
      before('2025-01-15T12:00:00.000Z', '2025-01-15T12:00:01.000Z'),
    );
  });
});

describe('judgeBoundTransaction: against what the session selected meanwhile', () => {
  it('another asset selected since the bind', () => {
    const subject = { session: session({ cryptoCurrency: 'BTC' }), bound: bound({ cryptoCurrency: 'USDT' }) };
    expect(judge(subject, tokenCall(USDT, transfer(USDT, WALLET)))).toEqual(
      failed(`wrong asset: the session has selected BTC since transaction ${HASH} was bound for USDT`),
    );
  });

  it('another chain selected since the bind', () => {
    const subject = { session: session({ chainId: '1' }), bound: bound() };
    expect(judge(subject, tokenCall(USDT, transfer(USDT, WALLET)))).toEqual(
      failed(`wrong chain: the session is paid on chain 1 since transaction ${HASH} was bound on chain 31337`),
    );
  });
});

describe('judgeBoundTransaction: mined', () => {
  it.each<[string, CheckoutSession | { session: CheckoutSession; bound: BoundTransaction }, BoundTxEvidence, Verdict]>([
    // reverted
    [
      'a reverted transaction, even one with the right transfer log',
      session(),
      mined({ reverted: true, blockNumber: 4242n, transfers: [transfer(USDT, WALLET)] }),
      failed(`reverted: transaction ${HASH} reverted in block 4242 on local`),
    ],

    // valid
    ['a token payment to the session wallet', session(), tokenCall(USDT, transfer(USDT, WALLET)), VALID],
    ['a token payment of 1 base unit', session(), tokenCall(USDT, transfer(USDT, WALLET, 1n)), VALID],
    [
      'a token payment through a contract (swap: USDC in, USDT out to the wallet)',
      session(),
      mined({
        nativeTo: ROUTER,
        transfers: [transfer(USDC, ROUTER, 10n ** 18n), transfer(USDT, WALLET, 25_005_000n, ROUTER, 1)],
      }),
      VALID,
    ],
    [
      'a payment in another registry token the session offers (BTC)',
      expecting('BTC'),
      tokenCall(BTC, transfer(BTC, WALLET, 10n ** 15n)),
      VALID,
    ],
    ['a native payment to the session wallet', expecting('ETH'), nativeSend(WALLET), VALID],
    ['a native payment of 1 wei', expecting('ETH'), nativeSend(WALLET, 1n), VALID],
    [
      'a zero-value transfer of the right token (address-poisoning spam) proves nothing',
      session(),
      tokenCall(USDT, transfer(USDT, WALLET, 0n)),
      failed(`no payment: transaction ${HASH} does not transfer USDT to the session wallet ${WALLET}`),
    ],

    // wrong asset
    [
      'another registry token to the session wallet',
      session(),
      tokenCall(USDC, transfer(USDC, WALLET, 25n * 10n ** 18n)),
      failed(`wrong asset: transaction ${HASH} transfers USDC to the session wallet; the session expects USDT`),
    ],
    [
      'an unknown token contract to the session wallet',
      session(),
      tokenCall(UNKNOWN_TOKEN, transfer(UNKNOWN_TOKEN, WALLET)),
      failed(
        `wrong asset: transaction ${HASH} transfers token ${UNKNOWN_TOKEN} to the session wallet; the session expects USDT`,
      ),
    ],
    [
      'the native coin to the session wallet when a token is expected',
      session(),
      nativeSend(WALLET),
      failed(`wrong asset: transaction ${HASH} sends ETH to the session wallet; the session expects USDT`),
    ],
    [
      'a token to the session wallet when the native coin is expected',
      expecting('ETH'),
      tokenCall(USDT, transfer(USDT, WALLET)),
      failed(`wrong asset: transaction ${HASH} transfers USDT to the session wallet; the session expects ETH`),
    ],

    // wrong recipient
    [
      'the right token to another address',
      session(),
      tokenCall(USDT, transfer(USDT, STRANGER)),
      failed(`wrong recipient: transaction ${HASH} transfers USDT to ${STRANGER}, not to the session wallet ${WALLET}`),
    ],
    [
      "the right token to the organisation's wallet on another network of the session",
      session(),
      tokenCall(USDT, transfer(USDT, ETHEREUM_WALLET)),
      failed(
        `wrong recipient: transaction ${HASH} transfers USDT to ${ETHEREUM_WALLET}, not to the session wallet ${WALLET}`,
      ),
    ],
    [
      'the native coin to another address when the native coin is expected',
      expecting('ETH'),
      nativeSend(STRANGER),
      failed(`wrong recipient: transaction ${HASH} sends ETH to ${STRANGER}, not to the session wallet ${WALLET}`),
    ],

    // no payment
    [
      'a receipt with no transfer at all',
      session(),
      mined({ nativeTo: ROUTER }),
      failed(`no payment: transaction ${HASH} does not transfer USDT to the session wallet ${WALLET}`),
    ],
    [
      'a receipt whose only transfer is another token to another address',
      session(),
      tokenCall(USDC, transfer(USDC, STRANGER, 10n ** 18n)),
      failed(`no payment: transaction ${HASH} does not transfer USDT to the session wallet ${WALLET}`),
    ],
    [
      'a zero-value native call to the session wallet when the native coin is expected',
      expecting('ETH'),
      nativeSend(WALLET, 0n),
      failed(`no payment: transaction ${HASH} does not transfer ETH to the session wallet ${WALLET}`),
    ],
    [
      'a contract creation (no recipient) when the native coin is expected',
      expecting('ETH'),
      mined({ nativeTo: null, nativeValue: 10n ** 16n }),
      failed(`no payment: transaction ${HASH} does not transfer ETH to the session wallet ${WALLET}`),
    ],
  ])('%s', (_name, subject, evidence, expected) => {
    expect(outcome(judge(subject, evidence))).toEqual(expected);
  });

  it('compares the checksummed session wallet with lower-case evidence', () => {
    expect(session().networks[1]!.walletAddress).not.toBe(WALLET);
    expect(outcome(judge(session(), tokenCall(USDT, transfer(USDT, WALLET))))).toEqual(VALID);
  });

  it('a valid verdict carries exactly the transfers that pay the session, with their block', () => {
    const evidence = mined({
      nativeTo: ROUTER,
      transfers: [
        transfer(USDC, ROUTER, 10n ** 18n),
        transfer(USDT, WALLET, 25_005_000n, ROUTER, 3),
        transfer(USDT, WALLET, 5n, ROUTER, 4),
      ],
    });
    const verdict = judge(session({ payerWalletAddress: null }), evidence);
    expect(verdict.kind).toBe('valid');
    const transfers = verdict.kind === 'valid' ? verdict.transfers : [];
    expect(transfers.map((t) => [t.logIndex, t.baseUnits, t.amount.toFixed(), t.asset, t.to, t.blockTime])).toEqual([
      [3, 25_005_000n, '25.005', 'USDT', WALLET, MINED_AT],
      [4, 5n, '0.000005', 'USDT', WALLET, MINED_AT],
    ]);
  });
});

describe('judgeBoundTransaction: the payer wallet named at bind', () => {
  const named = session({ payerWalletAddress: PAYER });
  it.each<[string, BoundTxEvidence, Verdict]>([
    [
      'signed by the named wallet',
      { ...tokenCall(USDT, transfer(USDT, WALLET, 25_005_000n, PAYER)), sender: PAYER },
      VALID,
    ],
    [
      'sent through a contract, the Transfer comes from the named wallet',
      { ...tokenCall(USDT, transfer(USDT, WALLET, 25_005_000n, PAYER)), sender: ROUTER },
      VALID,
    ],
    [
      'another wallet signed it and sent the tokens',
      { ...tokenCall(USDT, transfer(USDT, WALLET, 25_005_000n, STRANGER)), sender: STRANGER },
      failed(
        `wrong sender: transaction ${HASH} was sent by ${STRANGER}, not by the payer wallet ${PAYER} named when it was bound`,
      ),
    ],
    [
      'the node did not return the sender and the tokens came from another wallet',
      { ...tokenCall(USDT, transfer(USDT, WALLET, 25_005_000n, STRANGER)), sender: null },
      failed(
        `wrong sender: transaction ${HASH} was sent by an unknown account, not by the payer wallet ${PAYER} named when it was bound`,
      ),
    ],
  ])('%s', (_name, evidence, expected) => {
    expect(outcome(judge(named, evidence))).toEqual(expected);
  });

  it('no payer wallet named: any sender', () => {
    expect(
      outcome(
        judge(session({ payerWalletAddress: null }), {
          ...tokenCall(USDT, transfer(USDT, WALLET, 25_005_000n, STRANGER)),
          sender: STRANGER,
        }),
      ),
    ).toEqual(VALID);
  });
});
