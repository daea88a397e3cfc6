import { ASSET_TICKERS, isAssetTicker, type AssetTicker } from './assets.js';
import { isTerminal, type CheckoutSession } from './checkout-session.js';
import type { DomainContext } from './context.js';
import { conflict, DomainError, invalid, notFound } from './errors.js';
import { formatAmount } from './money.js';
import { assetsOn, normaliseChainId } from './networks.js';
import { checkSessionId } from './get-checkout-session.js';
import { applySessionEvent, emitEvent } from './session-events.js';
import type { SessionPatch } from './ports.js';

/** The bind request as received (spec §2.5); every field is checked here, for REST and GraphQL alike. */
export interface BindTransactionInput {
  readonly tx_hash?: unknown;
  readonly chain_id?: unknown;
  readonly crypto_currency?: unknown;
  readonly payer_wallet_address?: unknown;
}

/** Spec §2.6. */
export interface BindResult {
  readonly session: CheckoutSession;
  readonly idempotent: boolean;
}

const TX_HASH_PATTERN = /^0x[a-fA-F0-9]{64}$/;
const ADDRESS_PATTERN = /^0x[a-fA-F0-9]{40}$/;

interface CheckedBind {
  txHash: string;
  chainId: string;
  ticker: AssetTicker | null;
  payerWalletAddress: string | null;
}

/**
 * Binds a payer's broadcast transaction to a session (spec §4.2) and locks the
 * asset if none was selected. Rebinding the same hash is idempotent.
 */
export async function bindTransaction(ctx: DomainContext, id: string, input: BindTransactionInput): Promise<BindResult> {
  const sessionId = checkSessionId(id);
  const bind = checkBindInput(input);
  const now = ctx.clock();

  // Expiry found here must be committed even though the bind is refused, so the
  // transaction returns the refusal and it is thrown after commit.
  const outcome = await ctx.store.transaction(async (tx): Promise<BindResult | DomainError> => {
    const locked = await tx.lockSession(sessionId);
    if (!locked) return notFound(`Checkout session ${sessionId} not found`);
    const { session } = await applySessionEvent(ctx, tx, locked, { kind: 'clock' }, now);
    if (session.boundTxHash === bind.txHash) {
      // A replay is idempotent only when it says the same thing as the first bind.
      return replayConflict(session, bind) ?? { session, idempotent: true };
    }
    if (isTerminal(session.status)) return conflict(`Checkout session is ${session.status}; it no longer accepts a transaction`);
    if (session.boundTxHash) return conflict('Checkout session is already bound to another transaction');
    if (await tx.findSessionIdByTxHash(bind.txHash)) return conflict(`Transaction ${bind.txHash} is already bound to another checkout session`);
    const credited = await tx.sessionCreditedWith(bind.txHash, bind.chainId);
    if (credited && credited !== session.id) return conflict(`Transaction ${bind.txHash} already paid another checkout session`);

    const refusal = checkAgainstSession(ctx, session, bind);
    if (refusal) return refusal;
    const ticker = (bind.ticker ?? session.cryptoCurrency)!;
    const quote = session.quotes.find((q) => q.ticker === ticker)!;

    const binding = {
      cryptoCurrency: ticker,
      totalAmountCrypto: quote.amount,
      boundTxHash: bind.txHash,
      boundAt: now,
      payerWalletAddress: bind.payerWalletAddress,
      chainId: bind.chainId,
      updatedAt: now,
    } satisfies SessionPatch & Partial<CheckoutSession>;
    await tx.updateSession(session.id, binding);
    // The watcher may have seen the transfer before the payer bound it.
    await tx.attachPaymentsOfTransaction(session.id, bind.txHash, bind.chainId, now);
    const bound: CheckoutSession = { ...session, ...binding };
    await emitEvent(ctx, tx, bound, 'checkout_session.tx_bound', now);
    return { session: bound, idempotent: false };
  });
  if (outcome instanceof DomainError) throw outcome;
  return outcome;
}

