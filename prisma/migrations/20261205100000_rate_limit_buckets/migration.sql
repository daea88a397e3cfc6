-- Token buckets for rate limits that allow a burst (the create limit per API key: docs/api/rest.md#rate-limits),
-- as GCRA: each key's theoretical arrival time, moved on by one emission interval per request taken, in one atomic
-- INSERT … ON CONFLICT DO UPDATE … RETURNING (src/db/rate-buckets.store.ts). UNLOGGED, as rate_limit_counters: a
-- crash or failover merely refills the buckets. A row whose time has passed is a full bucket, as is no row, so any
-- instance may delete it.
CREATE UNLOGGED TABLE "rate_limit_buckets" (
    "key" TEXT NOT NULL,
    "theoretical_arrival_ms" DOUBLE PRECISION NOT NULL,
    -- Whether the request the last write judged was refused (RETURNING sees only the row after the write).
    "refused" BOOLEAN NOT NULL DEFAULT false,

    CONSTRAINT "rate_limit_buckets_pkey" PRIMARY KEY ("key")
);
