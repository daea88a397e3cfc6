import type { AssetTicker } from '../shared/assets.js';
import type { CheckoutSession } from '../sessions/checkout-session.js';
import type { Decimal } from '../shared/money.js';
import type { ReceivedTotals } from '../sessions/status-machine.js';
import type { CheckoutSessionStatus } from '../sessions/checkout-session.js';
import type { OutcomeReason } from '../shared/reason-codes.js';

/**
 * Payments as storage keeps them: transfers seen on chain, who they are credited to, the unique amounts that tell
 * open sessions apart, and each session's totals.
 */

/** A transfer to a watched wallet, decoded from a Transfer log or a native-coin transaction. */
export interface ChainTransfer {
  readonly network: string;
  readonly chainId: string;
  /** Lower-case 0x hashes and addresses. */
  readonly txHash: string;
  /** The log's index in its block; -1 for a native-coin transfer (one per transaction). */
  readonly logIndex: number;
  readonly from: string;
  readonly to: string;
  readonly asset: AssetTicker;
  /** Lower-case token contract; null for the native coin. */
  readonly tokenAddress: string | null;
  readonly baseUnits: bigint;
  /** baseUnits / 10^decimals, exact. */
  readonly amount: Decimal;
  readonly blockNumber: bigint;
  readonly blockHash: string;
  /** The block's own timestamp. */
  readonly blockTime: Date;
}

export type Attribution = 'bound_tx' | 'payer_wallet' | 'exact_amount' | 'deposit_address';

/**
 * Sessions a scanned transfer could belong to, each already on the transfer's wallet and network, with its asset (or
 * none selected yet), and created before the block.
 */
export interface AttributionCandidates {
  /** The open session whose unique amount this transfer is, exactly. */
  readonly exactAmountSessionId: string | null;
}

/** Who a transfer is credited to, and why. */
export interface Credit {
  readonly sessionId: string;
  readonly attribution: Attribution;
}

/** A session's confirmed and pending money in its asset on its chain. */
export interface PaymentTotals extends ReceivedTotals {
  /** Credited, seen on chain, not confirmed yet. */
  readonly pending: Decimal;
}

/** One asset's amount to make unique among the open sessions on the same wallets. */
export interface AmountClaimRequest {
  readonly ticker: AssetTicker;
  readonly baseAmount: Decimal;
  readonly step: Decimal;
  /** The session's wallets on the networks that carry the asset. */
  readonly wallets: ReadonlyArray<{ readonly network: string; readonly walletAddress: string }>;
  /** The steps it may take (amountLane): the first and the stride; every step when absent. */
  readonly lane?: AmountLane;
}

/** The steps `first`, `first + stride`, ... below KASSA_UNIQUE_AMOUNT_STEPS (docs/payment-rules.md, rule 4). */
export interface AmountLane {
  readonly first: number;
  readonly stride: number;
}

/** A payment row, as operators see it. */
export interface PaymentRecord extends ChainTransfer {
  readonly id: string;
  readonly state: 'seen' | 'confirmed' | 'reversed';
  readonly confirmations: number;
  readonly sessionId: string | null;
  readonly attribution: Attribution | null;
  /** Unattributed, of an amount this session was asked for (docs/payment-rules.md, rule 2): only its bind takes it. */
  readonly reservedFor: string | null;
  readonly late: boolean;
  readonly createdAt: Date;
}

// The facts storage loads for decide() (src/domain/payments/decide.ts, amount-facts.ts), and what a scan applies.

/** What a session's credited payments say, for whether an exact payment outranks its bound parts. */
export interface SessionPaymentFacts {
  readonly sessionId: string;
  readonly status: CheckoutSessionStatus;
  readonly createdAt: Date;
  readonly expiresAt: Date;
  readonly cryptoCurrency: AssetTicker | null;
  readonly chainId: string | null;
  readonly totalAmountCrypto: Decimal | null;
  readonly tolerancePercent: Decimal;
  /** A payment credited to it other than by a bind (the transfer in question excepted). */
  readonly paidOtherwise: boolean;
  /** What its payments bring in its selected asset and chain: pending, late and reversed ones included. */
  readonly partsTotal: Decimal;
}

/** The claim of the transfer's amount on its wallet (one per amount), with its session. */
export interface AmountClaimFact {
  readonly sessionId: string;
  /** When it was taken: at creation or a re-pricing, or when handed over (`held_since`). */
  readonly takenAt: Date;
  readonly heldSince: Date | null;
  readonly releasedAt: Date | null;
  readonly session: SessionPaymentFacts;
}

/** A session sharing the amount (a paid session a reorganisation reopened asks for it too). */
export interface AmountShareFact {
  readonly sessionId: string;
  readonly createdAt: Date;
  readonly releasedAt: Date | null;
}

/** Everything known about one transfer's amount when it is judged. */
export interface TransferSnapshot {
  readonly transfer: ChainTransfer;
  readonly claim: AmountClaimFact | null;
  readonly shares: readonly AmountShareFact[];
  /** The session a row of this transfer was reserved for when scanned (payments.reserved_for). */
  readonly reservedFor: string | null;
  /** A row of the transfer a reorganisation reversed or moved, which the scan revives, and its credit. */
  readonly recorded: { readonly sessionId: string | null; readonly attribution: Attribution | null } | null;
  /** The deposit-mode session whose own address the transfer is to (docs/payment-rules.md, deposit mode). */
  readonly deposit?: DepositAddressFact | null;
}

