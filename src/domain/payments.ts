import type { AssetTicker } from './assets.js';
import { isTerminal, type CheckoutSession } from './checkout-session.js';
import type { DomainContext } from './context.js';
import { Decimal, formatAmount } from './money.js';
import type { Network } from './networks.js';
import type { TxStore } from './ports.js';
import { applySessionEvent } from './session-events.js';

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
}

export type Attribution = 'bound_tx' | 'payer_wallet' | 'exact_amount';

/** Sessions a transfer could belong to, as found by the data layer for one transfer. */
export interface AttributionCandidates {
  /** The session this transaction hash is bound to, on this chain. */
  readonly boundSessionId: string | null;
  /** Open sessions on this wallet whose bound payer wallet sent the transfer, newest binding first. */
  readonly payerWalletSessionIds: readonly string[];
  /** Terminal sessions still inside their late-payment window with that payer wallet, newest first. */
  readonly latePayerWalletSessionIds: readonly string[];
  /** Open, unbound sessions on this wallet whose quote in this asset is exactly the transferred amount. */
  readonly exactAmountSessionIds: readonly string[];
}

/**
 * DESIGN.md §4 / issue 4: who a transfer pays. The bound tx hash first; then
 * the bound payer wallet of an open session; then an exact amount, only when
 * exactly one open session fits. Open sessions come before closed ones: only
 * when no open session fits the amount at all does a transfer from the payer
 * wallet of a closed session (inside its late-payment window) count as that
 * session's late payment. Otherwise nobody: the payment is kept unattributed
 * for an operator (`kassa payments unattributed`).
 */
export function attributeTransfer(candidates: AttributionCandidates): { sessionId: string; attribution: Attribution } | null {
  if (candidates.boundSessionId) return { sessionId: candidates.boundSessionId, attribution: 'bound_tx' };
  const payer = candidates.payerWalletSessionIds[0];
  if (payer) return { sessionId: payer, attribution: 'payer_wallet' };
  if (candidates.exactAmountSessionIds.length === 1) return { sessionId: candidates.exactAmountSessionIds[0]!, attribution: 'exact_amount' };
  const late = candidates.latePayerWalletSessionIds[0];
  if (late && candidates.exactAmountSessionIds.length === 0) return { sessionId: late, attribution: 'payer_wallet' };
  return null;
}

/**
 * Brings a session's status in line with its confirmed payments, inside the
 * transaction that holds its row lock: the status machine decides, and the
 * history row and events are written with it.
 */
export async function settleSessionPayments(ctx: DomainContext, tx: TxStore, session: CheckoutSession, now: Date): Promise<CheckoutSession> {
  const received = session.cryptoCurrency && session.chainId ? await tx.confirmedReceived(session.id, session.cryptoCurrency, session.chainId) : new Decimal(0);
  if (received.equals(session.amountReceived) || !session.totalAmountCrypto) {
    await tx.updateSession(session.id, { paymentsChangedAt: null, updatedAt: session.updatedAt });
    return session;
  }
  // Stored first, so the events below carry the new total.
  await tx.updateSession(session.id, { amountReceived: received, paymentsChangedAt: null, updatedAt: now });
  const counted: CheckoutSession = { ...session, amountReceived: received, updatedAt: now };
  const amounts = {
    received,
    required: session.totalAmountCrypto,
    tolerancePercent: session.paymentPolicy.underpaymentTolerancePercent,
  };
  const event = received.greaterThan(session.amountReceived)
    ? ({ kind: 'payments_confirmed', ...amounts } as const)
    : ({ kind: 'payments_reversed', ...amounts } as const);
  const { session: settled } = await applySessionEvent(ctx, tx, counted, event, now);
  return settled;
}

/** What the chain says about a bound transaction. */
export type BoundTxEvidence =
  /** Mined: its receipt, the Transfer logs in it, and the native value it moved. */
  | {
      readonly kind: 'mined';
      readonly reverted: boolean;
      readonly blockNumber: bigint;
      readonly confirmations: number;
      readonly transfers: ReadonlyArray<{ tokenAddress: string; from: string; to: string; baseUnits: bigint }>;
      readonly nativeTo: string | null;
      readonly nativeValue: bigint;
      /** Who signed the transaction (lower-case); null when unknown. */
      readonly sender?: string | null;
    }
  /** Known to the node but not mined yet. */
  | { readonly kind: 'pending' }
  /** Unknown to the bound chain; `foundOn` names another enabled network that has it. */
  | { readonly kind: 'missing'; readonly foundOn: { slug: string; chainId: number } | null };

export type BoundTxVerdict = { readonly kind: 'valid' } | { readonly kind: 'wait' } | { readonly kind: 'failed'; readonly reason: string };

/**
 * DESIGN.md §4 "→ failed": judges a bound transaction by its receipt and its
 * Transfer logs (so payments through contracts count), with a precise reason
 * for every rejection.
 */
