import type { CheckoutSession } from '../sessions/checkout-session.js';
import { fromBaseUnits } from '../shared/money.js';
import { NATIVE_COIN_DECIMALS, type Network } from '../shared/networks.js';
import type { BoundTransaction, BoundTxEvidence } from './chain-ports.js';
import type { ChainTransfer } from './payment-ports.js';
import { REJECTION_WORDS, type RejectionCode } from '../shared/reason-codes.js';

export type BoundTxVerdict =
  /** Nothing to decide yet; `onChain` when the chain knows the transaction. */
  | { readonly kind: 'wait'; readonly onChain: boolean }
  | { readonly kind: 'failed'; readonly code: RejectionCode; readonly reason: string }
  /** It pays the session: these are its transfers to the session's wallet in the bound asset. */
  | { readonly kind: 'valid'; readonly transfers: readonly ChainTransfer[] };

/**
 * The session existed when the block was mined, to the second and with no clock skew: a skew would let a session
 * opened just after a payer's transfer take it by binding its hash (docs/payment-rules.md, rule 1).
 */
export function minedWhileSessionExisted(blockTime: Date, createdAt: Date): boolean {
  return blockTime.getTime() >= Math.floor(createdAt.getTime() / 1000) * 1000;
}

/** The bound transaction as judging reads it. */
type Judged = Pick<BoundTransaction, 'txHash' | 'chainId' | 'cryptoCurrency' | 'payerWalletAddress' | 'createdAt'>;
type Mined = Extract<BoundTxEvidence, { kind: 'mined' }>;
const failed = (code: RejectionCode, text: string): BoundTxVerdict => ({
  kind: 'failed',
  code,
  reason: `${REJECTION_WORDS[code]} transaction ${text}`,
});

/**
 * Judged by its own receipt and Transfer logs, so payments sent through contracts count (docs/payment-rules.md,
 * rules 1 and 3); every rejection carries a precise reason.
 */
export function judgeBoundTransaction(
  session: CheckoutSession,
  bound: Judged,
  network: Network,
  evidence: BoundTxEvidence,
  now: Date,
  droppedAfterMinutes: number,
): BoundTxVerdict {
  if (evidence.kind === 'pending') return judgePending(session, bound, network, now, droppedAfterMinutes);
  if (evidence.kind === 'missing') {
    const hash = bound.txHash;
    if (evidence.foundOn)
      return failed(
        'wrong_chain',
        `${hash} is on ${evidence.foundOn.slug} (chain id ${evidence.foundOn.chainId}), not on ${network.slug} ` +
          `(chain id ${network.chainId}) it was bound with`,
      );
    if (now.getTime() - bound.createdAt.getTime() < droppedAfterMinutes * 60_000)
      return { kind: 'wait', onChain: false };
    const minutes = `${droppedAfterMinutes} minute${droppedAfterMinutes === 1 ? '' : 's'}`;
    return failed('dropped', `${hash} was not found on ${network.slug} within ${minutes} of binding`);
  }
  return judgeMined(session, bound, network, evidence);
}

/**
 * A transaction the node keeps pending (a nonce gap, a fee too low) may not hold a session, or its quote, for
 * ever: it waits the grace after binding, or, when expires_at falls inside that time, the grace after expires_at.
 */
function judgePending(
  session: CheckoutSession,
  bound: Judged,
  network: Network,
  now: Date,
  droppedAfterMinutes: number,
): BoundTxVerdict {
  const grace = droppedAfterMinutes * 60_000;
  const waitedUntil =
    bound.createdAt.getTime() + grace > session.expiresAt.getTime()
      ? session.expiresAt.getTime() + grace
      : bound.createdAt.getTime() + grace;
  if (now.getTime() < waitedUntil) return { kind: 'wait', onChain: true };
  const since = Math.round((now.getTime() - bound.createdAt.getTime()) / 60_000);
  return failed(
    'not_mined',
    `${bound.txHash} was still pending on ${network.slug} ${since} minute${since === 1 ? '' : 's'} after it was bound`,
  );
}

