import { createHash } from 'node:crypto';
import type { DomainContext } from '../context.js';
import type { Branding, LogoContentType, StoredLogo } from './branding-ports.js';
import { invalid, notFound } from '../shared/errors.js';

/**
 * The branding use-cases: what an organisation's hosted pages show of it (brandingOf), and
 * setting its logo and colour (setBranding), with the rules both must pass.
 */

export const MAX_LOGO_BYTES = 100 * 1024;

/**
 * Only raster formats, told by their magic bytes, never a name or claimed type. SVG is refused: it can carry script
 * and links to other hosts (docs/decisions/0017-logos-served-by-kassa.md).
 */
export function logoContentType(bytes: Buffer): LogoContentType | null {
  if (bytes.length >= 8 && bytes.subarray(0, 8).equals(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])))
    return 'image/png';
  if (bytes.length >= 12 && bytes.toString('latin1', 0, 4) === 'RIFF' && bytes.toString('latin1', 8, 12) === 'WEBP')
    return 'image/webp';
  return null;
}

const COLOR = /^#?([0-9a-f]{6})$/i;

export interface BrandingChange {
  /** `#rrggbb` (or `rrggbb`); null or '' clears it. */
  readonly brandColor?: string | null;
  /** The logo file's bytes; null clears it. */
  readonly logo?: Buffer | null;
}

/** `kassa orgs update`: sets or clears the organisation's logo and brand colour. */
export async function setBranding(
  ctx: DomainContext,
  organisationId: string,
  change: BrandingChange,
): Promise<Branding> {
  const problems: string[] = [];
  let brandColor: string | null | undefined;
  if (change.brandColor !== undefined) {
    if (change.brandColor === null || change.brandColor === '') brandColor = null;
    else {
      const match = COLOR.exec(change.brandColor.trim());
      if (!match) problems.push(`brand colour must be a hex colour #rrggbb (got "${change.brandColor}")`);
      else brandColor = `#${match[1]!.toLowerCase()}`;
    }
  }
  let logo: (StoredLogo & { sha256: string }) | null | undefined;
  if (change.logo !== undefined) {
    if (change.logo === null) logo = null;
    else if (change.logo.length > MAX_LOGO_BYTES)
      problems.push(
        `logo must be at most ${MAX_LOGO_BYTES / 1024} KB (it is ${Math.ceil(change.logo.length / 1024)} KB)`,
      );
    else {
      const contentType = logoContentType(change.logo);
      if (!contentType) problems.push('logo must be a PNG or WebP image (SVG and other formats are refused)');
      else logo = { bytes: change.logo, contentType, sha256: createHash('sha256').update(change.logo).digest('hex') };
    }
  }
  if (problems.length > 0) throw invalid(problems);
  const changed = await ctx.store.branding.setBranding(organisationId, {
    ...(brandColor !== undefined ? { brandColor } : {}),
    ...(logo !== undefined ? { logo } : {}),
  });
  if (!changed) throw notFound(`Organisation ${organisationId} not found`);
  return (await ctx.store.branding.brandingOf(organisationId))!;
}

/** What the hosted pages show of the merchant; null for an unknown organisation. */
export function brandingOf(ctx: DomainContext, organisationId: string): Promise<Branding | null> {
  return ctx.store.branding.brandingOf(organisationId);
}

/** Where Kassa serves the logo: named by its content, so a new logo is a new URL and no organisation id is shown. */
export const logoPath = (sha256: string) => `/brand/logo/${sha256}`;

/**
 * Text on the brand colour: white or near-black, whichever contrasts more (WCAG relative
 * luminance); one of them always reaches 4.5:1, so buttons in any brand colour stay readable.
 */
export function textColorOn(hex: string): '#ffffff' | '#111111' {
  const linear = (c: number) => (c <= 0.03928 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4);
  const channel = (i: number) => linear(parseInt(hex.slice(1 + 2 * i, 3 + 2 * i), 16) / 255);
  const luminance = 0.2126 * channel(0) + 0.7152 * channel(1) + 0.0722 * channel(2);
  const dark = linear(0x11 / 255); // a grey: its three channels are equal and the weights sum to 1
  return 1.05 / (luminance + 0.05) >= (luminance + 0.05) / (dark + 0.05) ? '#ffffff' : '#111111';
}
