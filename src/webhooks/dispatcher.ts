import type { DomainContext } from '../domain/context.js';
import { signPayload } from '../domain/organisations/signatures.js';
import { toEventEnvelope } from '../domain/webhooks/webhook.views.js';
import { activeSecrets } from '../domain/webhooks/webhook-secrets.js';
import type { ClaimedDelivery } from '../domain/webhooks/webhook-ports.js';
import type { WebhookSettings } from '../domain/webhooks/webhook-settings.js';
import type { Logger } from '../logging.js';
import { postJson } from './http-post.js';

/** Endpoints served at once by one instance. */
const CLAIM_ENDPOINTS = 20;
/**
 * Endpoints of one organisation in flight at once on all instances, so one merchant's endpoints that never answer
 * cannot take every slot; organisations take turns for the slots (fewest in flight first).
 */
const CLAIM_PER_ORGANISATION = CLAIM_ENDPOINTS / 2;
/**
 * Deliveries of one endpoint leased together and attempted in event order (docs/api/webhooks.md#how-delivery-works); a
 * failed attempt gives the rest of its batch back, so a receiver that is down costs one timeout per pass.
 */
const CLAIM_PER_ENDPOINT = 25;
const ROUND_BUDGET_MS = 5_000;

/** Exponential backoff with full jitter: random(0, min(max, base × 2^(attempt-1))). */
export function retryDelayMs(
  attempt: number,
  config: Pick<WebhookSettings, 'retryBaseMs' | 'retryMaxMs'>,
  random: () => number = Math.random,
): number {
  const ceiling = Math.min(config.retryMaxMs, config.retryBaseMs * 2 ** Math.min(Math.max(attempt - 1, 0), 40));
  return Math.floor(random() * ceiling);
}

/**
 * Lease of an endpoint's batch, renewed before each attempt (docs/api/webhooks.md#how-delivery-works): an attempt and
 * its record fit in it, and a killed instance's deliveries are attempted again elsewhere within about two timeouts.
 */
export function leaseMs(config: Pick<WebhookSettings, 'timeoutMs'>): number {
  return config.timeoutMs + Math.max(config.timeoutMs, 5_000);
}

/** The request body and headers of one attempt (the timestamp is Unix milliseconds, as in inbound calls). */
export function buildWebhookRequest(
  ctx: DomainContext,
  claim: ClaimedDelivery,
  now: Date,
): { body: string; headers: Record<string, string> } {
  const body = JSON.stringify(toEventEnvelope(claim.event));
  const timestamp = String(now.getTime());
  const signatures = activeSecrets(ctx, claim.endpoint, now).map((secret) => signPayload(secret, timestamp, body));
  return {
    body,
    headers: {
      'X-Service-Event-Id': claim.event.id,
      'X-Service-Timestamp': timestamp,
      'X-Service-Signature': signatures.join(','),
    },
  };
}

async function attempt(ctx: DomainContext, claim: ClaimedDelivery, logger: Logger): Promise<boolean> {
  const config = ctx.webhooks;
  const { body, headers } = buildWebhookRequest(ctx, claim, new Date());
  const result = await postJson(claim.endpoint.url, body, headers, {
    timeoutMs: config.timeoutMs,
    allowPrivate: config.allowPrivate,
    httpsOnly: config.httpsOnly,
    resolveHost: ctx.resolveHost,
  });
  const ok = result.statusCode !== null && result.statusCode >= 200 && result.statusCode < 300;
  const error = ok ? null : (result.error ?? `HTTP ${result.statusCode}`);
  await ctx.store.webhooks.recordAttempt(claim, {
    ok,
    ...result,
    error,
    retryDelayMs: retryDelayMs(claim.attempt, config),
  });
  const log = {
    deliveryId: claim.deliveryId,
    endpointId: claim.endpoint.id,
    eventId: claim.event.id,
    attempt: claim.attempt,
    status: result.statusCode,
    latencyMs: Math.round(result.latencyMs),
  };
  if (ok) logger.info(log, 'webhook delivered');
  else logger.warn({ ...log, error }, 'webhook attempt failed');
  return ok;
}

/**
 * One endpoint's batch in order, its lease renewed before each attempt after the first; after a failure or once the
 * round's time is up, the rest is given back. A batch whose lease was lost to another instance stops there.
 */
