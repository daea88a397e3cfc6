import { Prisma } from '../../generated/prisma/client.js';
import type { AssetTicker } from '../../domain/shared/assets.js';
import type { Decimal } from '../../domain/shared/money.js';
import { OPEN_STATUSES } from '../../domain/sessions/checkout-session.js';
import type { AmountClaimRequest } from '../../domain/payments/payment-ports.js';
import { chainBehindSql } from './expiry-holds.js';

type Client = Prisma.TransactionClient;
const OPEN: readonly string[] = OPEN_STATUSES;

/**
 * docs/payment-rules.md, rule 4: per asset, the smallest free baseAmount + k × step (k < maxSteps) on the session's
 * wallets, claimed at `at` via kassa_claim_amount() whose primary key keeps two instances from one amount.
 */
export async function claimUniqueAmounts(
  tx: Client,
  sessionId: string,
  requests: readonly AmountClaimRequest[],
  maxSteps: number,
  at: Date,
): Promise<Map<AssetTicker, number | null>> {
  if (requests.length === 0) return new Map();
  const claims = requests.map((request) => ({
    ticker: request.ticker,
    base: request.baseAmount.toFixed(),
    step: request.step.toFixed(),
    networks: request.wallets.map((wallet) => wallet.network),
    wallets: request.wallets.map((wallet) => wallet.walletAddress.toLowerCase()),
    first: request.lane?.first ?? 0,
    stride: request.lane?.stride ?? 1,
  }));
  const rows = await tx.$queryRaw<Array<{ ticker: AssetTicker; offset: number | null }>>`
    SELECT c.ticker, kassa_claim_amount(${sessionId}::uuid, c.ticker, c.networks, c.wallets, c.base, c.step,
      ${maxSteps}::integer, c.first, c.stride) AS "offset"
      FROM jsonb_to_recordset(${JSON.stringify(claims)}::jsonb) AS c(ticker TEXT, base NUMERIC, step NUMERIC,
        networks TEXT[], wallets TEXT[], first INTEGER, stride INTEGER)`;
  // kassa_claim_amount writes the database's clock; the rule compares Kassa's (block times are judged by it).
  await tx.$executeRaw`UPDATE payment_amount_claims SET created_at = ${at}
    WHERE session_id = ${sessionId}::uuid AND released_at IS NULL AND held_since IS NULL`;
  return new Map(rows.map((row) => [row.ticker, row.offset]));
}

/** How many windows of KASSA_UNIQUE_AMOUNT_STEPS amounts a rest looks through for a free one. */
const REST_WINDOWS = 100;

/**
 * docs/payment-rules.md, rule 4: releases the session's previous rest amount at `at` and, given `rest`, claims the
 * smallest free `rest.base + k × rest.step`. Returns the amount claimed; null when none is asked or none is free.
 */
