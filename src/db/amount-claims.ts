import { Prisma } from '../generated/prisma/client.js';
import type { AssetTicker } from '../domain/assets.js';
import { OPEN_STATUSES } from '../domain/checkout-session.js';
import type { AmountClaimRequest, ChainTransfer } from '../domain/payment-ports.js';
import { PAYMENT_CLOCK_SKEW_MS } from '../domain/payments.js';
import { chainBehindSql } from './expiry-holds.js';

type Client = Prisma.TransactionClient;
const OPEN: readonly string[] = OPEN_STATUSES;

/**
 * docs/payment-rules.md, rule 4 (unique amounts): per asset, the smallest k < maxSteps such that
 * baseAmount + k × step is held by no other session on any of the session's wallets,
 * claimed with the table's primary key so two instances never hand out one amount.
 * The rule is kassa_claim_amount() (migration 20261123140000_hot_paths), which create
 * runs too: one statement for all assets.
 */
export async function claimUniqueAmounts(
  tx: Client,
  sessionId: string,
  requests: readonly AmountClaimRequest[],
  maxSteps: number,
): Promise<Map<AssetTicker, number | null>> {
  if (requests.length === 0) return new Map();
  const claims = requests.map((request) => ({
    ticker: request.ticker,
    base: request.baseAmount.toFixed(),
    step: request.step.toFixed(),
    networks: request.wallets.map((wallet) => wallet.network),
    wallets: request.wallets.map((wallet) => wallet.walletAddress.toLowerCase()),
  }));
  const rows = await tx.$queryRaw<Array<{ ticker: AssetTicker; offset: number | null }>>`
    SELECT c.ticker, kassa_claim_amount(${sessionId}::uuid, c.ticker, c.networks, c.wallets, c.base, c.step,
      ${maxSteps}::integer) AS "offset"
      FROM jsonb_to_recordset(${JSON.stringify(claims)}::jsonb) AS c(ticker TEXT, base NUMERIC, step NUMERIC,
        networks TEXT[], wallets TEXT[])`;
  return new Map(rows.map((row) => [row.ticker, row.offset]));
}

/**
 * Gives the session's claims up at `at`, except (`keep.asset`, `keep.network`). A released claim stays
 * (`released_at`): it still matches a transfer mined before `at`, which may not be scanned yet, and its
 * amount is no other session's until purgeReleasedAmountClaims deletes it.
 */
export async function releaseAmountClaims(
  tx: Client,
  sessionId: string,
  at: Date,
  keep?: { asset: AssetTicker; network: string },
): Promise<void> {
  if (keep) {
    await tx.$executeRaw`
      UPDATE payment_amount_claims SET released_at = ${at}
       WHERE session_id = ${sessionId}::uuid AND released_at IS NULL
         AND NOT (asset = ${keep.asset} AND network = ${keep.network})`;
  } else {
    await tx.$executeRaw`
      UPDATE payment_amount_claims SET released_at = ${at}
       WHERE session_id = ${sessionId}::uuid AND released_at IS NULL`;
  }
}

/**
 * Gives a session a reorganisation reopened (paid → partial or waiting_payment) back the unique
 * amounts it was paid with exactly, released when it was paid: its payer may send that amount
 * again (its own claim, if still reserved after the release, is taken back). An amount another session was
 * given in between stays that session's (the primary key):
 * the transfer that paid this one still comes back to it when re-included (src/db/payment-credits.ts).
 */
export async function reclaimExactAmounts(tx: Client, sessionId: string): Promise<void> {
  await tx.$executeRaw`
    INSERT INTO payment_amount_claims (network, wallet_address, asset, amount, session_id)
    SELECT DISTINCT p.network, p.to_address, p.asset, p.amount, p.session_id FROM payments p
     WHERE p.session_id = ${sessionId}::uuid AND p.attribution = 'exact_amount'
    ON CONFLICT (network, wallet_address, asset, amount) DO UPDATE SET released_at = NULL
     WHERE payment_amount_claims.session_id = EXCLUDED.session_id`;
}

/**
 * docs/payment-rules.md, rule 4: deletes the released claims (their amounts free for other sessions
 * again) that no unscanned transfer can still be meant for: every network of the session that a
 * watcher scanned in its life is scanned past the release, the condition expiry waits for
 * (src/db/expiry-holds.ts), or KASSA_INFLIGHT_GRACE_MINUTES have passed since the release.
 */
export async function purgeReleasedAmountClaims(tx: Client, now: Date, graceMinutes: number): Promise<number> {
  const graceEndedFor = new Date(now.getTime() - graceMinutes * 60_000);
  return tx.$executeRaw`
    DELETE FROM payment_amount_claims a USING checkout_sessions s
     WHERE s.id = a.session_id AND a.released_at IS NOT NULL
       AND (a.released_at <= ${graceEndedFor} OR NOT ${chainBehindSql(graceMinutes, Prisma.sql`a.released_at`)})`;
}

/**
 * The open session whose claimed amount this transfer is, exactly, and that it may pay:
 * created before the block (less the clock skew), asset and chain not locked to others,
 * and the claim held when the block was mined (a claim released since still counts).
 */
export async function exactAmountOwner(tx: Client, transfer: ChainTransfer): Promise<string | null> {
  const createdBy = new Date(transfer.blockTime.getTime() + PAYMENT_CLOCK_SKEW_MS);
  const rows = await tx.$queryRaw<Array<{ session_id: string }>>`
    SELECT c.session_id FROM payment_amount_claims c
      JOIN checkout_sessions s ON s.id = c.session_id
     WHERE c.network = ${transfer.network} AND c.wallet_address = ${transfer.to} AND c.asset = ${transfer.asset}
       AND c.amount = ${transfer.amount.toFixed()}::numeric
       AND (c.released_at IS NULL OR c.released_at > ${transfer.blockTime})
       AND s.status::text = ANY(${OPEN}) AND s.created_at <= ${createdBy}
       AND (s.crypto_currency IS NULL OR s.crypto_currency = ${transfer.asset})
       AND (s.chain_id IS NULL OR s.chain_id = ${transfer.chainId})
     LIMIT 1`;
  return rows[0]?.session_id ?? null;
}
