// The pure checks of a bind (docs/api/rest.md#bind-rules): its request, against the session, against a transaction
// already bound; bind-transaction.ts runs them under the session's lock.
import type { BoundTransaction } from './chain-ports.js';
import type { CheckoutSession } from '../sessions/checkout-session.js';
import type { DomainContext } from '../context.js';
import { conflict, DomainError, invalid } from '../shared/errors.js';
import { assetsOn } from '../shared/networks.js';
import { checkSessionId } from '../sessions/get-checkout-session.js';
import { isUuid } from '../shared/uuid.js';
import { checkBindInput, type BindTransactionInput, type CheckedBind } from './bind-transaction.schema.js';

/**
 * Whether `bound` was rejected only for hints (sender, asset) that `bind` names otherwise on the same chain, or as too
 * small for an asset selected since: the transaction itself may still pay the session.
 */
export function rejectedForItsHints(bound: BoundTransaction, bind: CheckedBind, session: CheckoutSession): boolean {
  if (bound.state !== 'rejected' || bind.chainId !== bound.chainId) return false;
  switch (bound.reasonCode) {
    case 'wrong_sender':
      return bind.payerWalletAddress !== bound.payerWalletAddress;
    // Too small to select the asset when judged: once a larger part has selected it, the same transfer may pay a part.
    case 'bind_too_small':
      return session.cryptoCurrency === bound.cryptoCurrency;
    case 'wrong_asset':
      return (bind.ticker ?? session.cryptoCurrency ?? bound.cryptoCurrency) !== bound.cryptoCurrency;
    default:
      return false;
  }
}

/**
 * Whether `bound` names another chain than `bind` and was never seen there, while the chain `bind` names has the
 * transaction (`onNamedChain`): `bound` named the wrong chain, and can never be verified.
 */
export function boundOnWrongChain(bound: BoundTransaction, bind: CheckedBind, onNamedChain: boolean): boolean {
  return onNamedChain && bound.chainId !== bind.chainId && bound.seenOnChainAt === null && bound.state !== 'verified';
}

export function replayConflict(bound: BoundTransaction, bind: CheckedBind): DomainError | null {
  if (bind.ticker && bind.ticker !== bound.cryptoCurrency) {
    return conflict(
      `crypto_currency ${bind.ticker} differs from ${bound.cryptoCurrency}, the asset this transaction was bound for`,
      'currency_mismatch',
    );
  }
  if (bind.chainId !== bound.chainId) {
    return conflict(
      `chain_id ${bind.chainId} differs from ${bound.chainId}, the chain this transaction was bound on`,
      'chain_mismatch',
    );
  }
  if (bind.payerWalletAddress && bound.payerWalletAddress && bind.payerWalletAddress !== bound.payerWalletAddress) {
    return conflict('payer_wallet_address differs from the one bound with this transaction', 'payer_mismatch');
  }
  if (bound.state === 'rejected')
    return conflict(
      `Transaction ${bound.txHash} was rejected for this checkout session: ${bound.reason}`,
      bound.reasonCode ?? 'conflict',
    );
  return null;
}

export function checkAgainstSession(
  ctx: DomainContext,
  session: CheckoutSession,
  bind: CheckedBind,
): DomainError | null {
  if (bind.ticker && session.cryptoCurrency && bind.ticker !== session.cryptoCurrency) {
    return conflict(
      `crypto_currency ${bind.ticker} differs from ${session.cryptoCurrency}, already locked for this session`,
      'currency_mismatch',
    );
  }
  if (session.chainId && bind.chainId !== session.chainId) {
    return conflict(
      `chain_id ${bind.chainId} differs from ${session.chainId}, the chain this session is already paid on`,
      'chain_mismatch',
    );
  }
  const ticker = bind.ticker ?? session.cryptoCurrency;
  if (!ticker) return invalid('crypto_currency is required: this session has no crypto currency selected yet');
  if (!session.quotes.some((quote) => quote.ticker === ticker)) {
    return invalid(
      `crypto_currency ${ticker} is not offered by this session (offered: ` +
        `${session.quotes.map((q) => q.ticker).join(', ')})`,
    );
  }
  const sessionNetwork = session.networks.find((network) => network.chainId === bind.chainId);
  if (!sessionNetwork) {
    return invalid(
      `chain_id ${bind.chainId} is not among this session's networks (${session.networks
        .map((n) => `${n.network}: ` + `${n.chainId}`)
        .join(', ')})`,
    );
  }
  const network = ctx.networks.find((n) => n.slug === sessionNetwork.network);
  if (!network || !assetsOn(network).includes(ticker)) {
    return invalid(`${ticker} is not available on chain ${bind.chainId} (${sessionNetwork.network})`);
  }
  return null;
}

/** The session id and the bind, every problem of both at once, the id's first (docs/api/rest.md#errors). */
export function checkBindRequest(id: string, input: BindTransactionInput): { sessionId: string; bind: CheckedBind } {
  const idProblems = isUuid(id) ? [] : ['id must be a UUID'];
  let bind: CheckedBind;
  try {
    bind = checkBindInput(input);
  } catch (error) {
    if (idProblems.length > 0 && error instanceof DomainError && error.code === 'invalid')
      throw invalid([...idProblems, ...error.messages]);
    throw error;
  }
  return { sessionId: checkSessionId(id), bind };
}
