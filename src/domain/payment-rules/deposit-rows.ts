import type { TransferSnapshot } from '../payments/payment-ports.js';
import type { RuleCase } from './rule-fixtures.js';
import { row, at, TRANSFER, claim, amount, SCAN } from './rule-fixtures.js';
import { bind, failed } from './bind-rows.js';

// The rule table's rows for deposit mode (rule 0): a transfer to a session's own deposit address.

/** Deposit mode (rule 0): the transfer is to S1's own deposit address; S1 offers its asset unless said. */
const toDeposit = (offered = true, over: Partial<TransferSnapshot> = {}) =>
  amount({ claim: null, deposit: { sessionId: 'S1', offered }, ...over });

export const depositRows: RuleCase[] = [
  row(
    0,
    SCAN,
    "To S1's deposit address, any amount, no asset selected",
    toDeposit(),
    'credit',
    'paid_to_deposit_address',
  ),
  row(
    0,
    SCAN,
    "To S1's deposit address after expires_at (recorded late), S1 expired",
    toDeposit(true, { transfer: { ...TRANSFER, blockTime: at(70) } }),
    'credit',
    'paid_to_deposit_address',
  ),
  row(
    0,
    SCAN,
    "To S1's deposit address, the amount another session's unique amount elsewhere",
    toDeposit(true, { claim: claim({ sessionId: 'S2' }) }),
    'credit',
    'paid_to_deposit_address',
  ),
  row(
    0,
    SCAN,
    "To S1's deposit address in an asset S1 was not quoted in",
    toDeposit(false),
    'reserve',
    'deposit_asset_not_offered',
  ),
  row(
    0,
    SCAN,
    "To S1's deposit address, a reorganisation reversed it and it is mined again",
    toDeposit(true, { recorded: { sessionId: 'S1', attribution: 'deposit_address' } }),
    'credit',
    'payment_reincluded',
  ),
  bind(
    'Deposit mode, a mined transfer (to its address or anywhere)',
    'mined',
    'hint',
    'deposit_bind_hint',
    {
      depositMode: true,
    },
    0,
  ),
  bind('Deposit mode, a pending transaction', 'pending', 'hint', 'deposit_bind_hint', { depositMode: true }, 0),
  bind(
    'Deposit mode, mined before the session was created',
    'mined',
    'hint',
    'deposit_bind_hint',
    { depositMode: true, verdict: failed('tx_mined_before_session'), share: null },
    0,
  ),
  bind(
    'Deposit mode, a transaction the chain proves pays elsewhere',
    'mined',
    'refuse',
    'wrong_recipient',
    { depositMode: true, verdict: failed('wrong_recipient'), share: null },
    0,
  ),
];
