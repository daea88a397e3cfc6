import type { RequestHandler } from 'express';

/**
 * Cache-Control of Kassa's answers (docs/api/rest.md#caching): merchants' signed reads are never stored (their URLs are
 * the same for every merchant); a session's public view may be, but is revalidated on every use.
 */
export const NOT_STORED = 'no-store';
/** The public session view's: stored, but checked with its ETag on every use. */
export const CHECKED_EACH_TIME = 'no-cache';

/** Marks every answer not to be stored, unless its route says otherwise. */
export const notStored: RequestHandler = (_req, res, next) => {
  res.setHeader('Cache-Control', NOT_STORED);
  next();
};
