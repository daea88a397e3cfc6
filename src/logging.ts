import { pino, stdSerializers, type DestinationStream, type Logger } from 'pino';
import { redactUrlsIn } from './config/redact-url.js';

/** Structured JSON logs (to stdout unless told where); secrets and signatures never reach them. */
export function createLogger(level: string, destination?: DestinationStream): Logger {
  const options = {
    level,
    base: { service: 'kassa' },
    // An RPC client's error names the URL it called, API key and all: logged errors show scheme and host only.
    serializers: { err: (error: unknown) => withoutUrlSecrets(stdSerializers.err(error as Error)) },
    redact: {
      paths: [
        'req.headers["x-service-signature"]',
        'req.headers.authorization',
        'req.headers.cookie',
        'apiSecret',
        '*.apiSecret',
      ],
      censor: '[redacted]',
    },
  };
  return destination ? pino(options, destination) : pino(options);
}

/**
 * A serialised error with every URL in its strings redacted (docs/operations.md#configuration,
 * KASSA_RPC_URLS_<SLUG>).
 */
function withoutUrlSecrets(value: unknown, depth = 0): unknown {
  if (typeof value === 'string') return redactUrlsIn(value);
  if (value === null || typeof value !== 'object' || depth > 8) return value;
  if (Array.isArray(value)) return value.map((item) => withoutUrlSecrets(item, depth + 1));
  return Object.fromEntries(Object.entries(value).map(([key, inner]) => [key, withoutUrlSecrets(inner, depth + 1)]));
}

/** A merchant who pastes the secret (sk_…) into X-Service-Key must not find it in our logs. */
export function redactMisplacedSecret<T extends { headers?: Record<string, unknown> }>(req: T): T {
  const key = req.headers?.['x-service-key'];
  if (typeof key === 'string' && !key.startsWith('pk_'))
    return { ...req, headers: { ...req.headers, 'x-service-key': '[redacted]' } };
  return req;
}

export type { Logger };
