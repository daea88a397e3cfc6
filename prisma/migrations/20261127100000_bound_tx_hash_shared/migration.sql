-- One transaction may pay several sessions, one Transfer log each (an exchange's batched
-- withdrawal to one merchant's wallet: docs/payment-rules.md, rule 3), so several sessions may
-- name it as their bound transaction. What keeps a transfer from paying twice is the unique
-- (chain_id, tx_hash, log_index) row in payments, not this column.
DROP INDEX "checkout_sessions_bound_tx_hash_key";
CREATE INDEX "checkout_sessions_bound_tx_hash_idx" ON "checkout_sessions"("bound_tx_hash");
