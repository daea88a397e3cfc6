-- Issue 12, found by review: a link session's user.id was an unkeyed hash of the organisation id and
-- the payer's identity, so anyone who knew an organisation id could confirm a guessed e-mail. It is
-- now an HMAC under a random secret of the installation (README "Payment links"). The secret is
-- made by the first instance that needs it (src/db/payment-link.store.ts: an insert that does
-- nothing when another instance won the race) and never changes, so ids stay the same across
-- restarts, instances on this database and master key rotations.

-- CreateTable
CREATE TABLE "installation_secrets" (
    "name" TEXT NOT NULL,
    "secret" BYTEA NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "installation_secrets_pkey" PRIMARY KEY ("name")
);
