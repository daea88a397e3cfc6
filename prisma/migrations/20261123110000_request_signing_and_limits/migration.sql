-- Issue 11 (production hardening): the replay cache of merchant signatures and the rate-limit counters.

-- CreateTable
-- A signature is accepted once: the primary key makes the insert the check, on every instance.
-- Rows are deleted once expires_at (the timestamp's ±5 minute window, plus a minute) has passed.
CREATE TABLE "request_signatures" (
    "api_key_id" UUID NOT NULL,
    "signature" TEXT NOT NULL,
    "expires_at" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "request_signatures_pkey" PRIMARY KEY ("api_key_id","signature")
);

-- CreateTable
-- Hits per "<limit>:<subject>" and fixed window, one upsert per request. UNLOGGED: no WAL on a hot
-- path, and counters that a crash (or a failover to a replica) resets are harmless.
CREATE UNLOGGED TABLE "rate_limit_counters" (
    "key" TEXT NOT NULL,
    "window_start" TIMESTAMPTZ(3) NOT NULL,
    "hits" INTEGER NOT NULL,
    "expires_at" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "rate_limit_counters_pkey" PRIMARY KEY ("key","window_start")
);

-- CreateIndex
CREATE INDEX "request_signatures_expires_at_idx" ON "request_signatures"("expires_at");

-- CreateIndex
CREATE INDEX "rate_limit_counters_expires_at_idx" ON "rate_limit_counters"("expires_at");
