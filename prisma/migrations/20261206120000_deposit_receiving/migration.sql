-- Deposit addresses (issue 34, docs/decisions/0028-deposit-addresses.md): how an organisation receives money, kept by
-- each session as it was at creation, the wallet each deposit address leads to, and what `kassa collect` moved.

CREATE TYPE "receiving_mode" AS ENUM ('shared_wallet', 'deposit_addresses');

ALTER TABLE "organisations" ADD COLUMN "receiving_mode" "receiving_mode" NOT NULL DEFAULT 'shared_wallet';

ALTER TABLE "checkout_sessions" ADD COLUMN "receiving_mode" "receiving_mode" NOT NULL DEFAULT 'shared_wallet';

-- In deposit mode `wallet_address` is the session's deposit address and this is the organisation's wallet it was
-- derived for (part of its CREATE2 salt): the only place its money can go, whatever the organisation's wallet is now.
ALTER TABLE "checkout_session_networks" ADD COLUMN "deposit_destination" TEXT;

-- One collect transaction Kassa saw mined, and what it moved per session and asset.
CREATE TABLE "deposit_collections" (
    "id" UUID NOT NULL,
    "organisation_id" UUID NOT NULL,
    "network" TEXT NOT NULL,
    "chain_id" TEXT NOT NULL,
    "destination" TEXT NOT NULL,
    "tx_hash" TEXT NOT NULL,
    "block_number" BIGINT NOT NULL,
    "gas_used" BIGINT NOT NULL,
    "collected_at" TIMESTAMPTZ(3) NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "deposit_collections_pkey" PRIMARY KEY ("id"),
    CONSTRAINT "deposit_collections_organisation_id_fkey" FOREIGN KEY ("organisation_id")
        REFERENCES "organisations"("id") ON DELETE RESTRICT ON UPDATE CASCADE
);
CREATE UNIQUE INDEX "deposit_collections_network_tx_hash_key" ON "deposit_collections"("network", "tx_hash");
CREATE INDEX "deposit_collections_organisation_id_collected_at_idx" ON "deposit_collections"("organisation_id", "collected_at");

CREATE TABLE "deposit_collection_items" (
    "collection_id" UUID NOT NULL,
    "session_id" UUID NOT NULL,
    "deposit_address" TEXT NOT NULL,
    "asset" TEXT NOT NULL,
    -- Null for the native coin.
    "token_address" TEXT,
    "amount" DECIMAL(78,18) NOT NULL,
    "base_units" DECIMAL(78,0) NOT NULL,

    CONSTRAINT "deposit_collection_items_pkey" PRIMARY KEY ("collection_id", "session_id", "asset"),
    CONSTRAINT "deposit_collection_items_collection_id_fkey" FOREIGN KEY ("collection_id")
        REFERENCES "deposit_collections"("id") ON DELETE CASCADE ON UPDATE CASCADE,
    CONSTRAINT "deposit_collection_items_session_id_fkey" FOREIGN KEY ("session_id")
        REFERENCES "checkout_sessions"("id") ON DELETE RESTRICT ON UPDATE CASCADE
);
CREATE INDEX "deposit_collection_items_session_id_idx" ON "deposit_collection_items"("session_id");