/** A deposit-mode session's address on the transfer's network: whatever arrives there is that session's. */
export interface DepositAddressFact {
  readonly sessionId: string;
  /** The session was quoted in the transfer's asset (it offers it). */
  readonly offered: boolean;
}

// What decide() makes of a scanned transfer (decide.ts), as storage applies it.

/** Credit the transfer to a session (storage's one statement may find it credited already: it says to whom). */
export interface CreditOutcome {
  readonly kind: 'credit';
  readonly reason: OutcomeReason;
  readonly sessionId: string;
  readonly attribution: Attribution;
  /** The session whose exact payment it is, if any: credited to it, it goes on to `exact_credit`. */
  readonly exactOwner: string | null;
  /** Recorded on the row when no credit sticks (a reversed row credited to nobody, revived). */
  readonly reservedFor: string | null;
}
export interface Reserve {
  readonly kind: 'reserve';
  readonly reason: OutcomeReason;
  readonly sessionId: string;
}
export interface Ignore {
  readonly kind: 'ignore';
  readonly reason: OutcomeReason;
}
export interface Wait {
  readonly kind: 'wait';
  readonly reason: OutcomeReason;
}

export type ScanOutcome = CreditOutcome | Reserve | Ignore;

/** The payment part of storage inside one transaction (TxStore, src/domain/ports.ts). */
export interface PaymentTxStore {
  /** Confirmed money in `asset` on `chainId` split at expires_at, and what is credited but not confirmed. */
  paymentTotals(session: CheckoutSession, asset: AssetTicker, chainId: string): Promise<PaymentTotals>;
  /** The session was created in deposit mode: each of its networks' wallet is an address of its own. */
  receivesAtDepositAddress(sessionId: string): Promise<boolean>;
  /**
   * Per asset, k of the first `baseAmount + k × step` (k < maxSteps) no other open session holds on the wallets; null
   * when all are taken. A claim covers transfers mined from `at` on, less the skew (docs/payment-rules.md, rule 4).
   */
  claimUniqueAmounts(
    sessionId: string,
    requests: readonly AmountClaimRequest[],
    maxSteps: number,
    at: Date,
  ): Promise<Map<AssetTicker, number | null>>;
  /**
   * A released amount still pays the session for a transfer mined before `at` and goes to no other session until
   * purgeReleasedAmountClaims frees it (docs/payment-rules.md, rules 2 and 4).
   */
  releaseAmountClaims(sessionId: string, at: Date, keep?: { asset: AssetTicker; network: string }): Promise<void>;
  /**
   * Releases `previous` and claims `rest.base` raised by whole steps to an amount no other session holds on the wallet
   * (docs/payment-rules.md, rule 4); null when `rest` is null or every amount up to `maxSteps` is held.
   */
  claimRestAmount(
    sessionId: string,
    previous: { asset: AssetTicker; network: string; amount: Decimal } | null,
    rest: { asset: AssetTicker; network: string; wallet: string; base: Decimal; step: Decimal } | null,
    maxSteps: number,
    at: Date,
  ): Promise<Decimal | null>;
  /**
   * For a session a reorganisation reopened: an amount another session holds now is shared from `at`, so a transfer
   * of it pays neither by amount (docs/payment-rules.md, rule 4).
   */
  reclaimExactAmounts(sessionId: string, at: Date): Promise<void>;
  /** What is known of `transfer`'s amount and rows, for decide() (amount-facts.ts). */
  transferSnapshot(transfer: ChainTransfer): Promise<TransferSnapshot>;
  /**
   * Only a session created before the block (less the skew), not locked to another asset or chain, that held the
   * amount alone when the block was mined.
   */
  exactAmountOwner(transfer: ChainTransfer): Promise<string | null>;
  /**
   * The sessions that ask for `transfer`'s amount when it is shared (exactAmountOwner then gives it to
   * none of them): its holder and the sessions sharing it. Only they may bind it. Empty when not shared.
   */
  amountContenders(transfer: ChainTransfer): Promise<string[]>;
  /**
   * The session that asked for the amount before its block, whatever changed since, or the one its scan recorded:
   * only its bind may take the transfer when it pays no session by amount (docs/payment-rules.md, rule 2).
   */
  amountClaimant(transfer: ChainTransfer): Promise<string | null>;
  /**
   * Credits each transfer to its `Credit` unless already credited; answers, per transfer, the session it is credited
   * to now. Every session credited here is marked for settlement.
   */
  creditTransfers(
    transfers: readonly ChainTransfer[],
    credits: ReadonlyArray<Credit | null>,
    at: Date,
  ): Promise<Array<string | null>>;
  /**
   * The required amount is the quote valid at `firstSeenAt`; the other claims are kept `keepOthersMinutes`, as an
   * exact transfer outranks the bound part (docs/decisions/0024-an-asked-amount-stays-its-sessions.md).
   */
  lockAsset(
    sessionId: string,
    asset: AssetTicker,
    network: string,
    chainId: string,
    firstSeenAt: Date,
    at: Date,
    keepOthersMinutes: number,
  ): Promise<Decimal>;
  /** What the session asked in `asset` at `at` (the quote lockAsset would lock at), null if never quoted in it. */
  quoteAt(sessionId: string, asset: AssetTicker, at: Date): Promise<Decimal | null>;
  /** The session each transfer of a transaction is credited to on `chainId` (not reversed), by log index. */
  transferHolders(txHash: string, chainId: string): Promise<ReadonlyMap<number, string>>;
}
