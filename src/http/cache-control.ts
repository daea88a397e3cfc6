import type { RequestHandler } from 'express';

/**
 * Cache-Control of Kassa's answers (docs/api/rest.md#caching). What the API answers is never stored by a browser or a
 * proxy: a merchant's signed reads (the events feed, payment links, webhook endpoints) have the same URLs for every
 * merchant and carry no Authorization header, so a shared cache in front of Kassa that kept one could hand it to
 * another merchant. A session's public view (`GET /checkout-sessions/:id`, the same for everyone who has the id) may
 * be stored but is checked again on every use (its ETag answers 304), so no cache serves a status that has changed.
 * Routes whose answers may be kept say so themselves (the pages' scripts, merchants' logos).
 */
export const NOT_STORED = 'no-store';
/** The public session view's: stored, but checked with its ETag on every use. */
export const CHECKED_EACH_TIME = 'no-cache';

/** Marks every answer not to be stored, unless its route says otherwise. */
export const notStored: RequestHandler = (_req, res, next) => {
  res.setHeader('Cache-Control', NOT_STORED);
  next();
};
