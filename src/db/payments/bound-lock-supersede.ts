import { Prisma } from '../../generated/prisma/client.js';
import type { ChainTransfer } from '../../domain/payments/payment-ports.js';
import { REJECTION_WORDS } from '../../domain/shared/reason-codes.js';
import { releaseAmountClaims } from './amount-claims.js';

// docs/decisions/0024: a payer's exact transfer outranks bound parts of another asset that do not pay the session
// (decide() says so; confirmExactCredit in payment-credits.ts applies it here).

type Client = Prisma.TransactionClient;

/**
 * The locked session is paid in the exact payment's asset instead of the bound parts': totals recounted, rest and bound
 * transaction cleared, the parts reserved for it (binds rejected `superseded`), its other claims released.
 */
export async function supersedeBoundLock(
  tx: Client,
  sessionId: string,
  transfer: ChainTransfer,
  at: Date,
): Promise<void> {
  const reason =
    `${REJECTION_WORDS.superseded} transaction ${transfer.txHash} pays this checkout session's exact amount of ` +
    `${transfer.amount.toFixed()} ${transfer.asset}, which outranks this part in another asset; this part no longer ` +
    'counts for the session and is left to the merchant to return';
  const parts = await tx.$queryRaw<Array<{ tx_hash: string; chain_id: string }>>`
    UPDATE payments p SET session_id = NULL, attribution = NULL, late = false, reserved_for = ${sessionId}::uuid,
           updated_at = ${at}
     WHERE p.session_id = ${sessionId}::uuid AND p.attribution = 'bound_tx'
       AND NOT (p.chain_id = ${transfer.chainId} AND p.tx_hash = ${transfer.txHash}
                AND p.log_index = ${transfer.logIndex} AND p.live IS TRUE)
    RETURNING p.tx_hash, p.chain_id`;
  const hashes = parts.map((part) => `${part.chain_id}:${part.tx_hash}`);
  await tx.$executeRaw`
    UPDATE checkout_sessions s
       SET payer_wallet_address = CASE WHEN EXISTS (
             SELECT 1 FROM checkout_session_transactions t
              WHERE t.session_id = s.id AND t.state = 'verified' AND t.payer_wallet_address = s.payer_wallet_address
                AND (t.chain_id || ':' || t.tx_hash) = ANY(${hashes})) THEN NULL ELSE s.payer_wallet_address END,
           crypto_currency = ${transfer.asset}, chain_id = ${transfer.chainId},
           total_amount_crypto = ${transfer.amount.toFixed()}::numeric,
           amount_received = 0, amount_received_late = 0, amount_pending = 0, rest_amount = NULL,
           bound_tx_hash = NULL, bound_at = NULL, bound_tx_checked_at = NULL,
           payments_changed_at = ${at}, updated_at = ${at}
     WHERE s.id = ${sessionId}::uuid`;
  await tx.$executeRaw`
    UPDATE checkout_session_transactions
       SET state = 'rejected', reason_code = 'superseded', reason = ${reason}, checked_at = ${at}, updated_at = ${at}
     WHERE session_id = ${sessionId}::uuid AND state = 'verified' AND (chain_id || ':' || tx_hash) = ANY(${hashes})`;
  // The amount it is paid with is held again (the bound part's lock had set it to lapse, maybe before this scan):
  // freed, another session could be given it while this transfer may still be reversed and come back.
  await tx.$executeRaw`
    UPDATE payment_amount_claims SET released_at = NULL
     WHERE session_id = ${sessionId}::uuid AND asset = ${transfer.asset} AND network = ${transfer.network}
       AND amount = ${transfer.amount.toFixed()}::numeric AND released_at IS NOT NULL`;
  await releaseAmountClaims(tx, sessionId, at, { asset: transfer.asset, network: transfer.network });
}
