-- A new checkout session is announced on the change feed as a changed one is (migration 20261123140000_hot_paths),
-- so the dashboard's live sessions list (docs/dashboard.md#live-updates) shows it without a reload. Listeners keyed
-- by session id hear of an id nobody watches yet, which costs them nothing.
CREATE TRIGGER "checkout_sessions_notify_insert"
    AFTER INSERT ON "checkout_sessions"
    FOR EACH ROW EXECUTE FUNCTION "kassa_notify_checkout_session"();
