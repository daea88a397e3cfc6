-- A receiver's whole answer to a delivery attempt, up to 64 KiB, and its headers (docs/dashboard.md#webhooks,
-- docs/decisions/0034-passkeys-and-webhook-responses.md). response_excerpt keeps its first 1,024 bytes for good;
-- body and headers are cleared 30 days after the attempt by the hourly clean-up.

ALTER TABLE "webhook_delivery_attempts"
    -- The answer's body as text, its first 64 KiB; null when none was kept (older attempts, or cleared).
    ADD COLUMN "response_body" TEXT,
    -- The answer's size in bytes: as read, or its Content-Length when it was cut; null when unknown.
    ADD COLUMN "response_size" INTEGER,
    -- Whether what is kept is less than the whole answer.
    ADD COLUMN "response_truncated" BOOLEAN NOT NULL DEFAULT false,
    -- The answer's headers, { name: value } with lower-case names.
    ADD COLUMN "response_headers" JSONB;

-- Finds the bodies the clean-up clears without reading the attempts it cleared before.
CREATE INDEX "webhook_delivery_attempts_response_kept_idx" ON "webhook_delivery_attempts"("created_at")
    WHERE "response_body" IS NOT NULL OR "response_headers" IS NOT NULL;
