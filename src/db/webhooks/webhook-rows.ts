import { Prisma } from '../../generated/prisma/client.js';
import type { StoredEvent, WebhookEndpointRecord } from '../../domain/webhooks/webhook-ports.js';

/**
 * Webhook rows as the domain's records, and what the webhook stores share. Every step is a short transaction, with HTTP
 * between them, never inside (the embedded database has a single pooled connection).
 */

export const WEBHOOK_TRANSACTION_OPTIONS = { maxWait: 20_000, timeout: 30_000 } as const;

/** A duration in milliseconds as a PostgreSQL interval. */
export const sqlMilliseconds = (value: number) => Prisma.sql`(${value}::double precision * interval '1 millisecond')`;

export type EndpointRow = Prisma.WebhookEndpointGetPayload<object>;

export function toEndpoint(row: EndpointRow): WebhookEndpointRecord {
  // Bound to this row: the AES-GCM additional data of both secrets.
  const boundRow = { table: 'webhook_endpoints', id: row.id } as const;
  return {
    id: row.id,
    organisationId: row.organisationId,
    url: row.url,
    events: row.events,
    enabled: row.enabled,
    secretCiphertext: { sealed: row.secretCiphertext, row: boundRow },
    previousSecretCiphertext:
      row.previousSecretCiphertext === null ? null : { sealed: row.previousSecretCiphertext, row: boundRow },
    previousSecretExpiresAt: row.previousSecretExpiresAt,
    createdAt: row.createdAt,
    updatedAt: row.updatedAt,
  };
}

/** An outbox_events row as raw SQL returns it (select EVENT_COLUMNS). */
export interface EventRow {
  id: string;
  seq: bigint;
  organisation_id: string;
  session_id: string | null;
  type: string;
  payload: unknown;
  created_at: Date;
}

export const EVENT_COLUMNS = Prisma.sql`id, seq, organisation_id, session_id, type, payload, created_at`;

export function toEvent(row: EventRow): StoredEvent {
  return {
    id: row.id,
    seq: BigInt(row.seq),
    organisationId: row.organisation_id,
    sessionId: row.session_id,
    type: row.type,
    payload: row.payload,
    createdAt: row.created_at,
  };
}
