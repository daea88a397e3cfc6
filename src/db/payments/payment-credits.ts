import { randomUUID } from 'node:crypto';
import { Prisma } from '../../generated/prisma/client.js';
import type { AssetTicker } from '../../domain/shared/assets.js';
import type { CheckoutSession } from '../../domain/sessions/checkout-session.js';
import { toDecimal, type Decimal } from '../../domain/shared/money.js';
import type { ChainTransfer } from '../../domain/payments/payment-ports.js';
import type { Credit, PaymentTotals } from '../../domain/payments/payment-ports.js';
import { releaseAmountClaims } from './amount-claims.js';
import { sessionFacts } from './amount-owners.js';
import { supersedeBoundLock } from './bound-lock-supersede.js';
import { decide } from '../../domain/payments/decide.js';

type Client = Prisma.TransactionClient;

/**
 * Records a transfer as seen and credits it to `credit` unless credited already: the unique (chain, tx, log, live) row
 * makes racing instances credit once, and a reversed transfer comes back as its row. Returns who it is credited to now.
 */
export async function recordTransfer(
  tx: Client,
  transfer: ChainTransfer,
  credit: Credit | null,
  at: Date,
  reservedFor: string | null = null,
): Promise<string | null> {
  const sessionId = credit?.sessionId ?? null;
  // A session closed before the block was mined is paid late (shown to operators, `kassa payments list`).
  const late = Prisma.sql`COALESCE((SELECT s.expires_at <= ${transfer.blockTime}
      OR s.status::text IN ('paid', 'expired', 'failed')
      FROM checkout_sessions s WHERE s.id = ${sessionId}::uuid), false)`;
  const write: CreditWrite = { transfer, credit, late, reserved: Prisma.sql`${reservedFor}::uuid`, at };
  // The session's row before the transfer's, the order a bind takes them in, or a scan and a bind of one transfer
  // deadlock (test/integration/credit-lock-order.test.ts).
  if (sessionId !== null) await lockSessionRow(tx, sessionId);
  const rows = await tx.$queryRaw<Array<{ session_id: string | null }>>`
    WITH revived AS (${reviveSql(write)}), inserted AS (${insertSql(write)})
    SELECT session_id FROM revived UNION ALL SELECT session_id FROM inserted`;
  const holder = rows.length > 0 ? rows[0]!.session_id : await creditedTo(tx, transfer);
  if (holder !== null) await markChanged(tx, [holder], at);
  return holder;
}

/** What recordTransfer writes: the transfer, its credit, its `late` and `reserved_for` values, and when. */
interface CreditWrite {
  readonly transfer: ChainTransfer;
  readonly credit: Credit | null;
  readonly late: Prisma.Sql;
  readonly reserved: Prisma.Sql;
  readonly at: Date;
}

/**
 * A row credited before that moves to another block (`alias`: its session): late also when its new block came at or
 * after the session's expires_at. (Its session's status is not asked: this very payment may have closed it.)
 */
function lateAtSql(alias: string, blockTime: Prisma.Sql): Prisma.Sql {
  return Prisma.sql`${Prisma.raw(alias)}.late OR COALESCE((SELECT s.expires_at <= ${blockTime} FROM checkout_sessions s
      WHERE s.id = ${Prisma.raw(alias)}.session_id), false)`;
}

