-- Payment detection (issue 4): payments seen on chain, scan cursors, block hashes for reorgs.

-- AlterTable
ALTER TABLE "checkout_sessions" ADD COLUMN "amount_received" DECIMAL(78,18) NOT NULL DEFAULT 0,
ADD COLUMN "payments_changed_at" TIMESTAMPTZ(3),
ADD COLUMN "bound_tx_checked_at" TIMESTAMPTZ(3);

-- CreateTable
CREATE TABLE "payments" (
    "id" UUID NOT NULL,
    "network" TEXT NOT NULL,
    "chain_id" TEXT NOT NULL,
    "tx_hash" TEXT NOT NULL,
    "log_index" INTEGER NOT NULL,
    "from_address" TEXT NOT NULL,
    "to_address" TEXT NOT NULL,
    "asset" TEXT NOT NULL,
    "token_address" TEXT,
    "base_units" DECIMAL(78,0) NOT NULL,
    "amount" DECIMAL(78,18) NOT NULL,
    "block_number" BIGINT NOT NULL,
    "block_hash" TEXT NOT NULL,
    "confirmations" INTEGER NOT NULL DEFAULT 0,
    "state" TEXT NOT NULL,
    "session_id" UUID,
    "attribution" TEXT,
    "late" BOOLEAN NOT NULL DEFAULT false,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "payments_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "chain_cursors" (
    "network" TEXT NOT NULL,
    "chain_id" TEXT NOT NULL,
    "next_block" BIGINT NOT NULL,
    "leader" TEXT,
    "lease_until" TIMESTAMPTZ(3),
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "chain_cursors_pkey" PRIMARY KEY ("network")
);

-- CreateTable
CREATE TABLE "chain_blocks" (
    "network" TEXT NOT NULL,
    "number" BIGINT NOT NULL,
    "hash" TEXT NOT NULL,

    CONSTRAINT "chain_blocks_pkey" PRIMARY KEY ("network","number")
);

-- CreateIndex
CREATE UNIQUE INDEX "payments_chain_id_tx_hash_log_index_key" ON "payments"("chain_id", "tx_hash", "log_index");

-- CreateIndex
CREATE INDEX "payments_session_id_idx" ON "payments"("session_id");

-- CreateIndex
CREATE INDEX "payments_network_state_block_number_idx" ON "payments"("network", "state", "block_number");

-- CreateIndex
CREATE INDEX "checkout_sessions_payments_changed_at_idx" ON "checkout_sessions"("payments_changed_at");

-- AddForeignKey
ALTER TABLE "payments" ADD CONSTRAINT "payments_session_id_fkey" FOREIGN KEY ("session_id") REFERENCES "checkout_sessions"("id") ON DELETE SET NULL ON UPDATE CASCADE;
