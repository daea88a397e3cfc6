import { randomBytes, randomUUID } from 'node:crypto';
import type { DomainContext } from './context.js';
import { DomainError, invalid, notFound } from './errors.js';
import { openSecret, sealSecret } from './secret-box.js';
import { isUuid } from './uuid.js';
import type { StoredEvent, WebhookDeliveryRecord, WebhookEndpointRecord } from './webhook-ports.js';
import { resolveWebhookHost, webhookUrlProblems } from './webhook-url.js';

/** Every event type an endpoint can subscribe to (DESIGN.md §4 "Events and webhooks"). */
export const WEBHOOK_EVENT_TYPES = [
  'checkout_session.created',
  'checkout_session.tx_bound',
  'checkout_session.partially_paid',
  'checkout_session.paid',
  'checkout_session.expired',
  'checkout_session.failed',
  'checkout_session.late_payment',
  'checkout_session.payment_reversed',
] as const;

export interface WebhookEndpointInput {
  readonly url?: unknown;
  readonly events?: unknown;
  readonly enabled?: unknown;
}

export interface IssuedWebhookSecret {
  readonly endpoint: WebhookEndpointRecord;
  /** Shown only now. */
  readonly secret: string;
}

/** `whsec_` + 64 hex characters; the whole string is the HMAC key. */
export function newWebhookSecret(): string {
  return `whsec_${randomBytes(32).toString('hex')}`;
}

/** The secrets that sign deliveries right now: the current one, and the previous one during a rotation's overlap. */
export function activeSecrets(ctx: DomainContext, endpoint: WebhookEndpointRecord, now: Date): string[] {
  const secrets = [openSecret(endpoint.secretCiphertext, ctx.masterKey)];
  if (endpoint.previousSecretCiphertext && endpoint.previousSecretExpiresAt && endpoint.previousSecretExpiresAt > now) {
    secrets.push(openSecret(endpoint.previousSecretCiphertext, ctx.masterKey));
  }
  return secrets;
}

function eventsProblems(value: unknown): { events: string[]; problems: string[] } {
  if (value === undefined || value === null) return { events: [], problems: [] };
  if (!Array.isArray(value)) return { events: [], problems: ['events must be an array of event types'] };
  const problems: string[] = [];
  value.forEach((type, index) => {
    if (typeof type !== 'string' || !(WEBHOOK_EVENT_TYPES as readonly string[]).includes(type)) {
      problems.push(`events.${index} must be one of ${WEBHOOK_EVENT_TYPES.join(', ')}`);
    }
  });
  if (value.length > WEBHOOK_EVENT_TYPES.length * 2) problems.push(`events must list at most ${WEBHOOK_EVENT_TYPES.length * 2} types`);
  return { events: [...new Set(value.filter((type): type is string => typeof type === 'string'))], problems };
}

export const HTTPS_ONLY_PROBLEM = 'url must use https in production (events and their signatures must not travel in clear)';

/**
 * The rules of a URL whose syntax is fine that depend on configuration: https
 * only in production, then the SSRF rule (resolves the host). Returns the
 * problem (plain http, unresolvable, not a public address) as messages, [] when
 * it passes or when the syntax is wrong (that is reported by the syntax check).
 */
export async function webhookUrlAddressProblems(ctx: DomainContext, value: unknown): Promise<string[]> {
  const { url, problems } = webhookUrlProblems(value);
  if (!url || problems.length > 0) return [];
  if (ctx.webhooks.httpsOnly && url.protocol !== 'https:') return [HTTPS_ONLY_PROBLEM];
  try {
    await resolveWebhookHost(url, ctx.webhooks.allowPrivate, ctx.resolveHost);
    return [];
  } catch (error) {
    if (error instanceof DomainError && error.code === 'invalid') return [...error.messages];
    throw error;
  }
}

/** Checks URL syntax, then resolves it (SSRF rule); throws `invalid` with every problem, the URL's and `extraProblems`. */
async function checkedUrl(ctx: DomainContext, value: unknown, extraProblems: string[]): Promise<string> {
  const { url, problems } = webhookUrlProblems(value);
  const all = [...problems, ...(await webhookUrlAddressProblems(ctx, value)), ...extraProblems];
  if (all.length > 0 || !url) throw invalid(all);
  return url.toString();
}

async function requireOrganisation(ctx: DomainContext, organisationId: string): Promise<void> {
  if (!isUuid(organisationId)) throw notFound(`Organisation ${organisationId} not found`);
  const organisation = await ctx.store.organisations.findById(organisationId);
  if (!organisation || organisation.deleted) throw notFound(`Organisation ${organisationId} not found`);
}

