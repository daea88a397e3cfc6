-- Live updates for the GraphQL subscription `checkoutSessionUpdated`.
-- Every change of a session's status, binding or payments updates its
-- checkout_sessions row, so one trigger on that table tells every Kassa
-- instance listening on the channel which session changed (the payload is the
-- session id only; listeners read the session themselves). NOTIFY is
-- transactional: listeners hear it only after the change commits.
CREATE FUNCTION "kassa_notify_checkout_session"() RETURNS trigger
    LANGUAGE plpgsql AS $$
BEGIN
    PERFORM pg_notify('kassa_checkout_session', NEW."id"::text);
    RETURN NULL;
END;
$$;

CREATE TRIGGER "checkout_sessions_notify_change"
    AFTER UPDATE ON "checkout_sessions"
    FOR EACH ROW EXECUTE FUNCTION "kassa_notify_checkout_session"();
