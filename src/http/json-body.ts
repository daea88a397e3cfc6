import express, { type Request, type RequestHandler } from 'express';
import { parseJsonExact } from '../json/decimal-json.js';
import { Decimal } from '../domain/shared/money.js';
import { HttpError } from './http-error.js';

/** A body over 100 KB is refused with 413 (docs/api/rest.md#errors). */
export const BODY_LIMIT_BYTES = 100 * 1024;
/** Deeper JSON is refused before parsing: no request needs it, and recursion must stay bounded. */
export const MAX_JSON_DEPTH = 32;

/**
 * Keeps the body as raw bytes for every content type: the signature covers them as sent, so compressed bodies are
 * refused (415) rather than inflated. Routes then ask for JSON with `readJsonBody`.
 */
export const rawBody: RequestHandler = express.raw({ type: () => true, limit: BODY_LIMIT_BYTES, inflate: false });

export function rawBytes(req: Request): Buffer {
  return Buffer.isBuffer(req.body) ? req.body : Buffer.alloc(0);
}

const utf8 = new TextDecoder('utf-8', { fatal: true });

/**
 * The request's JSON body, numbers kept exact (Decimal): 415 for a non-JSON type or non-UTF-8 charset; 400 for bad
 * UTF-8, malformed or too deep JSON, an empty body, and strings PostgreSQL cannot store (NUL, unpaired surrogates).
 */
export function readJsonBody(req: Request): unknown {
  return readJsonBytes(req.headers['content-type'], rawBytes(req));
}

/** readJsonBody's rules for a body read outside Express (src/rest/create-lane.ts): its Content-Type and bytes. */
export function readJsonBytes(type: string | undefined, bytes: Buffer): unknown {
  if (!type || !/^application\/(?:[\w.+-]+\+)?json\s*(?:;|$)/i.test(type)) {
    throw new HttpError(415, 'Content-Type must be application/json');
  }
  const charset = /;\s*charset\s*=\s*"?([^";\s]+)/i.exec(type)?.[1]?.toLowerCase();
  if (charset && charset !== 'utf-8' && charset !== 'utf8')
    throw new HttpError(415, `Unsupported charset ${charset}: send UTF-8 JSON`);
  if (bytes.length === 0) throw new HttpError(400, ['Request body must be a JSON object']);
  let text: string;
  try {
    text = utf8.decode(bytes);
  } catch {
    throw new HttpError(400, ['Request body is not valid UTF-8']);
  }
  if (nestingDepth(text) > MAX_JSON_DEPTH)
    throw new HttpError(400, [`Request body is nested deeper than ${MAX_JSON_DEPTH} levels`]);
  let body: unknown;
  try {
    body = parseJsonExact(text);
  } catch (error) {
    throw new HttpError(400, [`Malformed JSON: ${(error as Error).message}`]);
  }
  const problems = unstorableStrings(body, '');
  if (problems.length > 0) throw new HttpError(400, problems);
  return body;
}

/** Deepest bracket nesting outside strings, found without parsing. */
function nestingDepth(text: string): number {
  let depth = 0;
  let deepest = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const char = text[i];
    if (inString) {
      if (char === '\\') i++;
      else if (char === '"') inString = false;
    } else if (char === '"') inString = true;
    else if (char === '{' || char === '[') deepest = Math.max(deepest, ++depth);
    else if (char === '}' || char === ']') depth--;
  }
  return deepest;
}

// NUL cannot be stored in PostgreSQL text or jsonb; an unpaired surrogate is not Unicode.
const UNSTORABLE = /\u0000|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

function unstorableStrings(value: unknown, path: string): string[] {
  const name = path || 'body';
  if (typeof value === 'string')
    return UNSTORABLE.test(value) ? [`${name} must not contain NUL characters or unpaired surrogates`] : [];
  if (value === null || typeof value !== 'object' || value instanceof Decimal) return [];
  const entries = Array.isArray(value)
    ? value.map((inner, index) => [String(index), inner] as const)
    : Object.entries(value);
  return entries.flatMap(([key, inner]) => [
    ...(UNSTORABLE.test(key)
      ? [`property names in ${name} must not contain NUL characters or unpaired surrogates`]
      : []),
    ...unstorableStrings(inner, path ? `${path}.${key}` : key),
  ]);
}
