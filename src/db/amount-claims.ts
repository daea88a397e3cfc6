import type { Prisma } from '../generated/prisma/client.js';
import type { AssetTicker } from '../domain/assets.js';
import { OPEN_STATUSES } from '../domain/checkout-session.js';
import type { AmountClaimRequest, ChainTransfer } from '../domain/payment-ports.js';
import { PAYMENT_CLOCK_SKEW_MS } from '../domain/payments.js';

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

export async function releaseAmountClaims(
  tx: Client,
  sessionId: string,
  keep?: { asset: AssetTicker; network: string },
): Promise<void> {
  if (keep) {
    await tx.$executeRaw`
      DELETE FROM payment_amount_claims WHERE session_id = ${sessionId}::uuid AND NOT (asset = ${keep.asset}
        AND network = ${keep.network})`;
  } else {
    await tx.$executeRaw`DELETE FROM payment_amount_claims WHERE session_id = ${sessionId}::uuid`;
  }
}

/**
 * Gives a session a reorganisation reopened (paid → partial or waiting_payment) back the unique
 * amounts it was paid with exactly, released when it was paid: its payer may send that amount
 * again. An amount another session was given in between stays that session's (the primary key):
 * the transfer that paid this one still comes back to it when re-included (src/db/payment-credits.ts).
 */
export async function reclaimExactAmounts(tx: Client, sessionId: string): Promise<void> {
  await tx.$executeRaw`
    INSERT INTO payment_amount_claims (network, wallet_address, asset, amount, session_id)
    SELECT DISTINCT p.network, p.to_address, p.asset, p.amount, p.session_id FROM payments p
     WHERE p.session_id = ${sessionId}::uuid AND p.attribution = 'exact_amount'
    ON CONFLICT DO NOTHING`;
}

/**
 * The open session whose claimed amount this transfer is, exactly, and that it may pay:
 * created before the block (less the clock skew), asset and chain not locked to others.
 */
export async function exactAmountOwner(tx: Client, transfer: ChainTransfer): Promise<string | null> {
  const createdBy = new Date(transfer.blockTime.getTime() + PAYMENT_CLOCK_SKEW_MS);
  const rows = await tx.$queryRaw<Array<{ session_id: string }>>`
    SELECT c.session_id FROM payment_amount_claims c
      JOIN checkout_sessions s ON s.id = c.session_id
     WHERE c.network = ${transfer.network} AND c.wallet_address = ${transfer.to} AND c.asset = ${transfer.asset}
       AND c.amount = ${transfer.amount.toFixed()}::numeric
       AND s.status::text = ANY(${OPEN}) AND s.created_at <= ${createdBy}
       AND (s.crypto_currency IS NULL OR s.crypto_currency = ${transfer.asset})
       AND (s.chain_id IS NULL OR s.chain_id = ${transfer.chainId})
     LIMIT 1`;
  return rows[0]?.session_id ?? null;
}
