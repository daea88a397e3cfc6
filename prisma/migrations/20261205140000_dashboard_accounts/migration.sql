-- Dashboard accounts (docs/dashboard.md, docs/decisions/0027-dashboard-accounts.md): people who sign in to
-- /dashboard, their role in each organisation, their server-side sessions, one-time links (invites and
-- sign-in links), failed sign-ins for throttling, and the audit log of changes made through the dashboard.

CREATE TYPE "dashboard_role" AS ENUM ('owner', 'admin', 'developer', 'support', 'viewer');
CREATE TYPE "dashboard_link_kind" AS ENUM ('invite', 'sign_in');

CREATE TABLE "dashboard_users" (
    "id" UUID NOT NULL,
    -- Lower-cased; one account per address.
    "email" TEXT NOT NULL,
    -- scrypt$N$r$p$salt$hash (base64url); null until the invite is accepted.
    "password_hash" TEXT,
    "disabled_at" TIMESTAMPTZ(3),
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "dashboard_users_pkey" PRIMARY KEY ("id")
);
CREATE UNIQUE INDEX "dashboard_users_email_key" ON "dashboard_users"("email");

CREATE TABLE "dashboard_memberships" (
    "organisation_id" UUID NOT NULL,
    "user_id" UUID NOT NULL,
    "role" "dashboard_role" NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "dashboard_memberships_pkey" PRIMARY KEY ("organisation_id", "user_id"),
    CONSTRAINT "dashboard_memberships_organisation_id_fkey" FOREIGN KEY ("organisation_id")
        REFERENCES "organisations"("id") ON DELETE CASCADE ON UPDATE CASCADE,
    CONSTRAINT "dashboard_memberships_user_id_fkey" FOREIGN KEY ("user_id")
        REFERENCES "dashboard_users"("id") ON DELETE CASCADE ON UPDATE CASCADE
);
CREATE INDEX "dashboard_memberships_user_id_idx" ON "dashboard_memberships"("user_id");

-- A signed-in browser: the cookie carries a random token, only its sha256 is kept.
CREATE TABLE "dashboard_sessions" (
    "id" UUID NOT NULL,
    "token_hash" TEXT NOT NULL,
    "user_id" UUID NOT NULL,
    -- The CSRF token bound to this session (sent back in a form field or X-CSRF-Token).
    "csrf_token" TEXT NOT NULL,
    "address" TEXT NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "last_seen_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "expires_at" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "dashboard_sessions_pkey" PRIMARY KEY ("id"),
    CONSTRAINT "dashboard_sessions_user_id_fkey" FOREIGN KEY ("user_id")
        REFERENCES "dashboard_users"("id") ON DELETE CASCADE ON UPDATE CASCADE
);
CREATE UNIQUE INDEX "dashboard_sessions_token_hash_key" ON "dashboard_sessions"("token_hash");
CREATE INDEX "dashboard_sessions_user_id_idx" ON "dashboard_sessions"("user_id");

-- One-time links: an invite (sets the password, then signs in) or a sign-in link (development's demo owner).
CREATE TABLE "dashboard_links" (
    "id" UUID NOT NULL,
    "token_hash" TEXT NOT NULL,
    "kind" "dashboard_link_kind" NOT NULL,
    "user_id" UUID NOT NULL,
    "organisation_id" UUID NOT NULL,
    "expires_at" TIMESTAMPTZ(3) NOT NULL,
    "used_at" TIMESTAMPTZ(3),
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "dashboard_links_pkey" PRIMARY KEY ("id"),
    CONSTRAINT "dashboard_links_user_id_fkey" FOREIGN KEY ("user_id")
        REFERENCES "dashboard_users"("id") ON DELETE CASCADE ON UPDATE CASCADE,
    CONSTRAINT "dashboard_links_organisation_id_fkey" FOREIGN KEY ("organisation_id")
        REFERENCES "organisations"("id") ON DELETE CASCADE ON UPDATE CASCADE
);
CREATE UNIQUE INDEX "dashboard_links_token_hash_key" ON "dashboard_links"("token_hash");
CREATE INDEX "dashboard_links_user_id_idx" ON "dashboard_links"("user_id");

-- Failed sign-ins, counted per account and per address over a window (the sign-in throttle).
CREATE TABLE "dashboard_sign_in_failures" (
    "id" BIGSERIAL NOT NULL,
    "email" TEXT NOT NULL,
    "address" TEXT NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "dashboard_sign_in_failures_pkey" PRIMARY KEY ("id")
);
CREATE INDEX "dashboard_sign_in_failures_email_created_at_idx" ON "dashboard_sign_in_failures"("email", "created_at");
CREATE INDEX "dashboard_sign_in_failures_address_created_at_idx" ON "dashboard_sign_in_failures"("address", "created_at");

-- Every change made through the dashboard or to its accounts, per organisation.
CREATE TABLE "dashboard_audit_log" (
    "id" BIGSERIAL NOT NULL,
    "organisation_id" UUID,
    -- Null: the operator CLI.
    "user_id" UUID,
    "action" TEXT NOT NULL,
    "details" JSONB NOT NULL DEFAULT '{}',
    "address" TEXT,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "dashboard_audit_log_pkey" PRIMARY KEY ("id"),
    CONSTRAINT "dashboard_audit_log_organisation_id_fkey" FOREIGN KEY ("organisation_id")
        REFERENCES "organisations"("id") ON DELETE CASCADE ON UPDATE CASCADE
);
CREATE INDEX "dashboard_audit_log_organisation_id_id_idx" ON "dashboard_audit_log"("organisation_id", "id");
