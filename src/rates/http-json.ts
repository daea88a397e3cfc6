import { parseJsonExact } from '../json/decimal-json.js';

/** A market-data source failed as a whole; the message starts with the source's name. */
export class RatesSourceError extends Error {
  constructor(
    readonly source: string,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(`${source}: ${message}`, options);
    this.name = 'RatesSourceError';
  }
}

export interface JsonRequest {
  /** Source name, used in error messages. */
  readonly source: string;
  readonly url: string;
  readonly headers?: Readonly<Record<string, string>>;
  /** The whole exchange (connect, headers and body) must finish within this. */
  readonly timeoutMs: number;
}

/**
 * GETs `url` and parses the body with every number as an exact Decimal.
 * Throws {@link RatesSourceError} on timeout, network failure, a non-2xx status or malformed JSON.
 */
export async function fetchJsonExact(request: JsonRequest): Promise<unknown> {
  const { source, url, timeoutMs } = request;
  let status: number;
  let ok: boolean;
  let text: string;
  try {
    // The signal stays attached while the body streams, so a slow body also times out.
    const response = await fetch(url, {
      headers: { accept: 'application/json', ...request.headers },
      signal: AbortSignal.timeout(timeoutMs),
    });
    status = response.status;
    ok = response.ok;
    text = await response.text();
  } catch (error) {
    const name = (error as { name?: unknown } | null)?.name;
    if (name === 'TimeoutError' || name === 'AbortError') {
      throw new RatesSourceError(source, `no answer from ${url} within ${timeoutMs} ms`, { cause: error });
    }
    throw new RatesSourceError(source, `request to ${url} failed: ${messageOf(error)}`, { cause: error });
  }
  if (!ok) throw new RatesSourceError(source, `HTTP ${status} from ${url}: ${excerpt(text)}`);
  try {
    return parseJsonExact(text);
  } catch (error) {
    throw new RatesSourceError(source, `malformed JSON from ${url}: ${messageOf(error)}`, { cause: error });
  }
}

function messageOf(error: unknown): string {
  const cause = (error as { cause?: { message?: unknown } } | null)?.cause?.message;
  const message = error instanceof Error ? error.message : String(error);
  // undici reports "fetch failed" and hides the useful part (ECONNREFUSED, …) in `cause`.
  return typeof cause === 'string' ? `${message} (${cause})` : message;
}

function excerpt(text: string): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  if (flat === '') return '(empty body)';
  return flat.length > 200 ? `${flat.slice(0, 197)}...` : flat;
}
