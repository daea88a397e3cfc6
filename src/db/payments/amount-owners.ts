import { Prisma } from '../../generated/prisma/client.js';
import { OPEN_STATUSES } from '../../domain/sessions/checkout-session.js';
import type { ChainTransfer } from '../../domain/payments/payment-ports.js';
import { PAYMENT_CLOCK_SKEW_MS } from '../../domain/payments/payments.js';
import { sameKey } from './amount-claims.js';

// Whose a transfer is by its amount (docs/payment-rules.md, rules 2 and 4), read from the claims and shares that
// src/db/amount-claims.ts hands out, releases and frees: the session it pays, the sessions that may bind it, and the
// session it is reserved for.

type Client = Prisma.TransactionClient;
const OPEN: readonly string[] = OPEN_STATUSES;

/**
 * A share (`h`) of the transfer's amount that counts for it: written before the block was mined (less the
 * clock skew: a transfer mined before the reorganisation that reopened its session was meant for the holder)
 * and standing then (released after, or not yet).
 */
function shareCountsSql(transfer: ChainTransfer): Prisma.Sql {
  const writtenBy = new Date(transfer.blockTime.getTime() + PAYMENT_CLOCK_SKEW_MS);
  return Prisma.sql`h.created_at <= ${writtenBy} AND (h.released_at IS NULL OR h.released_at > ${transfer.blockTime})`;
}

/**
 * A claim (`alias`) that covers a transfer mined at its block time: held then, that is taken by then (less the clock
 * skew, as a session must be created by then: a claim a re-pricing took after the block is not what its payer was
 * asked for; one handed over counts from `held_since`) and released after, or not yet.
 */
function claimCoversSql(transfer: ChainTransfer, alias = 'c'): Prisma.Sql {
  const c = Prisma.raw(alias);
  const takenBy = new Date(transfer.blockTime.getTime() + PAYMENT_CLOCK_SKEW_MS);
  return Prisma.sql`(${c}.released_at IS NULL OR ${c}.released_at > ${transfer.blockTime})
       AND (${c}.held_since IS NULL OR ${c}.held_since <= ${transfer.blockTime})
       AND COALESCE(${c}.held_since, ${c}.created_at) <= ${takenBy}`;
}

/**
 * The open session whose claimed amount this transfer is, exactly, and that it may pay:
 * created before the block (less the clock skew), asset and chain not locked to others (but by bound parts that do
 * not pay it: supersedableSql),
 * and the claim held when the block was mined (a claim released since still counts), by it
 * alone: no share of it counting (reclaimExactAmounts), else the transfer is no one's by amount.
 */
export async function exactAmountOwner(tx: Client, transfer: ChainTransfer): Promise<string | null> {
  const createdBy = new Date(transfer.blockTime.getTime() + PAYMENT_CLOCK_SKEW_MS);
  const rows = await tx.$queryRaw<Array<{ session_id: string }>>`
    SELECT c.session_id FROM payment_amount_claims c
      JOIN checkout_sessions s ON s.id = c.session_id
     WHERE c.network = ${transfer.network} AND c.wallet_address = ${transfer.to} AND c.asset = ${transfer.asset}
       AND c.amount = ${transfer.amount.toFixed()}::numeric
       AND ${claimCoversSql(transfer)}
       AND s.status::text = ANY(${OPEN}) AND s.created_at <= ${createdBy}
       AND ((s.crypto_currency IS NULL OR s.crypto_currency = ${transfer.asset})
             AND (s.chain_id IS NULL OR s.chain_id = ${transfer.chainId})
            OR ${supersedableSql(transfer)})
       AND NOT EXISTS (SELECT 1 FROM payment_amount_shares h WHERE ${sameKey('h', 'c')} AND ${shareCountsSql(transfer)})
     LIMIT 1`;
  return rows[0]?.session_id ?? null;
}

/**
 * The SQL condition "session `s` is locked to another asset or chain than `transfer`'s by bound parts alone, which
 * do not pay it" (docs/decisions/0026-an-exact-payment-outranks-bound-parts.md): the transfer was mined before the
 * session's expires_at; every payment credited to it, but the transfer itself, was credited by a bind; and what they
 * bring in its asset (pending, late and reversed ones included: a reversed part may come back) stays under what it
 * asks, less the organisation's tolerance. (The transfer is of an amount it still holds: claimCoversSql.) Such a
 * session's exact payment in another asset outranks those parts: the scan credits it (exactAmountOwner) and
 * supersedeBoundLock (src/db/payment-credits.ts) re-selects the asset.
 */