/** The spec §2.6 body. */
export function toBindResponse(result: BindResult) {
  const { session } = result;
  return {
    session_id: session.id,
    bound_tx_hash: session.boundTxHash!,
    crypto_currency: session.cryptoCurrency!,
    total_amount_crypto: formatAmount(session.totalAmountCrypto!),
    status: session.status,
    idempotent: result.idempotent,
  };
}

/** Every problem with the bind fields, named by field (empty when they are well-formed). */
export function bindInputProblems(input: BindTransactionInput): string[] {
  try {
    checkBindInput(input);
    return [];
  } catch (error) {
    if (error instanceof DomainError) return [...error.messages];
    throw error;
  }
}

function checkBindInput(input: BindTransactionInput): CheckedBind {
  const problems: string[] = [];
  const text = (field: keyof BindTransactionInput, required: boolean): string | null => {
    const value = input[field];
    if (value === undefined || value === null) {
      if (required) problems.push(`${field} is required`);
      return null;
    }
    if (typeof value !== 'string') {
      problems.push(`${field} must be a string`);
      return null;
    }
    return value;
  };

  const txHash = text('tx_hash', true);
  if (txHash !== null && !TX_HASH_PATTERN.test(txHash)) problems.push('tx_hash must match ^0x[a-fA-F0-9]{64}$ (0x and 64 hex characters)');
  const chainText = text('chain_id', true);
  const chainId = chainText === null ? null : normaliseChainId(chainText);
  if (chainText !== null && chainId === null) problems.push('chain_id must be an EIP-155 chain id, decimal ("56") or hex ("0x38")');
  const ticker = text('crypto_currency', false);
  if (ticker !== null && !isAssetTicker(ticker)) problems.push(`crypto_currency must be one of the following values: ${ASSET_TICKERS.join(', ')}`);
  const payer = text('payer_wallet_address', false);
  if (payer !== null && !ADDRESS_PATTERN.test(payer)) problems.push('payer_wallet_address must match ^0x[a-fA-F0-9]{40}$ (0x and 40 hex characters)');

  if (problems.length > 0) throw invalid(problems);
  return {
    txHash: txHash!.toLowerCase(),
    chainId: chainId!,
    ticker: ticker as AssetTicker | null,
    payerWalletAddress: payer?.toLowerCase() ?? null,
  };
}

function replayConflict(session: CheckoutSession, bind: CheckedBind): DomainError | null {
  if (bind.ticker && bind.ticker !== session.cryptoCurrency) {
    return conflict(`crypto_currency ${bind.ticker} differs from ${session.cryptoCurrency}, already locked for this session`);
  }
  if (bind.chainId !== session.chainId) {
    return conflict(`chain_id ${bind.chainId} differs from ${session.chainId}, the chain this transaction was bound on`);
  }
  if (bind.payerWalletAddress && session.payerWalletAddress && bind.payerWalletAddress !== session.payerWalletAddress) {
    return conflict('payer_wallet_address differs from the one bound with this transaction');
  }
  return null;
}

function checkAgainstSession(ctx: DomainContext, session: CheckoutSession, bind: CheckedBind): DomainError | null {
  if (bind.ticker && session.cryptoCurrency && bind.ticker !== session.cryptoCurrency) {
    return conflict(`crypto_currency ${bind.ticker} differs from ${session.cryptoCurrency}, already locked for this session`);
  }
  const ticker = bind.ticker ?? session.cryptoCurrency;
  if (!ticker) return invalid('crypto_currency is required: this session has no crypto currency selected yet');
  if (!session.quotes.some((quote) => quote.ticker === ticker)) {
    return invalid(`crypto_currency ${ticker} is not offered by this session (offered: ${session.quotes.map((q) => q.ticker).join(', ')})`);
  }
  const sessionNetwork = session.networks.find((network) => network.chainId === bind.chainId);
  if (!sessionNetwork) {
    return invalid(`chain_id ${bind.chainId} is not among this session's networks (${session.networks.map((n) => `${n.network}: ${n.chainId}`).join(', ')})`);
  }
  const network = ctx.networks.find((n) => n.slug === sessionNetwork.network);
  if (!network || !assetsOn(network).includes(ticker)) {
    return invalid(`${ticker} is not available on chain ${bind.chainId} (${sessionNetwork.network})`);
  }
  return null;
}
