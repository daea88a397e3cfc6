import type { IncomingMessage, ServerResponse } from 'node:http';
import { NOT_STORED } from './cache-control.js';
import { restErrorAnswer } from './error-handler.js';
import { weakEtag } from './weak-etag.js';

/**
 * What the routes answered before Express share: the whole body of a request, and a JSON answer with the headers
 * Express's `res.json` gives (Content-Type, Content-Length, weak ETag), so either way a request is answered the same.
 */

/** The request's body, all of it; rejects when the client goes away before it arrived. */
export function readWholeBody(req: IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.once('end', () => resolve(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks)));
    req.once('error', reject);
    req.once('aborted', () => reject(new Error('request aborted')));
  });
}

/** The headers Express's `res.json` gives a JSON `body`, flat (name, value, …): Content-Type, Content-Length, ETag. */
export function jsonHeaders(body: Buffer, etag: string = weakEtag(body)): string[] {
  return ['Content-Type', 'application/json; charset=utf-8', 'Content-Length', String(body.length), 'ETag', etag];
}

/** Sends `body` (JSON) as Express's res.json would after notStored (rest/cache-control.ts), with `headers` besides. */
export function sendJson(
  res: ServerResponse,
  status: number,
  body: Buffer,
  headers: Readonly<Record<string, string>> = {},
): void {
  res.statusCode = status;
  res.setHeader('Cache-Control', NOT_STORED);
  for (const name in headers) res.setHeader(name, headers[name]!);
  const json = jsonHeaders(body);
  for (let i = 0; i < json.length; i += 2) res.setHeader(json[i]!, json[i + 1]!);
  res.end(body);
}

/** Answers `error` as the Express error handler would (restErrorAnswer), logging what was not meant. */
export function sendError(req: IncomingMessage, res: ServerResponse, error: unknown): void {
  if (res.headersSent) return;
  const answer = restErrorAnswer(error);
  if (answer.unexpected) req.log.error({ err: error }, 'unhandled error');
  sendJson(res, answer.status, Buffer.from(JSON.stringify(answer.body), 'utf8'), answer.headers);
}
