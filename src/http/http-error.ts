import { STATUS_CODES } from 'node:http';
import { z } from 'zod';
import { REASON_CODE_LIST, type ReasonCode } from '../domain/shared/reason-codes.js';

/**
 * A transport-level refusal (malformed JSON, 413, 415, unknown route) with the error body
 * (docs/api/rest.md#errors).
 */
export class HttpError extends Error {
  constructor(
    readonly statusCode: number,
    readonly body: string | readonly string[],
    readonly headers: Readonly<Record<string, string>> = {},
    /** The reason code; by default the one of its status (codeOfStatus). */
    readonly code: ReasonCode | null = codeOfStatus(statusCode),
  ) {
    super(typeof body === 'string' ? body : body.join('; '));
    this.name = 'HttpError';
  }
}

/**
 * docs/api/rest.md#errors: `{ statusCode, message, error, code }`, the body of every error; `code` is the stable
 * reason a client branches on (docs/api/rest.md#error-codes).
 */
export const errorBodySchema = z.strictObject({
  statusCode: z.int(),
  message: z
    .union([z.string(), z.array(z.string())])
    .describe('An array of every problem for 400; one sentence otherwise'),
  error: z.string(),
  code: z
    .enum(REASON_CODE_LIST as [ReasonCode, ...ReasonCode[]])
    .optional()
    .describe('The stable reason code a client branches on (docs/api/rest.md#error-codes); messages may change'),
});

export type ErrorBody = z.infer<typeof errorBodySchema>;

export function errorBody(
  statusCode: number,
  message: string | readonly string[],
  code: ReasonCode | null = null,
): ErrorBody {
  // A 400 always lists its problems (as validation errors do); other statuses carry one sentence.
  const text = typeof message === 'string' ? (statusCode === 400 ? [message] : message) : [...message];
  return { statusCode, message: text, error: STATUS_CODES[statusCode] ?? 'Error', ...(code ? { code } : {}) };
}

/** The reason code of a refusal that names none of its own, by its status. */
export function codeOfStatus(statusCode: number): ReasonCode | null {
  return CODE_BY_STATUS[statusCode] ?? null;
}

const CODE_BY_STATUS: Readonly<Record<number, ReasonCode>> = {
  400: 'validation_failed',
  401: 'unauthenticated',
  403: 'forbidden',
  404: 'not_found',
  405: 'method_not_allowed',
  409: 'conflict',
  410: 'gone',
  413: 'body_too_large',
  415: 'unsupported_media_type',
  422: 'unprocessable',
  429: 'rate_limited',
  503: 'unavailable',
};
