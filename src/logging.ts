import { pino, type Logger } from 'pino';

/** Structured JSON logs; secrets and signatures never reach them. */
export function createLogger(level: string): Logger {
  return pino({
    level,
    base: { service: 'kassa' },
    redact: {
      paths: ['req.headers["x-service-signature"]', 'req.headers.authorization', 'req.headers.cookie', 'apiSecret', '*.apiSecret'],
      censor: '[redacted]',
    },
  });
}

export type { Logger };
