-- Found by review: a session reopened by a reorganisation takes back the unique amount it was paid
-- with exactly, unless another session was given that amount in between. Its page still asked for
-- that amount, so its payer's new transfer of it (the first one replaced, never re-included) paid
-- the other session. The reopened session now shares the claim: while a share stands, a transfer of
-- the amount pays neither session by amount and is recorded unattributed, and only one of the two
-- can bind it (docs/payment-rules.md, rule 4). A share is released when its session closes and
-- deleted once the network is scanned past that; when the claim's holder gives the amount up first,
-- the oldest share still standing takes the claim over, covering transfers mined from the holder's
-- release on (held_since; src/db/amount-claims.ts).

-- AlterTable
ALTER TABLE "payment_amount_claims" ADD COLUMN "held_since" TIMESTAMPTZ(3);

-- CreateTable
CREATE TABLE "payment_amount_shares" (
    "network" TEXT NOT NULL,
    "wallet_address" TEXT NOT NULL,
    "asset" TEXT NOT NULL,
    "amount" DECIMAL(38,8) NOT NULL,
    "session_id" UUID NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "released_at" TIMESTAMPTZ(3),

    CONSTRAINT "payment_amount_shares_pkey" PRIMARY KEY ("network","wallet_address","asset","amount","session_id")
);

-- CreateIndex
CREATE INDEX "payment_amount_shares_session_id_idx" ON "payment_amount_shares"("session_id");