/** The reversed (or moved) row of the transfer, revived where it is now with the session it was credited to. */
function reviveSql({ transfer, credit, late, reserved, at }: CreditWrite): Prisma.Sql {
  return Prisma.sql`
      UPDATE payments p
         SET state = 'seen', live = true, log_index = ${transfer.logIndex}, from_address = ${transfer.from},
             block_number = ${transfer.blockNumber}, block_hash = ${transfer.blockHash},
             block_time = ${transfer.blockTime}, confirmations = 0,
             session_id = COALESCE(p.session_id, ${credit?.sessionId ?? null}::uuid),
             attribution = COALESCE(p.attribution, ${credit?.attribution ?? null}),
             reserved_for = COALESCE(p.reserved_for, ${reserved}),
             late = CASE WHEN p.session_id IS NULL THEN ${late}
                         ELSE ${lateAtSql('p', Prisma.sql`${transfer.blockTime}`)} END,
             updated_at = ${at}
       WHERE p.id = (SELECT r.id FROM payments r
                      WHERE r.chain_id = ${transfer.chainId} AND r.tx_hash = ${transfer.txHash}
                        AND ${movedSql('r', transfer)} AND r.to_address = ${transfer.to}
                        AND r.token_address IS NOT DISTINCT FROM ${transfer.tokenAddress}
                        AND r.base_units = ${transfer.baseUnits.toString()}::numeric
                      ORDER BY r.log_index, r.created_at, r.id LIMIT 1)
         -- Rechecked on the row once a concurrent writer releases it: revived once.
         AND ${movedSql('p', transfer)}
         AND NOT EXISTS (SELECT 1 FROM payments l WHERE l.chain_id = ${transfer.chainId}
                           AND l.tx_hash = ${transfer.txHash} AND l.log_index = ${transfer.logIndex} AND l.live
                           AND l.id <> p.id)
      RETURNING p.session_id`;
}

/** The transfer's row, unless revived: one live row per (chain, tx, log), its credit kept if it has one. */
function insertSql({ transfer, credit, late, reserved, at }: CreditWrite): Prisma.Sql {
  const units = transfer.baseUnits.toString();
  return Prisma.sql`
      INSERT INTO payments (id, network, chain_id, tx_hash, log_index, from_address, to_address, asset, token_address,
                            base_units, amount, block_number, block_hash, block_time, state, session_id, attribution,
                            reserved_for, late, live, created_at, updated_at)
      SELECT ${randomUUID()}::uuid, ${transfer.network}::text, ${transfer.chainId}::text, ${transfer.txHash}::text,
             ${transfer.logIndex}::integer, ${transfer.from}::text, ${transfer.to}::text, ${transfer.asset}::text,
             ${transfer.tokenAddress}::text, ${units}::numeric, ${transfer.amount.toFixed()}::numeric,
             ${transfer.blockNumber}::bigint, ${transfer.blockHash}::text, ${transfer.blockTime}::timestamptz, 'seen',
             ${credit?.sessionId ?? null}::uuid, ${credit?.attribution ?? null}::text, ${reserved}, ${late}, true,
             ${at}::timestamptz, ${at}::timestamptz
       WHERE NOT EXISTS (SELECT 1 FROM revived)
      ON CONFLICT (chain_id, tx_hash, log_index, live) DO UPDATE
         SET session_id = COALESCE(payments.session_id, EXCLUDED.session_id),
             attribution = COALESCE(payments.attribution, EXCLUDED.attribution),
             reserved_for = COALESCE(payments.reserved_for, EXCLUDED.reserved_for),
             late = CASE WHEN payments.session_id IS NULL THEN EXCLUDED.late
                         ELSE ${lateAtSql('payments', Prisma.sql`EXCLUDED.block_time`)} END,
             -- Recorded from a branch since replaced (a bind reads a block the scan has not reached): where it is now.
             block_number = EXCLUDED.block_number, block_hash = EXCLUDED.block_hash, block_time = EXCLUDED.block_time,
             state = CASE WHEN payments.block_hash <> EXCLUDED.block_hash THEN 'seen' ELSE payments.state END,
             confirmations = CASE WHEN payments.block_hash <> EXCLUDED.block_hash THEN 0
                                  ELSE payments.confirmations END,
             updated_at = EXCLUDED.updated_at
       WHERE (payments.session_id IS NULL AND EXCLUDED.session_id IS NOT NULL)
          OR payments.block_hash <> EXCLUDED.block_hash
      RETURNING session_id`;
}

/**
 * A row (`alias`) of the same transfer that the scan finds elsewhere now: reversed, or live at a block since replaced
 * (a bind recorded it before the scan got there: docs/payment-detection.md).
 */
function movedSql(alias: string, transfer: ChainTransfer): Prisma.Sql {
  const r = Prisma.raw(alias);
  return Prisma.sql`(${r}.state = 'reversed' OR (${r}.live AND ${r}.block_hash <> ${transfer.blockHash}))`;
}