export function supersedableSql(transfer: ChainTransfer): Prisma.Sql {
  return Prisma.sql`(s.crypto_currency IS NOT NULL
       AND (s.crypto_currency <> ${transfer.asset} OR s.chain_id <> ${transfer.chainId})
       AND ${transfer.blockTime} < s.expires_at
       AND NOT EXISTS (SELECT 1 FROM payments p
                        WHERE p.session_id = s.id AND p.attribution IS DISTINCT FROM 'bound_tx'
                          AND NOT (p.chain_id = ${transfer.chainId} AND p.tx_hash = ${transfer.txHash}
                                   AND p.log_index = ${transfer.logIndex} AND p.live IS TRUE))
       AND COALESCE((SELECT SUM(p.amount) FROM payments p
                      WHERE p.session_id = s.id AND p.asset = s.crypto_currency AND p.chain_id = s.chain_id), 0)
           < s.total_amount_crypto * (1 - (SELECT o.underpayment_tolerance_percent FROM organisations o
                                            WHERE o.id = s.organisation_id) / 100))`;
}

/**
 * The claim (`c`) of the transfer's amount on its wallet that was taken by the time its block was mined (less the
 * clock skew), whatever has happened to it or its session since: released (a re-pricing, a new rest, its asset or
 * chain locked to another, the session closed), it is still unpurged (an open session keeps what it gave up for a
 * quote lifetime, at most the in-flight grace: purgeReleasedAmountClaims). Its session was asked for that amount; no
 * other session was. None when a share of the amount counts for the transfer: then the sessions asking for it decide
 * (amountContenders).
 */
function claimAskedSql(transfer: ChainTransfer): Prisma.Sql {
  const takenBy = new Date(transfer.blockTime.getTime() + PAYMENT_CLOCK_SKEW_MS);
  return Prisma.sql`SELECT c.session_id FROM payment_amount_claims c
     WHERE c.network = ${transfer.network} AND c.wallet_address = ${transfer.to} AND c.asset = ${transfer.asset}
       AND c.amount = ${transfer.amount.toFixed()}::numeric AND COALESCE(c.held_since, c.created_at) <= ${takenBy}
       AND NOT EXISTS (SELECT 1 FROM payment_amount_shares h
                        WHERE ${sameKey('h', 'c')} AND ${shareCountsSql(transfer)})`;
}

/**
 * docs/payment-rules.md, rule 2: the session a transfer nobody is paid by amount is reserved for, when there is one
 * — the session whose unique amount it is (claimAskedSql), or the one recorded when it was scanned
 * (payments.reserved_for, on its row or, reversed by a reorganisation since, on a row of the same transfer: the claim
 * may be freed since). Only that session's bind may take it: a stranger who locks a
 * session to another asset with a bound part of their own, or changes its rest, no longer frees its payer's exact
 * transfer for a bind of theirs.
 */
export async function amountClaimant(tx: Client, transfer: ChainTransfer): Promise<string | null> {
  const rows = await tx.$queryRaw<Array<{ session_id: string }>>`
    SELECT session_id::text AS session_id FROM (
      SELECT p.reserved_for AS session_id, 0 AS rank FROM payments p
       WHERE p.chain_id = ${transfer.chainId} AND p.tx_hash = ${transfer.txHash} AND p.to_address = ${transfer.to}
         AND p.token_address IS NOT DISTINCT FROM ${transfer.tokenAddress}
         AND p.base_units = ${transfer.baseUnits.toString()}::numeric AND p.reserved_for IS NOT NULL
      UNION ALL
      SELECT asked.session_id, 1 FROM (${claimAskedSql(transfer)}) asked) x
     ORDER BY rank LIMIT 1`;
  return rows[0]?.session_id ?? null;
}

/** What a scan records as payments.reserved_for of a transfer it credits to nobody (amountClaimant). */
export function reservedForSql(transfer: ChainTransfer): Prisma.Sql {
  return Prisma.sql`(${claimAskedSql(transfer)} LIMIT 1)`;
}

/**
 * The sessions that ask for this transfer's amount when it is shared (a share counts for it:
 * exactAmountOwner gives it to no one): the sharers, and the claim's holder if its claim covers the
 * block. Only they may bind it. Empty when the amount is not shared.
 */
export async function amountContenders(tx: Client, transfer: ChainTransfer): Promise<string[]> {
  const rows = await tx.$queryRaw<Array<{ session_id: string }>>`
    WITH k AS (SELECT ${transfer.network}::text AS network, ${transfer.to}::text AS wallet_address,
                      ${transfer.asset}::text AS asset, ${transfer.amount.toFixed()}::numeric AS amount),
    sharers AS (
      SELECT h.session_id FROM payment_amount_shares h, k
       WHERE h.network = k.network AND h.wallet_address = k.wallet_address AND h.asset = k.asset
         AND h.amount = k.amount AND ${shareCountsSql(transfer)})
    SELECT session_id::text AS session_id FROM sharers
    UNION
    SELECT a.session_id::text FROM payment_amount_claims a, k
     WHERE a.network = k.network AND a.wallet_address = k.wallet_address AND a.asset = k.asset
       AND a.amount = k.amount AND EXISTS (SELECT 1 FROM sharers) AND ${claimCoversSql(transfer, 'a')}`;
  return rows.map((row) => row.session_id);
}
