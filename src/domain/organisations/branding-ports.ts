/**
 * How an organisation appears on its hosted pages (docs/hosted-pages.md#branding-and-languages); the logo is kept in
 * the database and served by Kassa, so the pages never load anything from elsewhere.
 */
export interface Branding {
  readonly organisationName: string;
  /** `#rrggbb`, lower case; null: Kassa's own colour. */
  readonly brandColor: string | null;
  /** sha256 (hex) of the logo, which names its URL; null: no logo. */
  readonly logoSha256: string | null;
}

export type LogoContentType = 'image/png' | 'image/webp';

export interface StoredLogo {
  readonly bytes: Buffer;
  readonly contentType: LogoContentType;
}

export interface BrandingStore {
  brandingOf(organisationId: string): Promise<Branding | null>;
  /** Sets what is given (null clears it); false when the organisation does not exist. */
  setBranding(
    organisationId: string,
    change: { brandColor?: string | null; logo?: (StoredLogo & { sha256: string }) | null },
  ): Promise<boolean>;
  logoBySha256(sha256: string): Promise<StoredLogo | null>;
}
