-- A new checkout session is announced on a channel of its own, kassa_session_created (changes of a session row are
-- announced on kassa_checkout_session, migration 20261123140000_hot_paths), so the dashboard's live sessions list
-- (docs/dashboard.md#live-updates) shows it without a reload while caches of sessions never hear of it.
CREATE FUNCTION "kassa_notify_session_created"() RETURNS trigger
    LANGUAGE plpgsql AS $$
BEGIN
    PERFORM "kassa_announce_change"('kassa_session_created', NEW."id"::text);
    RETURN NULL;
END;
$$;

CREATE TRIGGER "checkout_sessions_notify_insert"
    AFTER INSERT ON "checkout_sessions"
    FOR EACH ROW EXECUTE FUNCTION "kassa_notify_session_created"();
