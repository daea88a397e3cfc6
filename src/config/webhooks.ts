import type { EnvReader } from './env-reader.js';

/** Webhook delivery (src/webhooks, docs/api/webhooks.md). */
export interface WebhookConfig {
  /** Timeout of one delivery attempt. */
  readonly timeoutMs: number;
  /** Exponential backoff with full jitter: attempt n waits random(0, min(max, base × 2^(n-1))). */
  readonly retryBaseMs: number;
  readonly retryMaxMs: number;
  /** After this long since the event, a delivery that still fails is marked failed. */
  readonly giveUpHours: number;
  /** How often an instance looks for events to fan out and deliveries that are due. */
  readonly pollMs: number;
  /** Allow endpoints on loopback, private, link-local and other non-public addresses (SSRF guard off). */
  readonly allowPrivate: boolean;
  /** Only https endpoints (production, not configurable): events and their signatures never travel in clear. */
  readonly httpsOnly: boolean;
  /** How long the previous secret keeps signing after a rotation. */
  readonly secretOverlapHours: number;
  /** How long a gap in the outbox sequence may stay open before it is taken as a rolled-back transaction. */
  readonly outboxGapSeconds: number;
}

export function readWebhookConfig(read: EnvReader, production: boolean): WebhookConfig {
  return {
    timeoutMs: read.integer('KASSA_WEBHOOK_TIMEOUT_MS', 10_000, 100, 60_000),
    retryBaseMs: read.integer('KASSA_WEBHOOK_RETRY_BASE_MS', 10_000, 10, 3_600_000),
    retryMaxMs: read.integer('KASSA_WEBHOOK_RETRY_MAX_MS', 3_600_000, 10, 86_400_000),
    giveUpHours: read.number('KASSA_WEBHOOK_GIVE_UP_HOURS', 72, 0.0001, 720),
    pollMs: read.integer('KASSA_WEBHOOK_POLL_MS', 1_000, 10, 60_000),
    allowPrivate: read.boolean('KASSA_WEBHOOK_ALLOW_PRIVATE', !production),
    httpsOnly: production,
    secretOverlapHours: read.number('KASSA_WEBHOOK_SECRET_OVERLAP_HOURS', 24, 0, 720),
    outboxGapSeconds: read.integer('KASSA_OUTBOX_GAP_SECONDS', 60, 1, 3600),
  };
}
