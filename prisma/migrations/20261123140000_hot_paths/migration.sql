-- Issue 10: the hot paths. Two parts.
--
-- 1. Change announcements, so every instance can keep caches (sessions, API keys,
--    organisations) and drop an entry the moment any instance or the CLI changes it.
--    kassa_announce_change() raises NOTIFY on the channel (PostgreSQL: instances LISTEN)
--    and, where the session sets kassa.change_log = 'on' (the embedded database, where
--    notifications do not cross its socket connections), appends to kassa_change_log,
--    which the embedded server polls. NOTIFY and the insert are transactional: nobody
--    hears of a change before it commits.
--
-- 2. kassa_create_checkout_session(): the whole create in one statement (one round
--    trip, one commit): the request signature's single use, the Idempotency-Key, a payment link's use, the unique amounts,
--    the session with its items, quotes and networks, its history row and its outbox
--    event. kassa_claim_amount() is the unique-amount rule (README "Payment rules"),
--    shared with re-pricing.

-- CreateTable
CREATE TABLE "kassa_change_log" (
    "seq" BIGSERIAL NOT NULL,
    "channel" TEXT NOT NULL,
    "key" TEXT NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "kassa_change_log_pkey" PRIMARY KEY ("seq")
);

-- CreateIndex
CREATE INDEX "kassa_change_log_created_at_idx" ON "kassa_change_log"("created_at");

CREATE FUNCTION "kassa_announce_change"(p_channel TEXT, p_key TEXT) RETURNS void
    LANGUAGE plpgsql AS $$
BEGIN
    PERFORM pg_notify(p_channel, p_key);
    IF current_setting('kassa.change_log', true) = 'on' THEN
        INSERT INTO "kassa_change_log" ("channel", "key") VALUES (p_channel, p_key);
    END IF;
END;
$$;

-- Sessions: as before (20261121200000_graphql_live_updates), now through the announcement.
CREATE OR REPLACE FUNCTION "kassa_notify_checkout_session"() RETURNS trigger
    LANGUAGE plpgsql AS $$
BEGIN
    PERFORM "kassa_announce_change"('kassa_checkout_session', NEW."id"::text);
    RETURN NULL;
END;
$$;

-- API keys, by public key: what authentication reads (not last_used_at, which is informational).
CREATE FUNCTION "kassa_notify_api_key"() RETURNS trigger
    LANGUAGE plpgsql AS $$
BEGIN
    PERFORM "kassa_announce_change"('kassa_api_key', OLD."public_key");
    RETURN NULL;
END;
$$;

CREATE TRIGGER "api_keys_notify_change"
    AFTER UPDATE OF "public_key", "organisation_id", "secret_ciphertext", "expires_at", "revoked_at" OR DELETE ON "api_keys"
    FOR EACH ROW EXECUTE FUNCTION "kassa_notify_api_key"();

-- Organisations, by id: their name, policy, deletion and wallets (sessions show the name and policy too).
CREATE FUNCTION "kassa_notify_organisation"() RETURNS trigger
    LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'INSERT' THEN
        PERFORM "kassa_announce_change"('kassa_organisation', NEW."organisation_id"::text);
    ELSIF TG_TABLE_NAME = 'organisations' THEN
        PERFORM "kassa_announce_change"('kassa_organisation', OLD."id"::text);
    ELSE
        PERFORM "kassa_announce_change"('kassa_organisation', OLD."organisation_id"::text);
    END IF;
    RETURN NULL;
END;
$$;

CREATE TRIGGER "organisations_notify_change"
    AFTER UPDATE OR DELETE ON "organisations"
    FOR EACH ROW EXECUTE FUNCTION "kassa_notify_organisation"();

CREATE TRIGGER "organisation_wallets_notify_change"
    AFTER INSERT OR UPDATE OR DELETE ON "organisation_wallets"
    FOR EACH ROW EXECUTE FUNCTION "kassa_notify_organisation"();

-- The unique-amount rule: the smallest k < p_max_steps such that p_base + k × p_step is held
-- by no other session on any of the wallets (p_networks[i], p_wallets[i]), claimed on all of
-- them. The primary key decides races: an insert that meets a concurrent claim waits for it,
-- and a lost amount is given back and the next one tried. NULL when every amount is taken.
CREATE FUNCTION "kassa_claim_amount"(p_session UUID, p_asset TEXT, p_networks TEXT[], p_wallets TEXT[],
                                     p_base NUMERIC, p_step NUMERIC, p_max_steps INTEGER) RETURNS INTEGER
    LANGUAGE plpgsql AS $$