export async function createWebhookEndpoint(ctx: DomainContext, organisationId: string, input: WebhookEndpointInput): Promise<IssuedWebhookSecret> {
  await requireOrganisation(ctx, organisationId);
  const { events, problems } = eventsProblems(input.events);
  if (input.enabled !== undefined && typeof input.enabled !== 'boolean') problems.push('enabled must be a boolean');
  const url = await checkedUrl(ctx, input.url, problems);
  const secret = newWebhookSecret();
  const id = randomUUID();
  const endpoint = await ctx.store.webhooks.createEndpoint({
    id,
    organisationId,
    url,
    events,
    enabled: input.enabled === undefined ? true : (input.enabled as boolean),
    secretCiphertext: sealSecret(secret, ctx.masterKey, { table: 'webhook_endpoints', id }),
  });
  return { endpoint, secret };
}

/** The organisation's endpoints; an unknown, deleted or malformed organisation id is "not found" (as for keys). */
export async function listWebhookEndpoints(ctx: DomainContext, organisationId: string): Promise<WebhookEndpointRecord[]> {
  await requireOrganisation(ctx, organisationId);
  return ctx.store.webhooks.listEndpoints(organisationId);
}

/** The endpoint, when it exists and (for a merchant call) belongs to the organisation; else 404. */
export async function getWebhookEndpoint(ctx: DomainContext, organisationId: string | null, id: string): Promise<WebhookEndpointRecord> {
  const endpoint = isUuid(id) ? await ctx.store.webhooks.findEndpoint(id) : null;
  if (!endpoint || (organisationId !== null && endpoint.organisationId !== organisationId)) throw notFound(`Webhook endpoint ${id} not found`);
  return endpoint;
}

export async function updateWebhookEndpoint(
  ctx: DomainContext,
  organisationId: string | null,
  id: string,
  input: WebhookEndpointInput,
): Promise<WebhookEndpointRecord> {
  await getWebhookEndpoint(ctx, organisationId, id);
  const { events, problems } = eventsProblems(input.events);
  if (input.enabled !== undefined && typeof input.enabled !== 'boolean') problems.push('enabled must be a boolean');
  const url = input.url === undefined ? undefined : await checkedUrl(ctx, input.url, problems);
  if (problems.length > 0) throw invalid(problems);
  const updated = await ctx.store.webhooks.updateEndpoint(id, {
    ...(url !== undefined ? { url } : {}),
    ...(input.events !== undefined ? { events } : {}),
    ...(input.enabled !== undefined ? { enabled: input.enabled as boolean } : {}),
  });
  if (!updated) throw notFound(`Webhook endpoint ${id} not found`);
  return updated;
}

export async function removeWebhookEndpoint(ctx: DomainContext, organisationId: string | null, id: string): Promise<void> {
  await getWebhookEndpoint(ctx, organisationId, id);
  if (!(await ctx.store.webhooks.deleteEndpoint(id))) throw notFound(`Webhook endpoint ${id} not found`);
}

/** Issues a new secret; the current one keeps signing (a second signature) for the configured overlap. */
export async function rotateWebhookSecret(
  ctx: DomainContext,
  organisationId: string | null,
  id: string,
): Promise<IssuedWebhookSecret & { previousSecretExpiresAt: Date }> {
  const current = await getWebhookEndpoint(ctx, organisationId, id);
  const secret = newWebhookSecret();
  const previousSecretExpiresAt = new Date(ctx.clock().getTime() + ctx.webhooks.secretOverlapHours * 3_600_000);
  const endpoint = await ctx.store.webhooks.updateEndpoint(id, {
    secretCiphertext: sealSecret(secret, ctx.masterKey, { table: 'webhook_endpoints', id: current.id }),
    // Same row, so the binding still holds in the other column.
    previousSecretCiphertext: current.secretCiphertext.sealed,
    previousSecretExpiresAt,
  });
  if (!endpoint) throw notFound(`Webhook endpoint ${id} not found`);
  return { endpoint, secret, previousSecretExpiresAt };
}

export async function listWebhookDeliveries(ctx: DomainContext, organisationId: string | null, endpointId: string, limit = 100): Promise<WebhookDeliveryRecord[]> {
  await getWebhookEndpoint(ctx, organisationId, endpointId);
  return ctx.store.webhooks.listDeliveries(endpointId, limit);
}

/**
 * Manual redelivery: a delivery id queues that delivery again; an event id
 * queues the event for every enabled endpoint of its organisation whose filter
 * matches. Either way the delivery is due at once with a fresh give-up time.
 */
