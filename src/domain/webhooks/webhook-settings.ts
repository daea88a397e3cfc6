/**
 * The webhook policy of the use-cases and the delivery worker (docs/api/webhooks.md), defined where it is used;
 * src/config/webhooks.ts reads it from the environment.
 */
export interface WebhookSettings {
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