export async function claimRestAmount(
  tx: Client,
  sessionId: string,
  previous: { asset: AssetTicker; network: string; amount: Decimal } | null,
  rest: { asset: AssetTicker; network: string; wallet: string; base: Decimal; step: Decimal } | null,
  maxSteps: number,
  at: Date,
): Promise<Decimal | null> {
  if (previous)
    await tx.$executeRaw`
      WITH shares AS (
        UPDATE payment_amount_shares SET released_at = ${at}
         WHERE session_id = ${sessionId}::uuid AND asset = ${previous.asset} AND network = ${previous.network}
           AND amount = ${previous.amount.toFixed()}::numeric AND released_at IS NULL)
      UPDATE payment_amount_claims SET released_at = ${at}
       WHERE session_id = ${sessionId}::uuid AND asset = ${previous.asset} AND network = ${previous.network}
         AND amount = ${previous.amount.toFixed()}::numeric AND released_at IS NULL`;
  if (!rest) return null;
  // Window after window of maxSteps amounts: a rest is never shared with another session (a share would let whoever
  // holds the other side bind that session's payer's exact transfer), so it goes as far up as it must.
  let amount: Decimal | null = null;
  for (let window = 0; amount === null && window < REST_WINDOWS; window++) {
    const base = rest.base.plus(rest.step.times(window * maxSteps));
    const rows = await tx.$queryRaw<Array<{ offset: number | null }>>`
      SELECT kassa_claim_amount(${sessionId}::uuid, ${rest.asset}, ARRAY[${rest.network}]::text[],
        ARRAY[${rest.wallet.toLowerCase()}]::text[], ${base.toFixed()}::numeric, ${rest.step.toFixed()}::numeric,
        ${maxSteps}::integer) AS "offset"`;
    const offset = rows[0]?.offset ?? null;
    if (offset !== null) amount = base.plus(rest.step.times(offset));
  }
  if (amount === null) return null;
  // kassa_claim_amount writes the database's clock; the rule compares Kassa's (amount-facts.ts, claimCovers).
  await tx.$executeRaw`UPDATE payment_amount_claims SET created_at = ${at}
    WHERE session_id = ${sessionId}::uuid AND asset = ${rest.asset} AND network = ${rest.network}
      AND amount = ${amount.toFixed()}::numeric AND released_at IS NULL`;
  return amount;
}

/** Rows `x` and `y` (aliases) of payment_amount_claims or _shares are of one amount on one wallet. */
export function sameKey(x: string, y: string): Prisma.Sql {
  return Prisma.raw(
    `${x}.network = ${y}.network AND ${x}.wallet_address = ${y}.wallet_address AND ${x}.asset = ${y}.asset ` +
      `AND ${x}.amount = ${y}.amount`,
  );
}

/**
 * Releases the session's claims and shares at `at` (possibly to come), except `keep`'s: a released one stays until
 * purged, as a transfer mined before `at` may still be unscanned and match (or make ambiguous) its amount.
 */
export async function releaseAmountClaims(
  tx: Client,
  sessionId: string,
  at: Date | Prisma.Sql,
  keep?: { asset: AssetTicker; network: string },
): Promise<void> {
  const kept = keep ? Prisma.sql`AND NOT (asset = ${keep.asset} AND network = ${keep.network})` : Prisma.empty;
  // A claim set to lapse later than `at` (a bound part's lock) is given up at `at`.
  await tx.$executeRaw`
    WITH shares AS (
      UPDATE payment_amount_shares SET released_at = ${at}
       WHERE session_id = ${sessionId}::uuid AND (released_at IS NULL OR released_at > ${at}) ${kept})
    UPDATE payment_amount_claims SET released_at = ${at}
     WHERE session_id = ${sessionId}::uuid AND (released_at IS NULL OR released_at > ${at}) ${kept}`;
}

/**
 * Gives a session a reorganisation reopened back the unique amount it was paid with exactly; an amount another session
 * took meanwhile is shared (payment_amount_shares), so it pays neither by amount until a bind settles it.
 */
export async function reclaimExactAmounts(tx: Client, sessionId: string, at: Date): Promise<void> {
  await tx.$executeRaw`
    WITH paid AS (
      SELECT DISTINCT p.network, p.to_address AS wallet_address, p.asset, p.amount FROM payments p
        JOIN checkout_sessions s ON s.id = p.session_id AND s.total_amount_crypto = p.amount
       WHERE p.session_id = ${sessionId}::uuid AND p.attribution = 'exact_amount'),
    reclaimed AS (
      INSERT INTO payment_amount_claims (network, wallet_address, asset, amount, session_id, created_at)
      SELECT network, wallet_address, asset, amount, ${sessionId}::uuid, ${at} FROM paid
      ON CONFLICT (network, wallet_address, asset, amount) DO UPDATE SET released_at = NULL
       WHERE payment_amount_claims.session_id = EXCLUDED.session_id
      RETURNING network, wallet_address, asset, amount)
    INSERT INTO payment_amount_shares (network, wallet_address, asset, amount, session_id, created_at)
    SELECT p.network, p.wallet_address, p.asset, p.amount, ${sessionId}::uuid, ${at} FROM paid p
     WHERE NOT EXISTS (SELECT 1 FROM reclaimed r
                        WHERE r.network = p.network AND r.wallet_address = p.wallet_address
                          AND r.asset = p.asset AND r.amount = p.amount)
    ON CONFLICT (network, wallet_address, asset, amount, session_id) DO UPDATE
      SET released_at = NULL,
          created_at = CASE WHEN payment_amount_shares.released_at IS NULL THEN payment_amount_shares.created_at
                            ELSE EXCLUDED.created_at END`;
}

