-- A payment link's use is a session of it paid or still open (docs/decisions/0016): `uses` counts both. A session
-- of a link that closes unpaid (expired, failed) from an open status gives its use back; a paid one keeps it, also
-- when a reorganisation reopens it (reopened, it is open and holds the use, which comes back only if it then
-- expires). The trigger runs in the transaction that changes the status, so the count and the status commit
-- together, on PostgreSQL and on the embedded database. Create's conditional UPDATE (uses < max_uses,
-- kassa_create_checkout_session) is unchanged: it now compares the sessions paid or open.

UPDATE "payment_links" l
   SET "uses" = (SELECT count(*) FROM "checkout_sessions" s
                  WHERE s."product_payment_link_id" = l."id"
                    AND s."status" IN ('pending', 'waiting_payment', 'partial', 'paid'));

CREATE FUNCTION "kassa_link_use_follows_status"() RETURNS TRIGGER
    LANGUAGE plpgsql AS $$
BEGIN
    UPDATE "payment_links" SET "uses" = greatest("uses" - 1, 0) WHERE "id" = NEW."product_payment_link_id";
    RETURN NULL;
END;
$$;

CREATE TRIGGER "checkout_sessions_link_uses"
    AFTER UPDATE OF "status" ON "checkout_sessions"
    FOR EACH ROW
    WHEN (NEW."product_payment_link_id" IS NOT NULL AND NEW."status" IN ('expired', 'failed')
          AND OLD."status" IN ('pending', 'waiting_payment', 'partial'))
    EXECUTE FUNCTION "kassa_link_use_follows_status"();
