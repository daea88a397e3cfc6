import type { StoredSecret } from '../shared/secret-box.js';
/** What the webhook use-cases and the delivery worker need from storage (src/db/webhooks/webhook.store.ts). */

export interface WebhookEndpointRecord {
  readonly id: string;
  readonly organisationId: string;
  readonly url: string;
  /** Event types delivered here; empty = every type. */
  readonly events: readonly string[];
  readonly enabled: boolean;
  /** The sealed secrets with the row they belong to (src/domain/shared/secret-box.ts). */
  readonly secretCiphertext: StoredSecret;
  readonly previousSecretCiphertext: StoredSecret | null;
  readonly previousSecretExpiresAt: Date | null;
  readonly createdAt: Date;
  readonly updatedAt: Date;
}

export interface WebhookEndpointPatch {
  readonly url?: string;
  readonly events?: readonly string[];
  readonly enabled?: boolean;
  readonly secretCiphertext?: string;
  readonly previousSecretCiphertext?: string | null;
  readonly previousSecretExpiresAt?: Date | null;
  /** The secret stored when the row is locked becomes the previous one (a rotation: secretCiphertext is the new). */
  readonly rotateSecret?: boolean;
}

export type WebhookDeliveryStatus = 'pending' | 'succeeded' | 'failed';

/** What a receiver answered: its body up to 64 KiB (docs/dashboard.md#webhooks) and its headers. */
export interface ReceiverResponse {
  readonly body: string;
  /** Bytes read, or the Content-Length when the body was cut; null when cut without one. */
  readonly size: number | null;
  readonly truncated: boolean;
  /** Lower-case names; repeated headers joined with ", ". */
  readonly headers: Readonly<Record<string, string>>;
}

export interface WebhookAttemptRecord {
  readonly attempt: number;
  readonly statusCode: number | null;
  readonly latencyMs: number;
  readonly error: string | null;
  readonly responseExcerpt: string | null;
  /** The whole answer as kept; null when none is (no answer, an older attempt, or cleared after 30 days). */
  readonly response?: ReceiverResponse | null;
  /** What is known of the answer once its body is cleared: its size and whether the excerpt is less than it. */
  readonly responseSize?: number | null;
  readonly responseTruncated?: boolean;
  readonly createdAt: Date;
}

export interface WebhookDeliveryRecord {
  readonly id: string;
  readonly endpointId: string;
  readonly eventId: string;
  readonly eventType: string;
  readonly status: WebhookDeliveryStatus;
  readonly attempts: number;
  readonly nextAttemptAt: Date;
  readonly giveUpAt: Date;
  readonly lastStatus: number | null;
  readonly lastError: string | null;
  readonly deliveredAt: Date | null;
  readonly createdAt: Date;
  readonly attemptLog: readonly WebhookAttemptRecord[];
}

/** An outbox event as merchants see it (feed and webhook envelope). */
export interface StoredEvent {
  readonly id: string;
  readonly seq: bigint;
  readonly organisationId: string;
  readonly sessionId: string | null;
  readonly type: string;
  readonly payload: unknown;
  readonly createdAt: Date;
}

/** A delivery this instance leased for one attempt. */
export interface ClaimedDelivery {
  readonly deliveryId: string;
  readonly leaseToken: string;
  readonly attempt: number;
  readonly endpoint: WebhookEndpointRecord;
  readonly event: StoredEvent;
}

export interface AttemptOutcome {
  readonly ok: boolean;
  readonly statusCode: number | null;
  readonly latencyMs: number;
  readonly error: string | null;
  readonly responseExcerpt: string | null;
  readonly response?: ReceiverResponse | null;
  /** Wait before the next attempt when this one failed. */
  readonly retryDelayMs: number;
}

export interface WebhookStore {
  /**
   * Inserts the endpoint unless its organisation already has `maxPerOrganisation` (null then; counted under the
   * organisation's row lock, so two creates at once cannot pass it); it receives events written after this moment.
   */
  createEndpoint(
    input: Omit<
      WebhookEndpointRecord,
      'createdAt' | 'updatedAt' | 'secretCiphertext' | 'previousSecretCiphertext' | 'previousSecretExpiresAt'
    > & { secretCiphertext: string },
    maxPerOrganisation: number,
  ): Promise<WebhookEndpointRecord | null>;
  findEndpoint(id: string): Promise<WebhookEndpointRecord | null>;
  listEndpoints(organisationId: string): Promise<WebhookEndpointRecord[]>;
  /** Null when the endpoint does not exist. Re-enabling starts from events written after now. */
  updateEndpoint(id: string, patch: WebhookEndpointPatch): Promise<WebhookEndpointRecord | null>;
  deleteEndpoint(id: string): Promise<boolean>;
  listDeliveries(endpointId: string, limit: number): Promise<WebhookDeliveryRecord[]>;
  findDelivery(id: string): Promise<WebhookDeliveryRecord | null>;
  findEvent(id: string): Promise<StoredEvent | null>;
  /** Makes the delivery pending and due now, with a fresh give-up time. */
  redeliver(deliveryId: string, giveUpHours: number): Promise<void>;
  /**
   * Queues the event again for every enabled endpoint of its organisation whose filter matches; returns the delivery
   * ids.
   */
  redeliverEvent(event: StoredEvent, giveUpHours: number): Promise<string[]>;
  /**
   * Events of an organisation after `afterSeq` up to the final horizon (no transaction in flight can add one below it),
   * in seq order; reads only, the horizon moves in fanOut.
   */
  listEvents(query: {
    organisationId: string;
    afterSeq: bigint;
    limit: number;
    sessionId?: string;
  }): Promise<StoredEvent[]>;
  /**
   * The key of the events feed's cursors (src/domain/webhooks/event-cursor.ts): a random secret of the installation,
   * made on first use and the same for every instance on the database.
   */
  eventsCursorKey(): Promise<Buffer>;
  /**
   * Creates deliveries for new outbox events and advances the horizon over what is final
   * (a hole open for `gapSeconds` is taken as a rolled-back transaction); returns deliveries created.
   */
  fanOut(options: { gapSeconds: number; giveUpHours: number; batch: number }): Promise<number>;
  /**
   * Leases due deliveries of up to `endpoints` endpoints, up to `perEndpoint` each, oldest first, under one token for
   * `leaseMs`; an endpoint with a leased delivery is not claimed, and organisations with fewer in flight go first.
   */
  claimDue(
    endpoints: number,
    perEndpoint: number,
    leaseMs: number,
    perOrganisation: number,
  ): Promise<ClaimedDelivery[]>;
  /**
   * Leases the rest of a batch (the first of `claims` about to be attempted) for `leaseMs` from now; false when the
   * first is no longer this instance's (its lease lapsed and another claim took it over): it is not to be attempted.
   */
  renewLease(claims: readonly ClaimedDelivery[], leaseMs: number): Promise<boolean>;
  /** Logs the attempt and settles the delivery (when this instance still holds the lease). */
  recordAttempt(claim: ClaimedDelivery, outcome: AttemptOutcome): Promise<void>;
  /** Gives back leased deliveries that were not attempted (their attempt is not counted). */
  releaseClaims(claims: readonly ClaimedDelivery[]): Promise<void>;
}