DECLARE
    wallet_count INTEGER := coalesce(array_length(p_networks, 1), 0);
    taken NUMERIC[];
    candidate NUMERIC;
    claimed INTEGER;
BEGIN
    IF wallet_count = 0 THEN
        RETURN 0;
    END IF;
    taken := ARRAY(
        SELECT DISTINCT c."amount"
          FROM unnest(p_networks, p_wallets) AS w("network", "wallet")
          JOIN "payment_amount_claims" c ON c."network" = w."network" AND c."wallet_address" = w."wallet"
         WHERE c."asset" = p_asset AND c."amount" >= p_base AND c."amount" < p_base + p_step * p_max_steps);
    FOR k IN 0 .. p_max_steps - 1 LOOP
        candidate := p_base + p_step * k;
        CONTINUE WHEN candidate = ANY(taken);
        INSERT INTO "payment_amount_claims" ("network", "wallet_address", "asset", "amount", "session_id")
        SELECT w."network", w."wallet", p_asset, candidate, p_session
          FROM unnest(p_networks, p_wallets) AS w("network", "wallet")
        ON CONFLICT DO NOTHING;
        GET DIAGNOSTICS claimed = ROW_COUNT;
        IF claimed = wallet_count THEN
            RETURN k;
        END IF;
        -- Another session holds this amount on one of the wallets: give ours back, try the next.
        DELETE FROM "payment_amount_claims" WHERE "session_id" = p_session AND "asset" = p_asset AND "amount" = candidate;
    END LOOP;
    RETURN NULL;
END;
$$;

-- The whole create (src/db/create-session.sql.ts builds `p`; its test holds the keys to schema.prisma):
--   p.session      the checkout_sessions row (every column, by column name)
--   p.items        checkout_session_items rows;  p.networks  checkout_session_networks rows
--   p.quotes       checkout_session_quotes rows at their base amounts
--   p.claims       per quote to make unique: position, ticker, base, step, networks[], wallets[], try
--   p.max_steps    the unique-amount cap
--   p.cause        the history row's cause
--   p.event        the outbox row; p.amount_paths[position] is where the quote's amount sits in its payload
--   p.signature    optional {api_key_id, signature, expires_at}: the merchant's signature, recorded as used
--   p.idempotency  optional {key, request_hash}
--   p.link         optional {id, now}: counts one use of the payment link, never beyond max_uses
-- Returns {"offsets": {position: k or null}}; {"replayed_signature": true} (nothing written) when the
-- signature was used before; {"replay": {request_hash, session_id}} when the Idempotency-Key is taken.
-- Raises SQLSTATE KL001 (nothing written) when the link takes no more payers.
CREATE FUNCTION "kassa_create_checkout_session"(p JSONB) RETURNS JSONB
    LANGUAGE plpgsql AS $$
DECLARE
    new_session UUID := (p->'session'->>'id')::uuid;
    new_organisation UUID := (p->'session'->>'organisation_id')::uuid;
    max_steps INTEGER := (p->>'max_steps')::integer;
    quotes JSONB := p->'quotes';
    payload JSONB := p->'event'->'payload';
    offsets JSONB := '{}';
    claim RECORD;
    step_count INTEGER;
    unique_amount NUMERIC;
    existing RECORD;