export async function redeliverWebhook(ctx: DomainContext, id: string): Promise<{ kind: 'delivery' | 'event'; deliveryIds: string[] }> {
  if (!isUuid(id)) throw notFound(`No webhook delivery or event ${id}`);
  const delivery = await ctx.store.webhooks.findDelivery(id);
  if (delivery) {
    await ctx.store.webhooks.redeliver(delivery.id, ctx.webhooks.giveUpHours);
    return { kind: 'delivery', deliveryIds: [delivery.id] };
  }
  const event = await ctx.store.webhooks.findEvent(id);
  if (!event) throw notFound(`No webhook delivery or event ${id}`);
  const deliveryIds = await ctx.store.webhooks.redeliverEvent(event, ctx.webhooks.giveUpHours);
  if (deliveryIds.length === 0) throw invalid([`No enabled webhook endpoint of organisation ${event.organisationId} subscribes to ${event.type}`]);
  return { kind: 'event', deliveryIds };
}

/** The event as merchants receive it, in webhooks and in the feed. */
export interface EventEnvelope {
  readonly id: string;
  readonly type: string;
  readonly created_at: string;
  readonly data: unknown;
}

export function toEventEnvelope(event: StoredEvent): EventEnvelope {
  return { id: event.id, type: event.type, created_at: event.createdAt.toISOString(), data: event.payload };
}

/** Public JSON of an endpoint (never the secret). */
export function toEndpointView(endpoint: WebhookEndpointRecord, now: Date = new Date()) {
  const rotating = endpoint.previousSecretExpiresAt !== null && endpoint.previousSecretExpiresAt > now;
  return {
    id: endpoint.id,
    organisation_id: endpoint.organisationId,
    url: endpoint.url,
    events: [...endpoint.events],
    enabled: endpoint.enabled,
    previous_secret_expires_at: rotating ? endpoint.previousSecretExpiresAt!.toISOString() : null,
    created_at: endpoint.createdAt.toISOString(),
    updated_at: endpoint.updatedAt.toISOString(),
  };
}

export function toDeliveryView(delivery: WebhookDeliveryRecord) {
  return {
    id: delivery.id,
    endpoint_id: delivery.endpointId,
    event_id: delivery.eventId,
    event_type: delivery.eventType,
    status: delivery.status,
    attempts: delivery.attempts,
    next_attempt_at: delivery.status === 'pending' ? delivery.nextAttemptAt.toISOString() : null,
    give_up_at: delivery.giveUpAt.toISOString(),
    last_status: delivery.lastStatus,
    last_error: delivery.lastError,
    delivered_at: delivery.deliveredAt?.toISOString() ?? null,
    created_at: delivery.createdAt.toISOString(),
    attempt_log: delivery.attemptLog.map((attempt) => ({
      attempt: attempt.attempt,
      status_code: attempt.statusCode,
      latency_ms: attempt.latencyMs,
      error: attempt.error,
      response_excerpt: attempt.responseExcerpt,
      at: attempt.createdAt.toISOString(),
    })),
  };
}

export const EVENTS_PAGE_DEFAULT = 50;
export const EVENTS_PAGE_MAX = 100;

/**
 * The events feed: the organisation's events after an opaque cursor (the
 * outbox seq), in order, only up to the point where no transaction still in
 * flight can add an earlier one — so paging never skips an event.
 */
export async function listEvents(
  ctx: DomainContext,
  organisationId: string,
  query: { after?: string; limit?: number; sessionId?: string },
): Promise<{ data: EventEnvelope[]; next_cursor: string | null; has_more: boolean }> {
  const afterSeq = query.after === undefined ? 0n : BigInt(query.after);
  const limit = query.limit ?? EVENTS_PAGE_DEFAULT;
  // The feed reads only up to the outbox horizon: move it over what has committed since (fanning
  // those events out, as the delivery round does), so a page is as fresh as the outbox allows.
  const { outboxGapSeconds, giveUpHours } = ctx.webhooks;
  await ctx.store.webhooks.fanOut({ gapSeconds: outboxGapSeconds, giveUpHours, batch: 1000 });
  const rows = await ctx.store.webhooks.listEvents({
    organisationId,
    afterSeq,
    limit: limit + 1,
    sessionId: query.sessionId,
  });
  const page = rows.slice(0, limit);
  const last = page[page.length - 1];
  return {
    data: page.map(toEventEnvelope),
    next_cursor: last ? last.seq.toString() : (query.after ?? null),
    has_more: rows.length > limit,
  };
}
