-- Indexes for the dashboard's sessions list filters (docs/dashboard.md#sessions-list), so a first filtered page
-- stays fast with millions of sessions (docs/benchmarks.md): status, payer, payer wallet, transaction, metadata.

CREATE INDEX "checkout_sessions_organisation_id_status_created_at_idx"
    ON "checkout_sessions"("organisation_id", "status", "created_at");
CREATE INDEX "checkout_sessions_organisation_id_user_email_idx"
    ON "checkout_sessions"("organisation_id", lower("user_email"));
CREATE INDEX "checkout_sessions_organisation_id_user_id_idx"
    ON "checkout_sessions"("organisation_id", "user_id");
CREATE INDEX "checkout_sessions_organisation_id_payer_wallet_idx"
    ON "checkout_sessions"("organisation_id", lower("payer_wallet_address"));
-- `key=value` metadata filters are containment (@>), which jsonb_path_ops answers.
CREATE INDEX "checkout_sessions_metadata_idx" ON "checkout_sessions" USING GIN ("metadata" jsonb_path_ops);

CREATE INDEX "payments_tx_hash_idx" ON "payments"("tx_hash");
CREATE INDEX "payments_from_address_idx" ON "payments"(lower("from_address"));
CREATE INDEX "checkout_session_transactions_tx_hash_idx" ON "checkout_session_transactions"("tx_hash");
CREATE INDEX "checkout_session_transactions_payer_wallet_idx"
    ON "checkout_session_transactions"(lower("payer_wallet_address"));
