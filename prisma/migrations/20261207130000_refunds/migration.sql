-- Refunds (issue 36, docs/decisions/0032-refunds.md): money a merchant returns from a session, in the asset and on
-- the network it came in on, to an address the merchant gives or the payer submits through a claim link.

CREATE TYPE "refund_kind" AS ENUM ('full', 'excess', 'part');
CREATE TYPE "refund_basis" AS ENUM ('token', 'fiat');
CREATE TYPE "refund_status" AS ENUM ('awaiting_destination', 'ready', 'sent', 'confirmed', 'cancelled', 'expired', 'failed');
CREATE TYPE "refund_destination_source" AS ENUM ('merchant', 'claim', 'claim_signed');

CREATE TABLE "refunds" (
    "id" UUID NOT NULL,
    "organisation_id" UUID NOT NULL,
    "session_id" UUID NOT NULL,
    "kind" "refund_kind" NOT NULL,
    "basis" "refund_basis" NOT NULL DEFAULT 'token',
    "status" "refund_status" NOT NULL,
    "network" TEXT NOT NULL,
    "chain_id" TEXT NOT NULL,
    "asset" TEXT NOT NULL,
    -- Null for the native coin.
    "token_address" TEXT,
    "decimals" INTEGER NOT NULL,
    "amount" DECIMAL(78,18) NOT NULL,
    "base_units" DECIMAL(78,0) NOT NULL,
    -- Fiat basis only: the amount asked in the session's currency and the rate it was converted at.
    "fiat_currency" TEXT,
    "amount_fiat" DECIMAL(38,8),
    "unit_price_fiat" DECIMAL(38,8),
    "rate_source" TEXT,
    "rated_at" TIMESTAMPTZ(3),
    -- Lower-case; null until the merchant or the payer gives it.
    "destination" TEXT,
    "destination_source" "refund_destination_source",
    "destination_at" TIMESTAMPTZ(3),
    -- claim_signed: the EIP-191 message, its signature and the payer wallet that made it.
    "proof_message" TEXT,
    "proof_signature" TEXT,
    "proof_address" TEXT,
    -- The claim link /r/<id> takes one address until then; null when the merchant gave the destination.
    "claim_expires_at" TIMESTAMPTZ(3),
    "tx_hash" TEXT,
    "sent_from" TEXT,
    "sent_at" TIMESTAMPTZ(3),
    "block_number" BIGINT,
    "block_hash" TEXT,
    "log_index" INTEGER,
    "mined_at" TIMESTAMPTZ(3),
    "confirmations" INTEGER NOT NULL DEFAULT 0,
    "confirmed_at" TIMESTAMPTZ(3),
    "failure_reason" TEXT,
    "note" TEXT,
    "idempotency_key" TEXT,
    "request_hash" TEXT,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "refunds_pkey" PRIMARY KEY ("id"),
    CONSTRAINT "refunds_organisation_id_fkey" FOREIGN KEY ("organisation_id")
        REFERENCES "organisations"("id") ON DELETE RESTRICT ON UPDATE CASCADE,
    CONSTRAINT "refunds_session_id_fkey" FOREIGN KEY ("session_id")
        REFERENCES "checkout_sessions"("id") ON DELETE RESTRICT ON UPDATE CASCADE
);
CREATE INDEX "refunds_session_id_idx" ON "refunds"("session_id");
CREATE INDEX "refunds_organisation_id_created_at_idx" ON "refunds"("organisation_id", "created_at");
CREATE INDEX "refunds_status_claim_expires_at_idx" ON "refunds"("status", "claim_expires_at");
CREATE INDEX "refunds_network_status_idx" ON "refunds"("network", "status");
CREATE INDEX "refunds_chain_id_tx_hash_idx" ON "refunds"("chain_id", "tx_hash");
CREATE UNIQUE INDEX "refunds_organisation_id_idempotency_key_key" ON "refunds"("organisation_id", "idempotency_key");

-- Every change of a refund's status, with its cause.
CREATE TABLE "refund_status_history" (
    "id" BIGSERIAL NOT NULL,
    "refund_id" UUID NOT NULL,
    "from_status" "refund_status",
    "to_status" "refund_status" NOT NULL,
    "cause" TEXT NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "refund_status_history_pkey" PRIMARY KEY ("id"),
    CONSTRAINT "refund_status_history_refund_id_fkey" FOREIGN KEY ("refund_id")
        REFERENCES "refunds"("id") ON DELETE CASCADE ON UPDATE CASCADE
);
CREATE INDEX "refund_status_history_refund_id_idx" ON "refund_status_history"("refund_id");
