-- Passkeys (WebAuthn) of dashboard accounts and the challenges of ceremonies under way (docs/dashboard.md#passkeys,
-- docs/decisions/0034-passkeys-and-webhook-responses.md).

CREATE TYPE "dashboard_passkey_ceremony" AS ENUM ('register', 'sign_in');

-- A passkey a person registered: their authenticator's credential and the public key that checks its signatures.
CREATE TABLE "dashboard_passkeys" (
    "id" UUID NOT NULL,
    "user_id" UUID NOT NULL,
    -- The credential id the authenticator chose, base64url.
    "credential_id" TEXT NOT NULL,
    -- The credential's public key (COSE).
    "public_key" BYTEA NOT NULL,
    "sign_count" BIGINT NOT NULL DEFAULT 0,
    "transports" TEXT[] DEFAULT ARRAY[]::TEXT[],
    "name" TEXT NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "last_used_at" TIMESTAMPTZ(3),

    CONSTRAINT "dashboard_passkeys_pkey" PRIMARY KEY ("id"),
    CONSTRAINT "dashboard_passkeys_user_id_fkey" FOREIGN KEY ("user_id")
        REFERENCES "dashboard_users"("id") ON DELETE CASCADE ON UPDATE CASCADE
);
CREATE UNIQUE INDEX "dashboard_passkeys_credential_id_key" ON "dashboard_passkeys"("credential_id");
CREATE INDEX "dashboard_passkeys_user_id_idx" ON "dashboard_passkeys"("user_id");

-- A challenge handed to a browser: taken once (deleted as it is used), refused past expires_at. Kept in the database
-- so any instance can finish a ceremony another started.
CREATE TABLE "dashboard_passkey_challenges" (
    "challenge" TEXT NOT NULL,
    "ceremony" "dashboard_passkey_ceremony" NOT NULL,
    -- The person registering; null for a sign-in (the passkey names its account).
    "user_id" UUID,
    "expires_at" TIMESTAMPTZ(3) NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "dashboard_passkey_challenges_pkey" PRIMARY KEY ("challenge"),
    CONSTRAINT "dashboard_passkey_challenges_user_id_fkey" FOREIGN KEY ("user_id")
        REFERENCES "dashboard_users"("id") ON DELETE CASCADE ON UPDATE CASCADE
);
CREATE INDEX "dashboard_passkey_challenges_expires_at_idx" ON "dashboard_passkey_challenges"("expires_at");