/**
 * docs/payment-rules.md, rule 4: deletes released claims no unscanned transfer can still be meant for (an amount a
 * share stands on goes to its session), in the caller's transaction so no create takes an amount meanwhile.
 */
export async function purgeReleasedAmountClaims(
  tx: Client,
  now: Date,
  graceMinutes: number,
  keepOpenMinutes: number = graceMinutes,
): Promise<number> {
  const { done, claimDone } = purgeConditions(now, graceMinutes, keepOpenMinutes);
  await tx.$executeRaw`
    DELETE FROM payment_amount_shares a USING checkout_sessions s
     WHERE s.id = a.session_id AND a.released_at IS NOT NULL AND ${done}`;
  // Almost always no share stands (they come only from reorganisations): the hand-over, which reads every released
  // claim again, is skipped then. A share written after this look keeps its claim (its own check) until next round.
  const standing = await tx.$queryRaw<Array<{ any: boolean }>>`
    SELECT EXISTS (SELECT 1 FROM payment_amount_shares WHERE released_at IS NULL) AS any`;
  if (standing[0]?.any) await handOverShared(tx, done, now);
  const lastRelease = Prisma.sql`last AS MATERIALIZED (
      SELECT x.session_id, max(x.released_at) AS at FROM payment_amount_claims x
       WHERE x.released_at IS NOT NULL GROUP BY x.session_id)`;
  const freed = await tx.$executeRaw`
    WITH ${lastRelease}
    DELETE FROM payment_amount_claims a USING checkout_sessions s, last
     WHERE s.id = a.session_id AND last.session_id = a.session_id AND a.released_at IS NOT NULL AND ${claimDone}
       AND NOT EXISTS (SELECT 1 FROM payment_amount_shares h WHERE ${sameKey('h', 'a')} AND h.released_at IS NULL)`;
  await claimOrphanShares(tx, now);
  return freed;
}

/** When a released share (`done`) or claim (`claimDone`, with `last`: its session's last release) may go. */
function purgeConditions(now: Date, graceMinutes: number, keepOpenMinutes: number) {
  const graceEndedFor = new Date(now.getTime() - graceMinutes * 60_000);
  const keepOpen = Math.min(keepOpenMinutes, graceMinutes);
  const keptOpenFor = new Date(now.getTime() - keepOpen * 60_000);
  const chainBehind = chainBehindSql(graceMinutes, Prisma.sql`a.released_at`);
  const done = Prisma.sql`(a.released_at <= ${graceEndedFor} OR NOT ${chainBehind})`;
  // An open session keeps a claim it gave up for the quote lifetime and until scanned past then (its page may show it);
  // a closed one's go once every network it could be paid on is scanned past its last release.
  const scannedPast = (at: Prisma.Sql) => Prisma.sql`NOT ${chainBehindSql(graceMinutes, at, { everyNetwork: true })}`;
  // A session closed unpaid keeps every claim until its late-payment window ends (its payer may still send the
  // amount, reserved for it); a paid session's payer has paid.
  const lateWindowOver = Prisma.sql`(s.status::text = 'paid' OR s.expires_at + make_interval(mins =>
    (SELECT o.late_payment_window_minutes FROM organisations o WHERE o.id = s.organisation_id)) <= ${now})`;
  const claimDone = Prisma.sql`((s.status::text = ANY(${OPEN}) AND (a.released_at <= ${graceEndedFor}
        OR (a.released_at <= ${keptOpenFor}
            AND ${scannedPast(Prisma.sql`(a.released_at + make_interval(mins => ${keepOpen}))`)})))
    OR (s.status::text <> ALL(${OPEN}) AND ${lateWindowOver}
        AND (a.released_at <= ${graceEndedFor} OR ${scannedPast(Prisma.sql`last.at`)})))`;
  return { done, claimDone };
}

