-- A transfer of an amount a session was asked for, which that session could not take when it was scanned (its asset
-- or chain locked to another since, its rest or quote changed since, or closed), is recorded as reserved for it
-- (docs/payment-rules.md, rule 2): only that session's bind may take it, also once the claim itself is freed.
-- Before, such a transfer was free, and any other open session of the merchant could bind it.
ALTER TABLE "payments" ADD COLUMN "reserved_for" UUID;
