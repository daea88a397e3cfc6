import type { Error as ErrorBody } from './types.js';

/** What the client throws: Kassa's error answers, no answer at all, and a webhook that does not verify. */

/** The stable reason of a refusal, to branch on (docs/api/rest.md#error-codes); messages may change. */
export type KassaErrorCode = NonNullable<ErrorBody['code']>;

/** An answer other than 2xx, with Kassa's error body (docs/api/rest.md#errors); status 0 for a KassaNetworkError. */
export class KassaError extends Error {
  override readonly name: string = 'KassaError';
  /** Every problem (a 400 lists several). */
  readonly messages: string[];
  /** The body's `code`; null when the answer had none (no answer at all, or a body that is not Kassa's). */
  readonly code: KassaErrorCode | null;

  constructor(
    readonly status: number,
    readonly body: { statusCode?: number; message?: string | string[]; error?: string; code?: KassaErrorCode } | null,
    options?: { cause?: unknown; messages?: string[] },
  ) {
    const given = body?.message;
    const fromBody = given === undefined ? [`HTTP ${status}`] : Array.isArray(given) ? given : [given];
    const messages = options?.messages ?? fromBody;
    const summary = `${status} ${body?.error ?? ''}: ${messages.join('; ')}`.replace(/ +:/, ':');
    super(summary, options?.cause === undefined ? undefined : { cause: options.cause });
    this.messages = messages;
    this.code = typeof body?.code === 'string' ? body.code : null;
  }
}

/**
 * No HTTP answer at all: the connection failed (server down, DNS, TLS, reset)
 * or the request timed out, after the retries the call allows. `status` is 0,
 * `body` null, `cause` the underlying error (e.g. fetch's TypeError).
 */
export class KassaNetworkError extends KassaError {
  override readonly name: string = 'KassaNetworkError';

  constructor(
    readonly method: string,
    readonly url: string,
    cause: unknown,
  ) {
    super(0, null, { cause, messages: [`${method} ${url} failed: ${describeNetworkFailure(cause)}`] });
    this.message = `network error: ${this.messages[0]}`;
  }
}

function describeNetworkFailure(error: unknown): string {
  if (error instanceof Error && (error.name === 'TimeoutError' || error.name === 'AbortError')) {
    return 'no answer before the timeout';
  }
  const cause = error instanceof Error ? (error.cause as { code?: string; message?: string } | undefined) : undefined;
  const detail = cause?.code ?? cause?.message;
  const message = error instanceof Error ? error.message : String(error);
  return detail && !message.includes(detail) ? `${message} (${detail})` : message;
}

export class WebhookVerificationError extends Error {
  override readonly name = 'WebhookVerificationError';
}