async function attemptInOrder(
  ctx: DomainContext,
  claims: readonly ClaimedDelivery[],
  logger: Logger,
  deadline: number,
  stop?: AbortSignal,
): Promise<number> {
  for (const [index, claim] of claims.entries()) {
    if (stop?.aborted) {
      await ctx.store.webhooks.releaseClaims(claims.slice(index));
      return index;
    }
    if (index > 0) {
      let ours: boolean;
      try {
        ours = await ctx.store.webhooks.renewLease(claims.slice(index), leaseMs(ctx.webhooks));
      } catch (error) {
        logger.error({ err: error, deliveryId: claim.deliveryId }, 'webhook lease could not be renewed');
        await ctx.store.webhooks.releaseClaims(claims.slice(index)).catch(() => undefined);
        return index;
      }
      if (!ours) return index;
    }
    let ok: boolean;
    try {
      ok = await attempt(ctx, claim, logger);
    } catch (error) {
      // Not recorded: the rest of the batch is given back at once rather than left leased. This one stays leased: it
      // may have been sent, and its lease holds off the next try.
      logger.error({ err: error, deliveryId: claim.deliveryId }, 'webhook attempt could not be recorded');
      await ctx.store.webhooks.releaseClaims(claims.slice(index + 1)).catch(() => undefined);
      return index + 1;
    }
    if (!ok || Date.now() >= deadline || stop?.aborted) {
      await ctx.store.webhooks.releaseClaims(claims.slice(index + 1));
      return index + 1;
    }
  }
  return claims.length;
}

/**
 * One round: fan new outbox events out to deliveries, lease due batches (up to CLAIM_ENDPOINTS endpoints) and attempt
 * them in parallel, HTTP outside any transaction; a slot refills as soon as its batch ends. Returns the attempts made.
 */
export async function runWebhookRound(ctx: DomainContext, logger: Logger, stop?: AbortSignal): Promise<number> {
  const config = ctx.webhooks;
  const started = Date.now();
  const deadline = started + ROUND_BUDGET_MS;
  const claimUntil = deadline + config.timeoutMs;
  let attempts = 0;
  const inFlight = new Set<Promise<void>>();
  let failure: unknown = null;
  // When the queue last had nothing due: it is asked again no sooner than a poll later.
  let askAgainAt = 0;
  for (;;) {
    const now = Date.now();
    // Once stopped, nothing more is claimed and each batch hands its rest back after its current attempt, so no
    // endpoint's events stay held by leases after exit.
    const claiming = failure === null && !stop?.aborted && (now < deadline || (inFlight.size > 0 && now < claimUntil));
    if (claiming && inFlight.size < CLAIM_ENDPOINTS && now >= askAgainAt) {
      let claims: ClaimedDelivery[];
      try {
        await ctx.store.webhooks.fanOut({
          gapSeconds: config.outboxGapSeconds,
          giveUpHours: config.giveUpHours,
          batch: 500,
        });
        claims = await ctx.store.webhooks.claimDue(
          CLAIM_ENDPOINTS - inFlight.size,
          CLAIM_PER_ENDPOINT,
          leaseMs(config),
          CLAIM_PER_ORGANISATION,
        );
      } catch (error) {
        // Thrown once what is in flight has ended: the round never leaves attempts running behind it.
        failure = error;
        continue;
      }
      // Stopped while claiming: what was just leased goes back at once.
      if (stop?.aborted) {
        await ctx.store.webhooks.releaseClaims(claims).catch(() => undefined);
        continue;
      }
      if (claims.length === 0) askAgainAt = Date.now() + config.pollMs;
      const byEndpoint = new Map<string, ClaimedDelivery[]>();
      for (const claim of claims)
        byEndpoint.set(claim.endpoint.id, [...(byEndpoint.get(claim.endpoint.id) ?? []), claim]);
      for (const batch of byEndpoint.values()) {
        const work: Promise<void> = attemptInOrder(ctx, batch, logger, deadline, stop)
          .then(
            (made) => void (attempts += made),
            (error: unknown) => void (failure ??= error),
          )
          .finally(() => {
            inFlight.delete(work);
            // Its endpoint may have more due (a batch is at most CLAIM_PER_ENDPOINT), others may be due by now.
            askAgainAt = 0;
          });
        inFlight.add(work);
      }
      if (claims.length > 0) continue;
    }
    if (inFlight.size === 0) {
      if (claiming && failure === null && Date.now() < deadline && askAgainAt <= Date.now()) continue;
      break;
    }
    // A slot frees, or it is time to ask the queue again (or to stop asking).
    const wait = claiming && inFlight.size < CLAIM_ENDPOINTS ? Math.max(askAgainAt - Date.now(), 0) : undefined;
    let timer: NodeJS.Timeout | undefined;
    let onStop: (() => void) | undefined;
    await Promise.race([
      ...inFlight,
      ...(wait === undefined ? [] : [new Promise<void>((resolve) => (timer = setTimeout(resolve, wait)))]),
      ...(stop && !stop.aborted
        ? [
            new Promise<void>((resolve) => {
              onStop = () => resolve();
              stop.addEventListener('abort', onStop, { once: true });
            }),
          ]
        : []),
    ]);
    clearTimeout(timer);
    if (onStop) stop?.removeEventListener('abort', onStop);
  }
  if (failure !== null) throw failure;
  return attempts;
}
