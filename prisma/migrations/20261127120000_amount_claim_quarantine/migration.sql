-- Found by review: re-pricing a quote gave its unique amount back at once, while a transfer of
-- that amount, mined while the quote stood, could still be unscanned; a session created next took
-- the amount and the scan credited the transfer to it (docs/payment-rules.md, rule 4). A released
-- claim now stays in place with the time it was released: it still matches a transfer mined
-- before that time, and no other session can take its amount (the primary key) until every
-- watcher of its network has scanned past it, when src/db/amount-claims.ts deletes it.

-- AlterTable
ALTER TABLE "payment_amount_claims" ADD COLUMN "released_at" TIMESTAMPTZ(3);
