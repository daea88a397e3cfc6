-- A partially paid session asks for the rest as a unique amount of its own (docs/payment-rules.md, rule 4:
-- src/db/amount-claims.ts, claimRestAmount). Before, the page asked for the plain difference, which could be
-- another open session's unique amount on the same wallet: the payer's top-up then paid that other session.
ALTER TABLE "checkout_sessions" ADD COLUMN "rest_amount" DECIMAL(78,18);
