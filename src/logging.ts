import { pino, type DestinationStream, type Logger } from 'pino';

/** Structured JSON logs (to stdout unless told where); secrets and signatures never reach them. */
export function createLogger(level: string, destination?: DestinationStream): Logger {
  const options = {
    level,
    base: { service: 'kassa' },
    redact: {
      paths: ['req.headers["x-service-signature"]', 'req.headers.authorization', 'req.headers.cookie', 'apiSecret', '*.apiSecret'],
      censor: '[redacted]',
    },
  };
  return destination ? pino(options, destination) : pino(options);
}

/** A merchant who pastes the secret (sk_…) into X-Service-Key must not find it in our logs. */
export function redactMisplacedSecret<T extends { headers?: Record<string, unknown> }>(req: T): T {
  const key = req.headers?.['x-service-key'];
  if (typeof key === 'string' && !key.startsWith('pk_')) return { ...req, headers: { ...req.headers, 'x-service-key': '[redacted]' } };
  return req;
}

export type { Logger };
