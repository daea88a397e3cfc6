-- The client address a transaction was bound from (as rate limits tell it, docs/api/rest.md#rate-limits): the cap
-- on unverified binds counts per session, address and kind, so one binder's pending or made-up transactions cannot
-- shut out another's (docs/payment-rules.md, rule 3). Null for binds made before, and for `kassa dev pay`'s.
ALTER TABLE "checkout_session_transactions" ADD COLUMN "client_address" TEXT;
