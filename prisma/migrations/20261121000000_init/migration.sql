-- CreateEnum
CREATE TYPE "checkout_session_status" AS ENUM ('pending', 'waiting_payment', 'partial', 'paid', 'expired', 'failed');

-- CreateTable
CREATE TABLE "organisations" (
    "id" UUID NOT NULL,
    "name" TEXT NOT NULL,
    "underpayment_tolerance_percent" DECIMAL(5,2) NOT NULL DEFAULT 0,
    "late_payment_window_minutes" INTEGER NOT NULL DEFAULT 1440,
    "deleted_at" TIMESTAMPTZ(3),
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "organisations_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "organisation_wallets" (
    "organisation_id" UUID NOT NULL,
    "network" TEXT NOT NULL,
    "address" TEXT NOT NULL,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "organisation_wallets_pkey" PRIMARY KEY ("organisation_id","network")
);

-- CreateTable
CREATE TABLE "api_keys" (
    "id" UUID NOT NULL,
    "organisation_id" UUID NOT NULL,
    "public_key" TEXT NOT NULL,
    "secret_ciphertext" TEXT NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "expires_at" TIMESTAMPTZ(3),
    "revoked_at" TIMESTAMPTZ(3),
    "last_used_at" TIMESTAMPTZ(3),
    "rotated_from_id" UUID,

    CONSTRAINT "api_keys_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "checkout_sessions" (
    "id" UUID NOT NULL,
    "organisation_id" UUID NOT NULL,
    "status" "checkout_session_status" NOT NULL,
    "source" TEXT NOT NULL,
    "from_payment_link" BOOLEAN NOT NULL DEFAULT false,
    "anonymous" BOOLEAN NOT NULL DEFAULT false,
    "requires_payer_identity" BOOLEAN NOT NULL DEFAULT false,
    "identity_options" TEXT[] DEFAULT ARRAY[]::TEXT[],
    "product_payment_link_id" UUID,
    "owner_user_id" UUID,
    "fiat_currency" TEXT NOT NULL,
    "total_amount_fiat" DECIMAL(38,8) NOT NULL,
    "crypto_currency" TEXT,
    "total_amount_crypto" DECIMAL(38,8),
    "supported_networks" TEXT[],
    "expires_at" TIMESTAMPTZ(3) NOT NULL,
    "overpaid" BOOLEAN NOT NULL DEFAULT false,
    "bound_tx_hash" TEXT,
    "bound_at" TIMESTAMPTZ(3),
    "payer_wallet_address" TEXT,
    "chain_id" TEXT,
    "failure_reason" TEXT,
    "user_id" TEXT NOT NULL,
    "user_email" TEXT,
    "user_telegram_id" TEXT,
    "user_username" TEXT,
    "metadata" JSONB NOT NULL DEFAULT '{}',
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "checkout_sessions_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "checkout_session_items" (
    "session_id" UUID NOT NULL,
    "position" INTEGER NOT NULL,
    "name" TEXT NOT NULL,
    "quantity" INTEGER NOT NULL,
    "unit_price" DECIMAL(38,8) NOT NULL,
    "total_price" DECIMAL(38,8) NOT NULL,
    "product_id" TEXT,

    CONSTRAINT "checkout_session_items_pkey" PRIMARY KEY ("session_id","position")
);

-- CreateTable
CREATE TABLE "checkout_session_quotes" (
    "session_id" UUID NOT NULL,
    "position" INTEGER NOT NULL,
    "ticker" TEXT NOT NULL,
    "asset_id" TEXT NOT NULL,
    "unit_price_fiat" DECIMAL(38,8) NOT NULL,
    "amount" DECIMAL(38,8) NOT NULL,
    "rate_source" TEXT NOT NULL,
    "rated_at" TIMESTAMPTZ(3) NOT NULL,
    "rounding" TEXT NOT NULL,

    CONSTRAINT "checkout_session_quotes_pkey" PRIMARY KEY ("session_id","ticker")
);