async function creditedTo(tx: Client, transfer: ChainTransfer): Promise<string | null> {
  const rows = await tx.$queryRaw<Array<{ session_id: string | null }>>`
    SELECT session_id FROM payments WHERE chain_id = ${transfer.chainId} AND tx_hash = ${transfer.txHash}
      AND log_index = ${transfer.logIndex} AND live`;
  return rows[0]?.session_id ?? null;
}

/** Locks a session's row until the transaction ends (the order credits and binds take their locks in). */
export async function lockSessionRow(tx: Client, sessionId: string): Promise<void> {
  await tx.$queryRaw`SELECT 1 FROM checkout_sessions WHERE id = ${sessionId}::uuid FOR UPDATE`;
}

/** Flags sessions for settlement (their totals and status are recomputed by the watcher). */
export async function markChanged(tx: Client, sessionIds: readonly string[], at: Date): Promise<void> {
  if (sessionIds.length === 0) return;
  // Compared as uuids, so the primary key serves it (`id::text` would read every session, per transfer).
  await tx.$executeRaw`UPDATE checkout_sessions SET payments_changed_at = ${at}
    WHERE id = ANY(${[...new Set(sessionIds)]}::uuid[])`;
}

/**
 * Selects the asset and chain for a session that has none, by the exact amount or the quote valid at `firstSeenAt`; a
 * bound part keeps other claims for its quote's lifetime (docs/decisions/0024-an-asked-amount-stays-its-sessions.md).
 */
export async function lockAsset(
  tx: Client,
  sessionId: string,
  asset: AssetTicker,
  network: string,
  chainId: string,
  firstSeenAt: Date,
  at: Date,
  exact: Decimal | null = null,
  keepOthersMinutes: number | null = null,
): Promise<Decimal> {
  const rows = await tx.$queryRaw<Array<{ total: string }>>`
    UPDATE checkout_sessions s
       SET crypto_currency = ${asset}, chain_id = ${chainId}, updated_at = ${at},
           total_amount_crypto = COALESCE(${exact?.toFixed() ?? null}::numeric, ${quoteAtSql(asset, firstSeenAt)})
     WHERE s.id = ${sessionId}::uuid AND s.crypto_currency IS NULL
    RETURNING total_amount_crypto::text AS total`;
  if (rows[0]) {
    const lapse =
      keepOthersMinutes === null
        ? at
        : Prisma.sql`GREATEST(${at}::timestamptz, (SELECT s.quoted_at FROM checkout_sessions s
            WHERE s.id = ${sessionId}::uuid) + make_interval(mins => ${keepOthersMinutes}))`;
    await releaseAmountClaims(tx, sessionId, lapse, { asset, network });
    return toDecimal(rows[0].total);
  }
  const current = await tx.$queryRaw<
    Array<{ total: string }>
  >`SELECT total_amount_crypto::text AS total FROM checkout_sessions WHERE id = ${sessionId}::uuid`;
  return toDecimal(current[0]!.total);
}

/**
 * The amount session `s` asked in `asset` at `at`: the old amount of its first re-pricing after `at`, else its current
 * quote's.
 */
function quoteAtSql(asset: AssetTicker, at: Date): Prisma.Sql {
  return Prisma.sql`COALESCE(
    (SELECT qc.old_amount FROM checkout_session_quote_changes qc
      WHERE qc.session_id = s.id AND qc.ticker = ${asset} AND qc.created_at > ${at}
      ORDER BY qc.created_at, qc.id LIMIT 1),
    (SELECT q.amount FROM checkout_session_quotes q WHERE q.session_id = s.id AND q.ticker = ${asset}))`;
}

/** The amount a session asked in `asset` at `at` (the quote then valid), null when it was never quoted in it. */
export async function quoteAt(tx: Client, sessionId: string, asset: AssetTicker, at: Date): Promise<Decimal | null> {
  const rows = await tx.$queryRaw<Array<{ amount: string | null }>>`
    SELECT ${quoteAtSql(asset, at)}::text AS amount FROM checkout_sessions s WHERE s.id = ${sessionId}::uuid`;
  return rows[0]?.amount ? toDecimal(rows[0].amount) : null;
}

