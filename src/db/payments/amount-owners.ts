import { Prisma } from '../../generated/prisma/client.js';
import type { AssetTicker } from '../../domain/shared/assets.js';
import type { CheckoutSessionStatus } from '../../domain/sessions/checkout-session.js';
import { toDecimal } from '../../domain/shared/money.js';
import type { Attribution, ChainTransfer } from '../../domain/payments/payment-ports.js';
import type { SessionPaymentFacts, TransferSnapshot } from '../../domain/payments/amount-facts.js';

// The facts of a transfer's amount (docs/payment-rules.md, rules 2 and 4) as one read: the claim and shares of the
// amount on its wallet, the claim's session, and the transfer's own rows. decide() judges them (amount-facts.ts).

type Client = Prisma.TransactionClient;

/** Columns of session `s` (organisation `o`) that SessionPaymentFacts reads, for `transfer`. */
export function sessionFactsSql(transfer: ChainTransfer): Prisma.Sql {
  return Prisma.sql`s.id::text AS session_id, s.status::text AS status, s.created_at AS session_created_at,
       s.expires_at, s.crypto_currency, s.chain_id, s.total_amount_crypto::text AS total,
       o.underpayment_tolerance_percent::text AS tolerance,
       EXISTS (SELECT 1 FROM payments p WHERE p.session_id = s.id AND p.attribution IS DISTINCT FROM 'bound_tx'
                 AND NOT (p.chain_id = ${transfer.chainId} AND p.tx_hash = ${transfer.txHash}
                          AND p.log_index = ${transfer.logIndex} AND p.live IS TRUE)) AS paid_otherwise,
       COALESCE((SELECT SUM(p.amount) FROM payments p WHERE p.session_id = s.id AND p.asset = s.crypto_currency
                   AND p.chain_id = s.chain_id), 0)::text AS parts`;
}

export interface SessionFactsRow {
  session_id: string;
  status: string;
  session_created_at: Date;
  expires_at: Date;
  crypto_currency: string | null;
  chain_id: string | null;
  total: string | null;
  tolerance: string;
  paid_otherwise: boolean;
  parts: string;
}

export function toSessionFacts(row: SessionFactsRow): SessionPaymentFacts {
  return {
    sessionId: row.session_id,
    status: row.status as CheckoutSessionStatus,
    createdAt: row.session_created_at,
    expiresAt: row.expires_at,
    cryptoCurrency: row.crypto_currency as AssetTicker | null,
    chainId: row.chain_id,
    totalAmountCrypto: row.total === null ? null : toDecimal(row.total),
    tolerancePercent: toDecimal(row.tolerance),
    paidOtherwise: row.paid_otherwise,
    partsTotal: toDecimal(row.parts),
  };
}

/** A session's payment facts for an exact payment of `transfer`, read under its lock (null: no such session). */
export async function sessionFacts(
  tx: Client,
  sessionId: string,
  transfer: ChainTransfer,
): Promise<SessionPaymentFacts | null> {
  const rows = await tx.$queryRaw<SessionFactsRow[]>`
    SELECT ${sessionFactsSql(transfer)} FROM checkout_sessions s JOIN organisations o ON o.id = s.organisation_id
     WHERE s.id = ${sessionId}::uuid`;
  return rows[0] ? toSessionFacts(rows[0]) : null;
}

interface SnapshotRow extends Partial<SessionFactsRow> {
  claim_taken_at: Date | null;
  held_since: Date | null;
  released_at: Date | null;
  shares: string;
  reserved_for: string | null;
  recorded: boolean;
  recorded_session: string | null;
  recorded_attribution: string | null;
  deposit_session: string | null;
  deposit_offered: boolean | null;
}

/**
 * What is known of `transfer`'s amount: its claim on the wallet (one per amount) with the claim's session, the
 * shares of it, the session a row of the transfer was reserved for, and a reversed or moved row a scan would revive.
 */