/** The heirs (`from`: session_id per amount) whose sessions are open, locked so none closes meanwhile. */
const openHeirs = (from: string) =>
  Prisma.sql`open_heirs AS MATERIALIZED (
      SELECT r.id FROM checkout_sessions r
       WHERE r.id IN (SELECT session_id FROM ${Prisma.raw(from)}) AND r.status::text = ANY(${OPEN})
         FOR SHARE SKIP LOCKED)`;

/** A released claim (`done`) a share stands on goes to the oldest sharer, held from the release on. */
async function handOverShared(tx: Client, done: Prisma.Sql, now: Date): Promise<void> {
  await tx.$executeRaw`
    WITH heirs AS MATERIALIZED (
      SELECT DISTINCT ON (a.network, a.wallet_address, a.asset, a.amount)
             a.network, a.wallet_address, a.asset, a.amount, h.session_id
        FROM payment_amount_claims a
        JOIN checkout_sessions s ON s.id = a.session_id
        JOIN payment_amount_shares h ON ${sameKey('h', 'a')} AND h.released_at IS NULL
       WHERE a.released_at IS NOT NULL AND ${done}
       ORDER BY a.network, a.wallet_address, a.asset, a.amount, h.created_at, h.session_id),
    ${openHeirs('heirs')},
    handed AS (
      UPDATE payment_amount_claims a
         SET session_id = heirs.session_id, held_since = a.released_at, released_at = NULL, created_at = ${now}
        FROM heirs JOIN open_heirs ON open_heirs.id = heirs.session_id
       WHERE a.released_at IS NOT NULL AND ${sameKey('a', 'heirs')}
      RETURNING a.network, a.wallet_address, a.asset, a.amount, a.session_id)
    DELETE FROM payment_amount_shares h USING handed
     WHERE ${sameKey('h', 'handed')} AND h.session_id = handed.session_id`;
}

/** A share left with no claim (a reclaim that raced the purge) becomes its session's claim from now on. */
async function claimOrphanShares(tx: Client, now: Date): Promise<void> {
  await tx.$executeRaw`
    WITH orphans AS MATERIALIZED (
      SELECT DISTINCT ON (h.network, h.wallet_address, h.asset, h.amount)
             h.network, h.wallet_address, h.asset, h.amount, h.session_id
        FROM payment_amount_shares h
       WHERE h.released_at IS NULL AND NOT EXISTS (SELECT 1 FROM payment_amount_claims a WHERE ${sameKey('a', 'h')})
       ORDER BY h.network, h.wallet_address, h.asset, h.amount, h.created_at, h.session_id),
    ${openHeirs('orphans')},
    claimed AS (
      INSERT INTO payment_amount_claims (network, wallet_address, asset, amount, session_id, created_at, held_since)
      SELECT o.network, o.wallet_address, o.asset, o.amount, o.session_id, ${now}, ${now}
        FROM orphans o JOIN open_heirs ON open_heirs.id = o.session_id
      ON CONFLICT DO NOTHING
      RETURNING network, wallet_address, asset, amount, session_id)
    DELETE FROM payment_amount_shares h USING claimed
     WHERE ${sameKey('h', 'claimed')} AND h.session_id = claimed.session_id`;
}
