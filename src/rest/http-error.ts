import { STATUS_CODES } from 'node:http';

/** A transport-level refusal (malformed JSON, 413, 415, unknown route) with the spec §7 body. */
export class HttpError extends Error {
  constructor(
    readonly statusCode: number,
    readonly body: string | readonly string[],
    readonly headers: Readonly<Record<string, string>> = {},
  ) {
    super(typeof body === 'string' ? body : body.join('; '));
    this.name = 'HttpError';
  }
}

/** Spec §7: `{ statusCode, message, error }`. */
export interface ErrorBody {
  statusCode: number;
  message: string | string[];
  error: string;
}

export function errorBody(statusCode: number, message: string | readonly string[]): ErrorBody {
  // A 400 always lists its problems (as validation errors do); other statuses carry one sentence.
  const text = typeof message === 'string' ? (statusCode === 400 ? [message] : message) : [...message];
  return { statusCode, message: text, error: STATUS_CODES[statusCode] ?? 'Error' };
}