/**
 * Applies decide(exact_credit) to an exact-amount credit, the session's row locked (recordTransfer). Returns whether
 * the credit stands.
 */
export async function confirmExactCredit(
  tx: Client,
  sessionId: string,
  transfer: ChainTransfer,
  at: Date,
): Promise<boolean> {
  await lockSessionRow(tx, sessionId);
  const session = await sessionFacts(tx, sessionId, transfer);
  if (!session) return false;
  const outcome = decide({ kind: 'exact_credit' }, { transfer, session });
  switch (outcome.kind) {
    case 'select': {
      const minedAt = transfer.blockTime < at ? transfer.blockTime : at;
      // At the amount of the claim it matched (by time alone, a block within the skew before a re-pricing misjudges).
      await lockAsset(tx, sessionId, transfer.asset, transfer.network, transfer.chainId, minedAt, at, transfer.amount);
      return true;
    }
    case 'keep':
      await releaseAmountClaims(tx, sessionId, at, { asset: transfer.asset, network: transfer.network });
      return true;
    case 'supersede':
      await supersedeBoundLock(tx, sessionId, transfer, at);
      return true;
    case 'reserve':
      await tx.$executeRaw`
        UPDATE payments SET session_id = NULL, attribution = NULL, late = false, updated_at = ${at},
               reserved_for = COALESCE(reserved_for, ${sessionId}::uuid)
         WHERE chain_id = ${transfer.chainId} AND tx_hash = ${transfer.txHash} AND log_index = ${transfer.logIndex}
           AND live AND session_id = ${sessionId}::uuid`;
      return false;
  }
}

/**
 * The sessions each Transfer log of a transaction is credited to on `chainId`, by log index: several transfers to one
 * wallet pay several sessions, one log each (docs/payment-rules.md, rule 3).
 */
export async function transferHolders(
  tx: Client,
  txHash: string,
  chainId: string,
): Promise<ReadonlyMap<number, string>> {
  const rows = await tx.$queryRaw<Array<{ log_index: number; session_id: string }>>`
    SELECT log_index, session_id::text FROM payments
     WHERE tx_hash = ${txHash} AND chain_id = ${chainId} AND session_id IS NOT NULL AND state <> 'reversed'`;
  return new Map(rows.map((row) => [Number(row.log_index), row.session_id]));
}

/** Confirmed money split at expires_at by block time, and credited money not confirmed yet. */
export async function paymentTotals(
  tx: Client,
  session: CheckoutSession,
  asset: AssetTicker,
  chainId: string,
): Promise<PaymentTotals> {
  const rows = await tx.$queryRaw<Array<{ on_time: string; late: string; pending: string }>>`
    SELECT COALESCE(SUM(amount) FILTER (WHERE state = 'confirmed' AND block_time < ${session.expiresAt}),
      0)::text AS on_time,
           COALESCE(SUM(amount) FILTER (WHERE state = 'confirmed' AND block_time >= ${session.expiresAt}),
             0)::text AS late,
           COALESCE(SUM(amount) FILTER (WHERE state = 'seen'), 0)::text AS pending
      FROM payments WHERE session_id = ${session.id}::uuid AND asset = ${asset} AND chain_id = ${chainId}`;
  const row = rows[0]!;
  return { onTime: toDecimal(row.on_time), late: toDecimal(row.late), pending: toDecimal(row.pending) };
}

/**
 * The SQL condition "someone paid session `s`": a credited payment (one a reorganisation reversed too: the same
 * transfer may come back and is judged at the quote it was sent for).
 */
export const PAYMENT_CREDITED_SQL = `EXISTS (SELECT 1 FROM payments p WHERE p.session_id = s.id)`;

/** The SQL condition "someone may be paying session `s`": a bound transaction the chain knows, not rejected. */
export const BOUND_TRANSACTION_SEEN_SQL =
  `EXISTS (SELECT 1 FROM checkout_session_transactions t WHERE t.session_id = s.id AND t.state <> 'rejected' AND ` +
  `t.seen_on_chain_at IS NOT NULL)`;