export async function transferSnapshot(tx: Client, transfer: ChainTransfer): Promise<TransferSnapshot> {
  const key = (alias: string) => {
    const a = Prisma.raw(alias);
    return Prisma.sql`${a}.network = ${transfer.network} AND ${a}.wallet_address = ${transfer.to}
      AND ${a}.asset = ${transfer.asset} AND ${a}.amount = ${transfer.amount.toFixed()}::numeric`;
  };
  const sameTransfer = (alias: string) => {
    const a = Prisma.raw(alias);
    return Prisma.sql`${a}.chain_id = ${transfer.chainId} AND ${a}.tx_hash = ${transfer.txHash}
      AND ${a}.to_address = ${transfer.to} AND ${a}.token_address IS NOT DISTINCT FROM ${transfer.tokenAddress}
      AND ${a}.base_units = ${transfer.baseUnits.toString()}::numeric`;
  };
  const rows = await tx.$queryRaw<SnapshotRow[]>`
    SELECT COALESCE(c.held_since, c.created_at) AS claim_taken_at, c.held_since, c.released_at,
           ${sessionFactsSql(transfer)},
           (SELECT COALESCE(json_agg(json_build_object('session_id', h.session_id,
                      'created_at', floor(extract(epoch FROM h.created_at) * 1000),
                      'released_at', floor(extract(epoch FROM h.released_at) * 1000))), '[]'::json)::text
              FROM payment_amount_shares h WHERE ${key('h')}) AS shares,
           (SELECT p.reserved_for::text FROM payments p WHERE ${sameTransfer('p')} AND p.reserved_for IS NOT NULL
             LIMIT 1) AS reserved_for,
           r.id IS NOT NULL AS recorded, r.session_id::text AS recorded_session, r.attribution AS recorded_attribution,
           dep.session_id AS deposit_session, dep.offered AS deposit_offered
      FROM (SELECT 1) one
      LEFT JOIN payment_amount_claims c ON ${key('c')}
      LEFT JOIN checkout_sessions s ON s.id = c.session_id
      LEFT JOIN organisations o ON o.id = s.organisation_id
      LEFT JOIN LATERAL (
        SELECT r.id, r.session_id, r.attribution FROM payments r
         WHERE ${sameTransfer('r')}
           AND (r.state = 'reversed' OR (r.live AND r.block_hash <> ${transfer.blockHash}))
         ORDER BY r.log_index, r.created_at, r.id LIMIT 1) r ON true
      LEFT JOIN LATERAL (
        SELECT n.session_id::text AS session_id,
               EXISTS (SELECT 1 FROM checkout_session_quotes q
                        WHERE q.session_id = n.session_id AND q.ticker = ${transfer.asset}) AS offered
          FROM checkout_session_networks n JOIN checkout_sessions d ON d.id = n.session_id
         WHERE n.wallet_address = ${transfer.to} AND n.network = ${transfer.network}
           AND d.receiving_mode = 'deposit_addresses'
         ORDER BY d.created_at LIMIT 1) dep ON true`;
  return toSnapshot(transfer, rows[0]!);
}

function toSnapshot(transfer: ChainTransfer, row: SnapshotRow): TransferSnapshot {
  const shares = (
    JSON.parse(row.shares) as Array<{ session_id: string; created_at: number; released_at: number | null }>
  ).map((share) => ({
    sessionId: share.session_id,
    createdAt: new Date(share.created_at),
    releasedAt: share.released_at === null ? null : new Date(share.released_at),
  }));
  const claim =
    row.claim_taken_at && row.session_id
      ? {
          sessionId: row.session_id,
          takenAt: row.claim_taken_at,
          heldSince: row.held_since,
          releasedAt: row.released_at,
          session: toSessionFacts(row as SessionFactsRow),
        }
      : null;
  const recorded = row.recorded
    ? { sessionId: row.recorded_session, attribution: row.recorded_attribution as Attribution | null }
    : null;
  const deposit = row.deposit_session
    ? { sessionId: row.deposit_session, offered: row.deposit_offered === true }
    : null;
  return { transfer, claim, shares, reservedFor: row.reserved_for, recorded, deposit };
}
