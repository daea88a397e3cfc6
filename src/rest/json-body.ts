import express, { type Request, type RequestHandler } from 'express';
import { parseJsonExact } from '../json/decimal-json.js';
import { HttpError } from './http-error.js';

/** DESIGN.md §4: a body over 100 KB is refused with 413. */
export const BODY_LIMIT_BYTES = 100 * 1024;

/**
 * Keeps the body as raw bytes (the signature covers them exactly as sent) for
 * every content type; routes then ask for JSON with `readJsonBody`.
 */
export const rawBody: RequestHandler = express.raw({ type: () => true, limit: BODY_LIMIT_BYTES });

export function rawBytes(req: Request): Buffer {
  return Buffer.isBuffer(req.body) ? req.body : Buffer.alloc(0);
}

/**
 * The request's JSON body, with numbers kept exact (as Decimal). 415 for a
 * non-JSON content type, 400 for malformed JSON or an empty body.
 */
export function readJsonBody(req: Request): unknown {
  const type = req.headers['content-type'];
  if (!type || !/^application\/(?:[\w.+-]+\+)?json\s*(?:;|$)/i.test(type)) {
    throw new HttpError(415, 'Content-Type must be application/json');
  }
  const bytes = rawBytes(req);
  if (bytes.length === 0) throw new HttpError(400, ['Request body must be a JSON object']);
  try {
    return parseJsonExact(bytes.toString('utf8'));
  } catch (error) {
    throw new HttpError(400, [`Malformed JSON: ${(error as Error).message}`]);
  }
}
