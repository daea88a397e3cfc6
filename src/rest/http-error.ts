import { STATUS_CODES } from 'node:http';
import { z } from 'zod';

/**
 * A transport-level refusal (malformed JSON, 413, 415, unknown route) with the error body
 * (docs/api/rest.md#errors).
 */
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

/** docs/api/rest.md#errors: `{ statusCode, message, error }`, the body of every error. */
export const errorBodySchema = z.strictObject({
  statusCode: z.int(),
  message: z
    .union([z.string(), z.array(z.string())])
    .describe('An array of every problem for 400; one sentence otherwise'),
  error: z.string(),
});

export type ErrorBody = z.infer<typeof errorBodySchema>;

export function errorBody(statusCode: number, message: string | readonly string[]): ErrorBody {
  // A 400 always lists its problems (as validation errors do); other statuses carry one sentence.
  const text = typeof message === 'string' ? (statusCode === 400 ? [message] : message) : [...message];
  return { statusCode, message: text, error: STATUS_CODES[statusCode] ?? 'Error' };
}