export function judgeBoundTransaction(
  session: CheckoutSession,
  network: Network,
  evidence: BoundTxEvidence,
  now: Date,
  droppedAfterMinutes: number,
): BoundTxVerdict {
  const hash = session.boundTxHash!;
  if (evidence.kind === 'pending') return { kind: 'wait' };
  if (evidence.kind === 'missing') {
    if (evidence.foundOn) {
      return {
        kind: 'failed',
        reason: `wrong chain: transaction ${hash} is on ${evidence.foundOn.slug} (chain id ${evidence.foundOn.chainId}), not on ${network.slug} (chain id ${network.chainId}) it was bound with`,
      };
    }
    const boundFor = now.getTime() - (session.boundAt ?? now).getTime();
    if (boundFor < droppedAfterMinutes * 60_000) return { kind: 'wait' };
    return { kind: 'failed', reason: `dropped: transaction ${hash} was not found on ${network.slug} within ${droppedAfterMinutes} minute${droppedAfterMinutes === 1 ? '' : 's'} of binding` };
  }
  if (evidence.confirmations < Math.max(1, network.confirmations)) return { kind: 'wait' };
  if (evidence.reverted) return { kind: 'failed', reason: `reverted: transaction ${hash} reverted in block ${evidence.blockNumber} on ${network.slug}` };

  const ticker = session.cryptoCurrency!;
  const wallet = session.networks.find((n) => n.chainId === String(network.chainId))?.walletAddress.toLowerCase() ?? '';
  const token = network.tokens.find((t) => t.ticker === ticker)?.address.toLowerCase() ?? null;
  const nameOf = (address: string) => network.tokens.find((t) => t.address.toLowerCase() === address)?.ticker ?? `token ${address}`;
  const native = network.nativeAsset;

  // Zero-value transfers (address-poisoning spam) prove nothing and are ignored throughout.
  const transfers = evidence.transfers.filter((t) => t.baseUnits > 0n);
  const pays =
    (native === ticker && evidence.nativeTo === wallet && evidence.nativeValue > 0n) ||
    (token !== null && transfers.some((t) => t.tokenAddress === token && t.to === wallet));
  if (pays) {
    // A payer wallet named at bind must be the one that paid: otherwise anyone could bind a
    // stranger's transaction with their own session and claim that wallet's later transfers.
    const payer = session.payerWalletAddress;
    const paidBy = evidence.sender === payer || transfers.some((t) => t.to === wallet && t.from === payer);
    if (payer && evidence.sender !== undefined && !paidBy) {
      return {
        kind: 'failed',
        reason: `wrong sender: transaction ${hash} was sent by ${evidence.sender ?? 'an unknown account'}, not by the payer wallet ${payer} named when it was bound`,
      };
    }
    return { kind: 'valid' };
  }

  const toWallet = transfers.find((t) => t.to === wallet);
  if (toWallet) return { kind: 'failed', reason: `wrong asset: transaction ${hash} transfers ${nameOf(toWallet.tokenAddress)} to the session wallet; the session expects ${ticker}` };
  if (native && native !== ticker && evidence.nativeTo === wallet && evidence.nativeValue > 0n) {
    return { kind: 'failed', reason: `wrong asset: transaction ${hash} sends ${native} to the session wallet; the session expects ${ticker}` };
  }
  const elsewhere = token ? transfers.find((t) => t.tokenAddress === token) : undefined;
  if (elsewhere) return { kind: 'failed', reason: `wrong recipient: transaction ${hash} transfers ${ticker} to ${elsewhere.to}, not to the session wallet ${wallet}` };
  if (native === ticker && evidence.nativeValue > 0n && evidence.nativeTo) {
    return { kind: 'failed', reason: `wrong recipient: transaction ${hash} sends ${ticker} to ${evidence.nativeTo}, not to the session wallet ${wallet}` };
  }
  return { kind: 'failed', reason: `no payment: transaction ${hash} does not transfer ${ticker} to the session wallet ${wallet}` };
}

/** Fails an open session whose bound transaction was judged invalid. */
export async function failBoundTransaction(ctx: DomainContext, tx: TxStore, session: CheckoutSession, reason: string, now: Date): Promise<void> {
  if (isTerminal(session.status)) return;
  await applySessionEvent(ctx, tx, session, { kind: 'bound_tx_failed', reason }, now);
}

/**
 * What the payer still has to send in the selected asset: required minus the
 * confirmed total, rounded up to 8 digits, never below 0; null until an asset
 * is selected.
 */
export function amountDue(session: Pick<CheckoutSession, 'totalAmountCrypto' | 'amountReceived'>): Decimal | null {
  if (!session.totalAmountCrypto) return null;
  const due = session.totalAmountCrypto.minus(session.amountReceived);
  return due.greaterThan(0) ? due.toDecimalPlaces(8, Decimal.ROUND_CEIL) : new Decimal(0);
}

/** A line for operators: what a payment row says, amounts on the wire format. */
export function describeAmount(amount: Decimal): string {
  return formatAmount(amount.toDecimalPlaces(8, Decimal.ROUND_DOWN));
}
