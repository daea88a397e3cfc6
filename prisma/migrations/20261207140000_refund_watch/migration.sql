-- The chain watcher's hold on each refund it follows (issue 36, docs/refund-claims.md#watching): where its scan for
-- the refund's transfer resumes, which instance holds it until when, and when it stopped following a confirmed one.
CREATE TABLE "refund_watch" (
    "refund_id" UUID NOT NULL,
    "network" TEXT NOT NULL,
    "next_block" BIGINT,
    "leader" TEXT,
    "lease_until" TIMESTAMPTZ(3),
    "settled_at" TIMESTAMPTZ(3),
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "refund_watch_pkey" PRIMARY KEY ("refund_id")
);