BEGIN
    IF p->'signature' IS NOT NULL AND jsonb_typeof(p->'signature') = 'object' THEN
        INSERT INTO "request_signatures" ("api_key_id", "signature", "expires_at")
        VALUES ((p->'signature'->>'api_key_id')::uuid, p->'signature'->>'signature', (p->'signature'->>'expires_at')::timestamptz)
        ON CONFLICT DO NOTHING;
        IF NOT FOUND THEN
            RETURN jsonb_build_object('replayed_signature', true);
        END IF;
    END IF;

    IF p->'idempotency' IS NOT NULL AND jsonb_typeof(p->'idempotency') = 'object' THEN
        INSERT INTO "idempotency_keys" ("organisation_id", "key", "request_hash", "session_id")
        VALUES (new_organisation, p->'idempotency'->>'key', p->'idempotency'->>'request_hash', new_session)
        ON CONFLICT DO NOTHING;
        IF NOT FOUND THEN
            SELECT k."request_hash", k."session_id" INTO existing
              FROM "idempotency_keys" k
             WHERE k."organisation_id" = new_organisation AND k."key" = p->'idempotency'->>'key';
            RETURN jsonb_build_object('replay', jsonb_build_object('request_hash', existing."request_hash", 'session_id', existing."session_id"));
        END IF;
    END IF;

    IF p->'link' IS NOT NULL AND jsonb_typeof(p->'link') = 'object' THEN
        UPDATE "payment_links" SET "uses" = "uses" + 1
         WHERE "id" = (p->'link'->>'id')::uuid AND "active"
           AND ("expires_at" IS NULL OR "expires_at" > (p->'link'->>'now')::timestamptz)
           AND ("max_uses" IS NULL OR "uses" < "max_uses");
        IF NOT FOUND THEN
            RAISE EXCEPTION 'payment link % takes no more payers', p->'link'->>'id' USING ERRCODE = 'KL001';
        END IF;
    END IF;

    -- The unique amounts. Each claim comes with the step to try first (p.claims[].try: the one after
    -- the last this instance handed out for that base, src/db/create-session.store.ts), all inserted
    -- in one statement. The primary key refuses a step another session holds; an asset refused on any
    -- of its wallets gives its claims back and takes kassa_claim_amount, the smallest free step.
    FOR claim IN
        WITH wanted AS (
            SELECT * FROM jsonb_to_recordset(coalesce(p->'claims', '[]'))
                AS r("position" INTEGER, "ticker" TEXT, "base" NUMERIC, "step" NUMERIC, "networks" TEXT[], "wallets" TEXT[], "try" INTEGER)
        ), inserted AS (
            INSERT INTO "payment_amount_claims" ("network", "wallet_address", "asset", "amount", "session_id")
            SELECT w."network", w."wallet", wanted."ticker", wanted."base" + wanted."step" * wanted."try", new_session
              FROM wanted CROSS JOIN LATERAL unnest(wanted."networks", wanted."wallets") AS w("network", "wallet")
            ON CONFLICT DO NOTHING
            RETURNING "asset"
        )
        SELECT wanted.*, (SELECT count(*) FROM inserted WHERE inserted."asset" = wanted."ticker") AS "won" FROM wanted
    LOOP
        step_count := claim."try";
        IF claim."won" < coalesce(array_length(claim."networks", 1), 0) THEN
            DELETE FROM "payment_amount_claims" WHERE "session_id" = new_session AND "asset" = claim."ticker";
            step_count := "kassa_claim_amount"(new_session, claim."ticker", claim."networks", claim."wallets", claim."base", claim."step", max_steps);
        END IF;
        offsets := offsets || jsonb_build_object(claim."position"::text, step_count);
        IF step_count > 0 THEN
            unique_amount := claim."base" + claim."step" * step_count;
            quotes := jsonb_set(quotes, ARRAY[claim."position"::text, 'amount'], to_jsonb(unique_amount::text));
            quotes := jsonb_set(quotes, ARRAY[claim."position"::text, 'offset_steps'], to_jsonb(step_count));
            payload := jsonb_set(payload, ARRAY(SELECT jsonb_array_elements_text(p->'amount_paths'->claim."position")),
                                 to_jsonb((unique_amount::numeric(38, 8))::text));
        END IF;
    END LOOP;

    -- The session and everything with it, in one statement (foreign keys are checked at its end).
    WITH new_session_row AS (
             INSERT INTO "checkout_sessions" SELECT * FROM jsonb_populate_record(NULL::"checkout_sessions", p->'session')),
         new_items AS (
             INSERT INTO "checkout_session_items" SELECT * FROM jsonb_populate_recordset(NULL::"checkout_session_items", p->'items')),
         new_quotes AS (
             INSERT INTO "checkout_session_quotes" SELECT * FROM jsonb_populate_recordset(NULL::"checkout_session_quotes", quotes)),
         new_networks AS (
             INSERT INTO "checkout_session_networks" SELECT * FROM jsonb_populate_recordset(NULL::"checkout_session_networks", p->'networks')),
         new_history AS (
             INSERT INTO "checkout_session_status_history" ("session_id", "from_status", "to_status", "cause", "created_at")
             VALUES (new_session, NULL, (p->'session'->>'status')::"checkout_session_status", p->>'cause', (p->'session'->>'created_at')::timestamptz))
    INSERT INTO "outbox_events" ("id", "organisation_id", "session_id", "type", "payload", "created_at")
    VALUES ((p->'event'->>'id')::uuid, new_organisation, new_session, p->'event'->>'type', payload, (p->'event'->>'created_at')::timestamptz);
    RETURN jsonb_build_object('offsets', offsets);
END;
$$;
