-- A payment link's sessions take only one lane of a price's unique amounts (docs/payment-rules.md, rule 4): the odd
-- steps (first 1, stride 2), so anyone opening link sessions can hold at most half of them and the merchant's own
-- API creates, which may take any step, always find the other half. kassa_claim_amount gains the lane (p_first,
-- p_stride: the steps p_first, p_first + p_stride, ... below p_max_steps); its seven-argument form (every step, the
-- rest amounts) is unchanged. Create's claims carry the lane ("first", "stride"; absent: every step, as before):
-- otherwise kassa_create_checkout_session is unchanged (20261203100000_signature_made_session).

CREATE FUNCTION "kassa_claim_amount"(p_session UUID, p_asset TEXT, p_networks TEXT[], p_wallets TEXT[],
                                     p_base NUMERIC, p_step NUMERIC, p_max_steps INTEGER, p_first INTEGER,
                                     p_stride INTEGER) RETURNS INTEGER
    LANGUAGE plpgsql AS $$
DECLARE
    wallet_count INTEGER := coalesce(array_length(p_networks, 1), 0);
    taken NUMERIC[];
    candidate NUMERIC;
    claimed INTEGER;
    k INTEGER := p_first;
BEGIN
    IF wallet_count = 0 THEN
        RETURN 0;
    END IF;
    taken := ARRAY(
        SELECT DISTINCT c."amount"
          FROM unnest(p_networks, p_wallets) AS w("network", "wallet")
          JOIN "payment_amount_claims" c ON c."network" = w."network" AND c."wallet_address" = w."wallet"
         WHERE c."asset" = p_asset AND c."amount" >= p_base AND c."amount" < p_base + p_step * p_max_steps);
    WHILE k < p_max_steps LOOP
        candidate := p_base + p_step * k;
        IF NOT candidate = ANY(taken) THEN
            INSERT INTO "payment_amount_claims" ("network", "wallet_address", "asset", "amount", "session_id")
            SELECT w."network", w."wallet", p_asset, candidate, p_session
              FROM unnest(p_networks, p_wallets) AS w("network", "wallet")
            ON CONFLICT DO NOTHING;
            GET DIAGNOSTICS claimed = ROW_COUNT;
            IF claimed = wallet_count THEN
                RETURN k;
            END IF;
            -- Another session holds this amount on one of the wallets: give ours back, try the next.
            DELETE FROM "payment_amount_claims"
             WHERE "session_id" = p_session AND "asset" = p_asset AND "amount" = candidate;
        END IF;
        k := k + p_stride;
    END LOOP;
    RETURN NULL;
END;
$$;

CREATE OR REPLACE FUNCTION "kassa_create_checkout_session"(p JSONB) RETURNS JSONB
    LANGUAGE plpgsql AS $$
DECLARE
    new_session UUID := (p->'session'->>'id')::uuid;
    new_organisation UUID := (p->'session'->>'organisation_id')::uuid;
    max_steps INTEGER := (p->>'max_steps')::integer;
    quotes JSONB := p->'quotes';
    payload JSONB := p->'event'->'payload';
    offsets JSONB := '{}';
    -- The columns every row of the session's items, quotes and networks shares, given once (src/db/create-session.store.ts).
    of_session JSONB := jsonb_build_object('session_id', p->'session'->'id');
    claim RECORD;
    step_count INTEGER;
    unique_amount NUMERIC;
    existing RECORD;
