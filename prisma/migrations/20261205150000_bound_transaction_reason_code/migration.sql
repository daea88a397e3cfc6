-- The stable code of a rejected bound transaction's reason (src/domain/reason-codes.ts), beside its text: code
-- branches on the code, never on the text. Rows rejected before the column existed get the code their text begins with.

ALTER TABLE "checkout_session_transactions" ADD COLUMN "reason_code" TEXT;

UPDATE "checkout_session_transactions"
   SET "reason_code" = CASE
         WHEN "reason" LIKE 'not mined:%' THEN 'not_mined'
         WHEN "reason" LIKE 'wrong chain:%' THEN 'wrong_chain'
         WHEN "reason" LIKE 'dropped:%' THEN 'dropped'
         WHEN "reason" LIKE 'reverted:%' THEN 'reverted'
         WHEN "reason" LIKE 'mined before this checkout session was created:%' THEN 'tx_mined_before_session'
         WHEN "reason" LIKE 'wrong asset:%' THEN 'wrong_asset'
         WHEN "reason" LIKE 'wrong sender:%' THEN 'wrong_sender'
         WHEN "reason" LIKE 'wrong recipient:%' THEN 'wrong_recipient'
         WHEN "reason" LIKE 'no payment:%' THEN 'no_payment'
         WHEN "reason" LIKE 'too small:%' THEN 'bind_too_small'
         WHEN "reason" LIKE 'contested:%' THEN 'tx_contested'
         WHEN "reason" LIKE 'already credited:%' THEN 'tx_already_credited'
         WHEN "reason" LIKE 'superseded:%' THEN 'superseded'
       END
 WHERE "reason" IS NOT NULL;