/** A mined transaction: reverted, too old, against what the session selected since, else by what it transfers. */
function judgeMined(session: CheckoutSession, bound: Judged, network: Network, evidence: Mined): BoundTxVerdict {
  const hash = bound.txHash;
  if (evidence.reverted)
    return failed('reverted', `${hash} reverted in block ${evidence.blockNumber} on ${network.slug}`);
  if (!minedWhileSessionExisted(evidence.blockTime, session.createdAt))
    return failed(
      'tx_mined_before_session',
      `${hash} is in block ${evidence.blockNumber} of ${evidence.blockTime.toISOString()}, the session was created ` +
        `at ${session.createdAt.toISOString()}`,
    );
  const ticker = bound.cryptoCurrency;
  if (session.cryptoCurrency && session.cryptoCurrency !== ticker)
    return {
      kind: 'failed',
      code: 'wrong_asset',
      reason:
        `${REJECTION_WORDS.wrong_asset} the session has selected ${session.cryptoCurrency} since transaction ` +
        `${hash} was bound for ${ticker}`,
    };
  if (session.chainId && session.chainId !== bound.chainId)
    return {
      kind: 'failed',
      code: 'wrong_chain',
      reason:
        `${REJECTION_WORDS.wrong_chain} the session is paid on chain ${session.chainId} since transaction ` +
        `${hash} was bound on chain ${bound.chainId}`,
    };
  const wallet = session.networks.find((n) => n.network === network.slug)?.walletAddress.toLowerCase() ?? '';
  const paying = payingTransfers(bound, network, evidence, wallet);
  if (paying.length === 0) return judgeNotPaying(bound, network, evidence, wallet);
  // A payer wallet named at bind must be the one that paid: otherwise anyone could bind a
  // stranger's transaction with their own session and claim that wallet's later transfers.
  const payer = bound.payerWalletAddress;
  const paidBy = evidence.sender === payer || paying.some((t) => t.from === payer);
  if (payer && !paidBy)
    return failed(
      'wrong_sender',
      `${hash} was sent by ${evidence.sender ?? 'an unknown account'}, not by the payer wallet ${payer} named when ` +
        'it was bound',
    );
  return { kind: 'valid', transfers: paying };
}

/** The transaction's transfers of the bound asset to the session's wallet (zero-value spam ignored). */
function payingTransfers(bound: Judged, network: Network, evidence: Mined, wallet: string): ChainTransfer[] {
  const ticker = bound.cryptoCurrency;
  const token = network.tokens.find((t) => t.ticker === ticker);
  const tokenAddress = token?.address.toLowerCase() ?? null;
  const at = {
    network: network.slug,
    chainId: bound.chainId,
    txHash: bound.txHash,
    blockNumber: evidence.blockNumber,
    blockHash: evidence.blockHash,
    blockTime: evidence.blockTime,
  };
  const paying: ChainTransfer[] = [];
  if (network.nativeAsset === ticker && evidence.nativeTo === wallet && evidence.nativeValue > 0n && evidence.sender) {
    const units = evidence.nativeValue;
    const amount = fromBaseUnits(units, NATIVE_COIN_DECIMALS);
    const native = { logIndex: -1, from: evidence.sender, to: wallet, asset: ticker, tokenAddress: null };
    paying.push({ ...at, ...native, baseUnits: units, amount });
  }
  if (!token || !tokenAddress) return paying;
  // Zero-value transfers (address-poisoning spam) prove nothing and are ignored throughout.
  for (const t of evidence.transfers.filter((t) => t.baseUnits > 0n && t.tokenAddress === tokenAddress)) {
    if (t.to !== wallet) continue;
    const amount = fromBaseUnits(t.baseUnits, token.decimals);
    paying.push({
      ...at,
      logIndex: t.logIndex,
      from: t.from,
      to: wallet,
      asset: ticker,
      tokenAddress,
      baseUnits: t.baseUnits,
      amount,
    });
  }
  return paying;
}

/** Why a mined transaction that moves none of the bound asset to the wallet cannot pay the session. */
function judgeNotPaying(bound: Judged, network: Network, evidence: Mined, wallet: string): BoundTxVerdict {
  const { txHash: hash, cryptoCurrency: ticker } = bound;
  const transfers = evidence.transfers.filter((t) => t.baseUnits > 0n);
  const tokenAddress = network.tokens.find((t) => t.ticker === ticker)?.address.toLowerCase() ?? null;
  const nameOf = (address: string) =>
    network.tokens.find((t) => t.address.toLowerCase() === address)?.ticker ?? `token ${address}`;
  const native = network.nativeAsset;
  const toWallet = transfers.find((t) => t.to === wallet);
  if (toWallet)
    return failed(
      'wrong_asset',
      `${hash} transfers ${nameOf(toWallet.tokenAddress)} to the session wallet; the session expects ${ticker}`,
    );
  if (native && native !== ticker && evidence.nativeTo === wallet && evidence.nativeValue > 0n)
    return failed('wrong_asset', `${hash} sends ${native} to the session wallet; the session expects ${ticker}`);
  const elsewhere = tokenAddress ? transfers.find((t) => t.tokenAddress === tokenAddress) : undefined;
  if (elsewhere)
    return failed(
      'wrong_recipient',
      `${hash} transfers ${ticker} to ${elsewhere.to}, not to the session wallet ${wallet}`,
    );
  if (native === ticker && evidence.nativeValue > 0n && evidence.nativeTo)
    return failed(
      'wrong_recipient',
      `${hash} sends ${ticker} to ${evidence.nativeTo}, not to the session wallet ${wallet}`,
    );
  return failed('no_payment', `${hash} does not transfer ${ticker} to the session wallet ${wallet}`);
}