BEGIN
    IF p->'signature' IS NOT NULL AND jsonb_typeof(p->'signature') = 'object' THEN
        INSERT INTO "request_signatures" ("api_key_id", "signature", "expires_at", "session_id")
        VALUES ((p->'signature'->>'api_key_id')::uuid, p->'signature'->>'signature', (p->'signature'->>'expires_at')::timestamptz,
                new_session)
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
            -- This signature answers with the key's session: sent again verbatim, it is replayed with it too.
            IF p->'signature' IS NOT NULL AND jsonb_typeof(p->'signature') = 'object' THEN
                UPDATE "request_signatures" SET "session_id" = existing."session_id"
                 WHERE "api_key_id" = (p->'signature'->>'api_key_id')::uuid AND "signature" = p->'signature'->>'signature';
            END IF;
            RETURN jsonb_build_object('replay', jsonb_build_object('request_hash', existing."request_hash", 'session_id', existing."session_id"));
        END IF;
    END IF;

    IF p->'link' IS NOT NULL AND jsonb_typeof(p->'link') = 'object' THEN
        UPDATE "payment_links" SET "uses" = "uses" + 1
         WHERE "id" = (p->'link'->>'id')::uuid AND "active"
           AND ("expires_at" IS NULL OR "expires_at" > (p->'link'->>'now')::timestamptz)
           AND ("max_uses" IS NULL OR "uses" < "max_uses");
        IF NOT FOUND THEN
            -- Nothing of this create stays: its Idempotency-Key goes too, so a retry asks the link again.
            DELETE FROM "idempotency_keys"
             WHERE "organisation_id" = new_organisation AND "key" = p->'idempotency'->>'key' AND "session_id" = new_session;
            RETURN jsonb_build_object('link_unavailable', true);
        END IF;
    END IF;

    -- The unique amounts. Each claim comes with the step to try first (p.claims[].try: the one after
    -- the last this instance handed out for that base, src/db/create-session.store.ts), all inserted
    -- in one statement. The primary key refuses a step another session holds; an asset refused on any
    -- of its wallets gives its claims back and takes kassa_claim_amount, the smallest free step.
    FOR claim IN
        WITH wanted AS (
            SELECT cl."position", qt."ticker", qt."base_amount" AS "base", qt."amount_step" AS "step",
                   cl."networks", cl."wallets", cl."try", coalesce(cl."first", 0) AS "first",
                   coalesce(cl."stride", 1) AS "stride"
              FROM jsonb_to_recordset(coalesce(p->'claims', '[]'))
                       AS cl("position" INTEGER, "networks" TEXT[], "wallets" TEXT[], "try" INTEGER, "first" INTEGER,
                             "stride" INTEGER)
              JOIN jsonb_to_recordset(quotes) AS qt("position" INTEGER, "ticker" TEXT, "base_amount" NUMERIC, "amount_step" NUMERIC)
                USING ("position")
        ), inserted AS (
            INSERT INTO "payment_amount_claims" ("network", "wallet_address", "asset", "amount", "session_id", "created_at")
            SELECT w."network", w."wallet", wanted."ticker", wanted."base" + wanted."step" * wanted."try", new_session,
                   (p->'session'->>'created_at')::timestamptz
              FROM wanted CROSS JOIN LATERAL unnest(wanted."networks", wanted."wallets") AS w("network", "wallet")
            ON CONFLICT DO NOTHING
            RETURNING "asset"
        )
        SELECT wanted.*, (SELECT count(*) FROM inserted WHERE inserted."asset" = wanted."ticker") AS "won" FROM wanted
    LOOP
        step_count := claim."try";
        -- A step tried outside the claim's lane is given back like one another session holds.
        IF claim."won" < coalesce(array_length(claim."networks", 1), 0)
           OR claim."try" < claim."first" OR (claim."try" - claim."first") % claim."stride" <> 0 THEN
            DELETE FROM "payment_amount_claims" WHERE "session_id" = new_session AND "asset" = claim."ticker";
            step_count := "kassa_claim_amount"(new_session, claim."ticker", claim."networks", claim."wallets", claim."base", claim."step", max_steps,
                                               claim."first", claim."stride");
            IF step_count IS NULL THEN
                -- Every amount of this price is held on one of the wallets: nothing of this create stays (its
                -- claims, its Idempotency-Key, its use of a payment link; its signature stays used, as for every
                -- refusal), so no amount is ever asked for by two sessions.
                DELETE FROM "payment_amount_claims" WHERE "session_id" = new_session;
                DELETE FROM "idempotency_keys"
                 WHERE "organisation_id" = new_organisation AND "key" = p->'idempotency'->>'key' AND "session_id" = new_session;
                IF p->'link' IS NOT NULL AND jsonb_typeof(p->'link') = 'object' THEN
                    UPDATE "payment_links" SET "uses" = "uses" - 1 WHERE "id" = (p->'link'->>'id')::uuid;
                END IF;
                RETURN jsonb_build_object('amounts_taken', claim."ticker");
            END IF;
            -- kassa_claim_amount stamps the database's clock: the claim is taken when the session is created.
            UPDATE "payment_amount_claims" SET "created_at" = (p->'session'->>'created_at')::timestamptz
             WHERE "session_id" = new_session AND "asset" = claim."ticker";
        END IF;
        offsets := offsets || jsonb_build_object(claim."position"::text, step_count);
        -- The caller wrote the quote and the event at the step it tried: rewritten only for another one.
        IF step_count IS DISTINCT FROM claim."try" THEN
            unique_amount := claim."base" + claim."step" * coalesce(step_count, 0);
            quotes := jsonb_set(quotes, ARRAY[claim."position"::text, 'amount'], to_jsonb(unique_amount::text));
            quotes := jsonb_set(quotes, ARRAY[claim."position"::text, 'offset_steps'], to_jsonb(coalesce(step_count, 0)));
            payload := jsonb_set(payload, ARRAY(SELECT jsonb_array_elements_text(p->'amount_paths'->claim."position")),
                                 to_jsonb((unique_amount::numeric(38, 8))::text));
        END IF;
    END LOOP;

    -- The session and everything with it, in one statement (foreign keys are checked at its end).
    WITH new_session_row AS (
             INSERT INTO "checkout_sessions" SELECT * FROM jsonb_populate_record(NULL::"checkout_sessions", p->'session')),
         new_items AS (
             INSERT INTO "checkout_session_items"
             SELECT * FROM jsonb_populate_recordset(jsonb_populate_record(NULL::"checkout_session_items", of_session), p->'items')),
         new_quotes AS (
             INSERT INTO "checkout_session_quotes"
             SELECT * FROM jsonb_populate_recordset(
                 jsonb_populate_record(NULL::"checkout_session_quotes", of_session || jsonb_build_object('rounding', p->'rounding')),
                 quotes)),
         new_networks AS (
             INSERT INTO "checkout_session_networks"
             SELECT * FROM jsonb_populate_recordset(jsonb_populate_record(NULL::"checkout_session_networks", of_session), p->'networks')),
         new_history AS (
             INSERT INTO "checkout_session_status_history" ("session_id", "from_status", "to_status", "cause", "created_at")
             VALUES (new_session, NULL, (p->'session'->>'status')::"checkout_session_status", p->>'cause', (p->'session'->>'created_at')::timestamptz))
    INSERT INTO "outbox_events" ("id", "organisation_id", "session_id", "type", "payload", "created_at")
    VALUES ((p->'event'->>'id')::uuid, new_organisation, new_session, p->'event'->>'type', payload, (p->'event'->>'created_at')::timestamptz);
    RETURN jsonb_build_object('offsets', offsets);
END;
$$;
