-- Issue 9, found by review: a receiving wallet belongs to one organisation per network for
-- good. organisation_wallets holds only each organisation's current wallet, and sessions keep
-- the wallet they were created with: after an organisation moved to a new wallet, another
-- could register the old one while the first one's sessions still watch it, and a transfer
-- could then match sessions of two organisations. wallet_owners remembers every wallet an
-- organisation ever had (and every wallet a session was created with); a trigger refuses
-- a wallet another organisation owns, so the rule holds against races too.

-- CreateTable
CREATE TABLE "wallet_owners" (
    "network" TEXT NOT NULL,
    "address" TEXT NOT NULL,
    "organisation_id" UUID NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "wallet_owners_pkey" PRIMARY KEY ("network","address")
);

-- CreateIndex
CREATE INDEX "wallet_owners_organisation_id_idx" ON "wallet_owners"("organisation_id");

-- AddForeignKey
ALTER TABLE "wallet_owners" ADD CONSTRAINT "wallet_owners_organisation_id_fkey" FOREIGN KEY ("organisation_id") REFERENCES "organisations"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- The wallets known so far: current ones first, then those only sessions remember (oldest session wins).
INSERT INTO "wallet_owners" ("network", "address", "organisation_id")
SELECT "network", lower("address"), "organisation_id" FROM "organisation_wallets"
ON CONFLICT DO NOTHING;

INSERT INTO "wallet_owners" ("network", "address", "organisation_id", "created_at")
SELECT DISTINCT ON (n."network", lower(n."wallet_address")) n."network", lower(n."wallet_address"), s."organisation_id", s."created_at"
  FROM "checkout_session_networks" n JOIN "checkout_sessions" s ON s."id" = n."session_id"
 ORDER BY n."network", lower(n."wallet_address"), s."created_at"
ON CONFLICT DO NOTHING;

CREATE FUNCTION "kassa_reserve_wallet"() RETURNS trigger
    LANGUAGE plpgsql AS $$
DECLARE
    owner UUID;
BEGIN
    INSERT INTO "wallet_owners" ("network", "address", "organisation_id")
    VALUES (NEW."network", lower(NEW."address"), NEW."organisation_id")
    ON CONFLICT ("network", "address") DO NOTHING;
    SELECT "organisation_id" INTO owner FROM "wallet_owners" WHERE "network" = NEW."network" AND "address" = lower(NEW."address");
    IF owner <> NEW."organisation_id" THEN
        RAISE EXCEPTION 'wallet % already receives payments for another organisation on %', lower(NEW."address"), NEW."network"
            USING ERRCODE = 'unique_violation', CONSTRAINT = 'wallet_owners_pkey';
    END IF;
    RETURN NEW;
END;
$$;

CREATE TRIGGER "organisation_wallets_reserve"
    BEFORE INSERT OR UPDATE OF "network", "address", "organisation_id" ON "organisation_wallets"
    FOR EACH ROW EXECUTE FUNCTION "kassa_reserve_wallet"();
