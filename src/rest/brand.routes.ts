import { Router } from 'express';
import type { DomainContext } from '../domain/context.js';
import { methodNotAllowed } from '../http/error-handler.js';
import { HttpError } from '../http/http-error.js';

/**
 * Logos served by Kassa so hosted pages load nothing from elsewhere (docs/hosted-pages.md#branding-and-languages); the
 * URL is the logo's sha256: a new logo is a new URL, cached for good, and it says nothing of the organisation.
 */
export function brandRouter(ctx: DomainContext): Router {
  const router = Router();
  router.get('/brand/logo/:sha256', async (req, res) => {
    const sha256 = req.params.sha256;
    if (!/^[0-9a-f]{64}$/.test(sha256)) throw new HttpError(400, ['sha256 must be 64 lower-case hex characters']);
    const logo = await ctx.store.branding.logoBySha256(sha256);
    if (!logo) throw new HttpError(404, 'No logo with this sha256');
    res
      .status(200)
      .set({
        'Content-Type': logo.contentType,
        'Cache-Control': 'public, max-age=31536000, immutable',
        'X-Content-Type-Options': 'nosniff',
        // Opened on its own it is an image, never a document that could run anything.
        'Content-Security-Policy': "default-src 'none'; sandbox",
        'Cross-Origin-Resource-Policy': 'same-origin',
      })
      .send(logo.bytes);
  });
  router.all('/brand/logo/:sha256', methodNotAllowed(['GET']));
  return router;
}
