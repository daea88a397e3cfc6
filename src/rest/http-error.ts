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
  return { statusCode, message: typeof message === 'string' ? message : [...message], error: STATUS_CODES[statusCode] ?? 'Error' };
}
