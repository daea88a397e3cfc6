-- Issue 12: payment links, and branding (logo, colour) of organisations on the hosted pages.

-- AlterTable
ALTER TABLE "organisations" ADD COLUMN "brand_color" TEXT,
ADD COLUMN "logo" BYTEA,
ADD COLUMN "logo_content_type" TEXT,
ADD COLUMN "logo_sha256" TEXT;

-- CreateTable
-- `uses` is counted with one atomic UPDATE … WHERE uses < max_uses, so parallel visits never exceed max_uses.
CREATE TABLE "payment_links" (
    "id" UUID NOT NULL,
    "organisation_id" UUID NOT NULL,
    "name" TEXT NOT NULL,
    "currency" TEXT NOT NULL,
    "amount_min" DECIMAL(38,8),
    "amount_max" DECIMAL(38,8),
    "expires_in_minutes" INTEGER NOT NULL DEFAULT 60,
    "identity_options" TEXT[] DEFAULT ARRAY[]::TEXT[],
    "anonymous" BOOLEAN NOT NULL DEFAULT false,
    "max_uses" INTEGER,
    "uses" INTEGER NOT NULL DEFAULT 0,
    "active" BOOLEAN NOT NULL DEFAULT true,
    "expires_at" TIMESTAMPTZ(3),
    "metadata" JSONB NOT NULL DEFAULT '{}',
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "payment_links_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "payment_link_items" (
    "payment_link_id" UUID NOT NULL,
    "position" INTEGER NOT NULL,
    "name" TEXT NOT NULL,
    "quantity" INTEGER NOT NULL,
    "unit_price" DECIMAL(38,8) NOT NULL,
    "product_id" TEXT,

    CONSTRAINT "payment_link_items_pkey" PRIMARY KEY ("payment_link_id","position")
);

-- CreateIndex
CREATE INDEX "organisations_logo_sha256_idx" ON "organisations"("logo_sha256");

-- CreateIndex
CREATE INDEX "payment_links_organisation_id_created_at_idx" ON "payment_links"("organisation_id", "created_at");

-- AddForeignKey
ALTER TABLE "payment_links" ADD CONSTRAINT "payment_links_organisation_id_fkey" FOREIGN KEY ("organisation_id") REFERENCES "organisations"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "payment_link_items" ADD CONSTRAINT "payment_link_items_payment_link_id_fkey" FOREIGN KEY ("payment_link_id") REFERENCES "payment_links"("id") ON DELETE CASCADE ON UPDATE CASCADE;