-- CreateTable
CREATE TABLE "checkout_session_networks" (
    "session_id" UUID NOT NULL,
    "position" INTEGER NOT NULL,
    "network" TEXT NOT NULL,
    "chain_id" TEXT NOT NULL,
    "wallet_address" TEXT NOT NULL,

    CONSTRAINT "checkout_session_networks_pkey" PRIMARY KEY ("session_id","network")
);

-- CreateTable
CREATE TABLE "checkout_session_status_history" (
    "id" BIGSERIAL NOT NULL,
    "session_id" UUID NOT NULL,
    "from_status" "checkout_session_status",
    "to_status" "checkout_session_status" NOT NULL,
    "cause" TEXT NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "checkout_session_status_history_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "idempotency_keys" (
    "organisation_id" UUID NOT NULL,
    "key" TEXT NOT NULL,
    "request_hash" TEXT NOT NULL,
    "session_id" UUID NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "idempotency_keys_pkey" PRIMARY KEY ("organisation_id","key")
);

-- CreateTable
CREATE TABLE "outbox_events" (
    "id" UUID NOT NULL,
    "seq" BIGSERIAL NOT NULL,
    "organisation_id" UUID NOT NULL,
    "session_id" UUID,
    "type" TEXT NOT NULL,
    "payload" JSONB NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "outbox_events_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE UNIQUE INDEX "api_keys_public_key_key" ON "api_keys"("public_key");

-- CreateIndex
CREATE INDEX "api_keys_organisation_id_idx" ON "api_keys"("organisation_id");

-- CreateIndex
CREATE UNIQUE INDEX "checkout_sessions_bound_tx_hash_key" ON "checkout_sessions"("bound_tx_hash");

-- CreateIndex
CREATE INDEX "checkout_sessions_organisation_id_created_at_idx" ON "checkout_sessions"("organisation_id", "created_at");

-- CreateIndex
CREATE INDEX "checkout_sessions_status_expires_at_idx" ON "checkout_sessions"("status", "expires_at");

-- CreateIndex
CREATE INDEX "checkout_session_networks_wallet_address_idx" ON "checkout_session_networks"("wallet_address");

-- CreateIndex
CREATE INDEX "checkout_session_status_history_session_id_idx" ON "checkout_session_status_history"("session_id");

-- CreateIndex
CREATE INDEX "idempotency_keys_created_at_idx" ON "idempotency_keys"("created_at");

-- CreateIndex
CREATE UNIQUE INDEX "outbox_events_seq_key" ON "outbox_events"("seq");

-- CreateIndex
CREATE INDEX "outbox_events_organisation_id_seq_idx" ON "outbox_events"("organisation_id", "seq");

-- CreateIndex
CREATE INDEX "outbox_events_session_id_seq_idx" ON "outbox_events"("session_id", "seq");

-- AddForeignKey
ALTER TABLE "organisation_wallets" ADD CONSTRAINT "organisation_wallets_organisation_id_fkey" FOREIGN KEY ("organisation_id") REFERENCES "organisations"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "api_keys" ADD CONSTRAINT "api_keys_organisation_id_fkey" FOREIGN KEY ("organisation_id") REFERENCES "organisations"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "checkout_sessions" ADD CONSTRAINT "checkout_sessions_organisation_id_fkey" FOREIGN KEY ("organisation_id") REFERENCES "organisations"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "checkout_session_items" ADD CONSTRAINT "checkout_session_items_session_id_fkey" FOREIGN KEY ("session_id") REFERENCES "checkout_sessions"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "checkout_session_quotes" ADD CONSTRAINT "checkout_session_quotes_session_id_fkey" FOREIGN KEY ("session_id") REFERENCES "checkout_sessions"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "checkout_session_networks" ADD CONSTRAINT "checkout_session_networks_session_id_fkey" FOREIGN KEY ("session_id") REFERENCES "checkout_sessions"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "checkout_session_status_history" ADD CONSTRAINT "checkout_session_status_history_session_id_fkey" FOREIGN KEY ("session_id") REFERENCES "checkout_sessions"("id") ON DELETE CASCADE ON UPDATE CASCADE;
