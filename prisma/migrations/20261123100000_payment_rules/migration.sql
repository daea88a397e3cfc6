-- Payment rules (issue 9): a transfer pays only the session it was meant for,
-- exact payments are judged exactly, on time means sent on time, quotes expire.

-- A receiving wallet belongs to one organisation per network, so a transfer can
-- only ever be matched to sessions of one organisation. Stop with a clear message
-- when existing data breaks the rule, instead of an index error.
DO $$
DECLARE clash RECORD;
BEGIN
    SELECT network, address INTO clash FROM "organisation_wallets" GROUP BY network, address HAVING count(*) > 1 LIMIT 1;
    IF FOUND THEN
        RAISE EXCEPTION 'organisations share the receiving wallet % on network %: give each organisation its own wallet (kassa wallets set) before upgrading', clash.address, clash.network;
    END IF;
END $$;

-- CreateIndex
CREATE UNIQUE INDEX "organisation_wallets_network_address_key" ON "organisation_wallets"("network", "address");

-- AlterTable: the block's own time decides whether a transfer came after the session was created and before it expired.
ALTER TABLE "payments" ADD COLUMN "block_time" TIMESTAMPTZ(3);
UPDATE "payments" SET "block_time" = "created_at";
ALTER TABLE "payments" ALTER COLUMN "block_time" SET NOT NULL;

-- AlterTable
ALTER TABLE "checkout_sessions" ADD COLUMN "amount_received_late" DECIMAL(78,18) NOT NULL DEFAULT 0,
ADD COLUMN "amount_pending" DECIMAL(78,18) NOT NULL DEFAULT 0,
ADD COLUMN "quoted_at" TIMESTAMPTZ(3);
UPDATE "checkout_sessions" SET "quoted_at" = "created_at";
ALTER TABLE "checkout_sessions" ALTER COLUMN "quoted_at" SET NOT NULL;

-- AlterTable: how each quoted amount was made unique among the open sessions on its wallets.
ALTER TABLE "checkout_session_quotes" ADD COLUMN "base_amount" DECIMAL(38,8),
ADD COLUMN "amount_step" DECIMAL(38,8) NOT NULL DEFAULT 0.00000001,
ADD COLUMN "offset_steps" INTEGER NOT NULL DEFAULT 0;
UPDATE "checkout_session_quotes" SET "base_amount" = "amount";
ALTER TABLE "checkout_session_quotes" ALTER COLUMN "base_amount" SET NOT NULL;

-- AlterTable: when the watcher last read the chain head and scanned up to it.
ALTER TABLE "chain_cursors" ADD COLUMN "caught_up_at" TIMESTAMPTZ(3);

-- CreateTable: the transactions payers bound to a session. A bind is a hint: each
-- is verified from its own receipt before anything is credited.
CREATE TABLE "checkout_session_transactions" (
    "id" UUID NOT NULL,
    "session_id" UUID NOT NULL,
    "network" TEXT NOT NULL,
    "chain_id" TEXT NOT NULL,
    "tx_hash" TEXT NOT NULL,
    "crypto_currency" TEXT NOT NULL,
    "payer_wallet_address" TEXT,
    "state" TEXT NOT NULL DEFAULT 'unverified',
    "reason" TEXT,
    "seen_on_chain_at" TIMESTAMPTZ(3),
    "checked_at" TIMESTAMPTZ(3),
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "checkout_session_transactions_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE UNIQUE INDEX "checkout_session_transactions_session_id_chain_id_tx_hash_key" ON "checkout_session_transactions"("session_id", "chain_id", "tx_hash");

-- CreateIndex
CREATE INDEX "checkout_session_transactions_chain_id_tx_hash_idx" ON "checkout_session_transactions"("chain_id", "tx_hash");

-- CreateIndex
CREATE INDEX "checkout_session_transactions_chain_id_state_idx" ON "checkout_session_transactions"("chain_id", "state");

-- AddForeignKey
ALTER TABLE "checkout_session_transactions" ADD CONSTRAINT "checkout_session_transactions_session_id_fkey" FOREIGN KEY ("session_id") REFERENCES "checkout_sessions"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- Bound transactions of the old rules become verified or unverified candidates.
INSERT INTO "checkout_session_transactions" ("id", "session_id", "network", "chain_id", "tx_hash", "crypto_currency", "payer_wallet_address", "state", "seen_on_chain_at", "checked_at", "created_at", "updated_at")
SELECT gen_random_uuid(), s."id", n."network", s."chain_id", s."bound_tx_hash", s."crypto_currency", s."payer_wallet_address",
       CASE WHEN s."bound_tx_checked_at" IS NOT NULL THEN 'verified' WHEN s."status" = 'failed' THEN 'rejected' ELSE 'unverified' END,
       s."bound_tx_checked_at", s."bound_tx_checked_at", COALESCE(s."bound_at", s."updated_at"), s."updated_at"
  FROM "checkout_sessions" s
  JOIN "checkout_session_networks" n ON n."session_id" = s."id" AND n."chain_id" = s."chain_id"
 WHERE s."bound_tx_hash" IS NOT NULL AND s."crypto_currency" IS NOT NULL;

-- CreateTable: one row per (network, wallet, asset, amount) an open session may be paid with,
-- so an exact transfer matches one session only. Released when the session closes.
CREATE TABLE "payment_amount_claims" (
    "network" TEXT NOT NULL,
    "wallet_address" TEXT NOT NULL,
    "asset" TEXT NOT NULL,
    "amount" DECIMAL(38,8) NOT NULL,
    "session_id" UUID NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "payment_amount_claims_pkey" PRIMARY KEY ("network","wallet_address","asset","amount")
);

-- CreateIndex
CREATE INDEX "payment_amount_claims_session_id_idx" ON "payment_amount_claims"("session_id");

-- CreateTable: each re-pricing of a session's quote after its lifetime, per asset.
CREATE TABLE "checkout_session_quote_changes" (
    "id" BIGSERIAL NOT NULL,
    "session_id" UUID NOT NULL,
    "ticker" TEXT NOT NULL,
    "old_unit_price_fiat" DECIMAL(38,8) NOT NULL,
    "new_unit_price_fiat" DECIMAL(38,8) NOT NULL,
    "old_amount" DECIMAL(38,8) NOT NULL,
    "new_amount" DECIMAL(38,8) NOT NULL,
    "old_quoted_at" TIMESTAMPTZ(3) NOT NULL,
    "rate_source" TEXT NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "checkout_session_quote_changes_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE INDEX "checkout_session_quote_changes_session_id_idx" ON "checkout_session_quote_changes"("session_id");

-- AddForeignKey
ALTER TABLE "checkout_session_quote_changes" ADD CONSTRAINT "checkout_session_quote_changes_session_id_fkey" FOREIGN KEY ("session_id") REFERENCES "checkout_sessions"("id") ON DELETE CASCADE ON UPDATE CASCADE;
