import { DomainError } from '../shared/errors.js';
import type { BucketTake, CounterHit, RateLimitBuckets, RateLimitCounters } from './request-guard-ports.js';

/**
 * Rate limits (docs/api/rest.md#rate-limits): fixed windows per subject, or token buckets for the limits that allow a
 * burst, in stores shared by the instances or in memory (embedded database).
 */
export const RATE_LIMIT_NAMES = [
  'auth_failures',
  'auth_failures_key',
  'create',
  'bind_session',
  'bind_address',
  'graphql',
  'websocket',
  'qr',
  'link_sessions',
  'unknown_sessions',
  'refund_claims',
] as const;
export type RateLimitName = (typeof RATE_LIMIT_NAMES)[number];

export interface RateLimitRule {
  readonly limit: number;
  readonly windowSeconds: number;
}

/** One rule per limit; null turns a limit off. */
export type RateLimitRules = Readonly<Record<RateLimitName, RateLimitRule | null>>;

/** What each limit counts, as its 429 message says it. */
const COUNTED: Record<RateLimitName, string> = {
  auth_failures: 'failed signature checks from this address',
  auth_failures_key: 'failed signature checks naming this API key',
  create: 'checkout sessions created with this API key',
  bind_session: 'binds of this checkout session',
  bind_address: 'binds from this address',
  graphql: 'GraphQL operations from this address',
  websocket: 'GraphQL WebSocket connections from this address',
  qr: 'QR codes from this address',
  link_sessions: 'checkout sessions started from payment links by this address',
  unknown_sessions: 'reads of unknown checkout sessions from this address',
  refund_claims: 'refund claim pages and addresses sent from this address',
};

/**
 * Limits counted as a token bucket (GCRA) instead of a fixed window: `<count>/<window>` is a bucket of `count`
 * requests at once, refilled at `count` per window (create: 1000/10s is 100 a second with bursts of 1000).
 */
export const BUCKET_LIMITS: ReadonlySet<RateLimitName> = new Set<RateLimitName>(['create']);

/** The setting of a limit (src/config/request-guard.ts reads it). */
export const rateLimitVariable = (name: RateLimitName) => `KASSA_RATE_LIMIT_${name.toUpperCase()}`;

/** Limits whose 429 says which setting raises them: those a merchant's integration meets, not a payer's page. */
const NAMES_ITS_SETTING: ReadonlySet<RateLimitName> = new Set<RateLimitName>(['create']);

/** A request over a limit: REST 429 with Retry-After, GraphQL TOO_MANY_REQUESTS. */
export class RateLimitedError extends DomainError {
  constructor(
    readonly limit: RateLimitName,
    /** Whole seconds until the window ends, or a bucket has a token again (at least 1). */
    readonly retryAfterSeconds: number,
    rule: RateLimitRule,
  ) {
    const burst = BUCKET_LIMITS.has(limit) ? `, in bursts of up to ${rule.limit}` : '';
    const raise = NAMES_ITS_SETTING.has(limit) ? rateLimitVariable(limit) : undefined;
    super(
      'rate_limited',
      `Too many ${COUNTED[limit]}: at most ${rule.limit} per ${rule.windowSeconds} s${burst}; retry after ` +
        `${retryAfterSeconds} s` +
        (raise ? ` (the operator of this Kassa raises the limit with ${raise})` : ''),
    );
  }
}

type Check = readonly [RateLimitName, string];

interface BucketCheck {
  readonly limit: RateLimitName;
  readonly rule: RateLimitRule;
  readonly take: BucketTake;
}

/** What counting a request needs of the domain context (the whole DomainContext fits). */
export interface RateLimitContext {
  readonly requestGuard: { readonly throttle: Throttle };
  readonly clock: () => Date;
}

// Subjects known to be over a limit, until their window ends: refused without a round trip.
const MAX_REMEMBERED_BLOCKS = 10_000;
// Counter keys built so far, per limit (the same few subjects ask again and again).
const MAX_KEPT_KEYS = 10_000;

/**
 * A subject found over a limit is remembered in this process until its window ends, so a flood is refused without
 * touching the store; other instances learn it from the shared count.
 */
export class Throttle {
  private readonly blockedUntil = new Map<string, number>();
  private readonly listeners = new Set<(limit: RateLimitName) => void>();
  private readonly keys = new Map<RateLimitName, Map<string, string>>();

  constructor(
    private readonly counters: RateLimitCounters,
    readonly rules: RateLimitRules,
    private readonly buckets: RateLimitBuckets = memoryBuckets(),
  ) {}

  /**
   * Counts one request for every check (one store call for all); throws RateLimitedError for the first one over its
   * limit.
   */
  async consume(checks: readonly Check[], now: Date): Promise<void> {
    await this.count(checks, now);
  }

  /**
   * consume, answered at once (undefined) when the counters can count in memory, as they do far from every limit;
   * else a promise. Throws (or rejects with) RateLimitedError for the first check over its limit.
   */
  count(checks: readonly Check[], now: Date): Promise<void> | undefined {
    const nowMs = now.getTime();
    let hits: CounterHit[] | undefined;
    let limits: Array<{ readonly limit: RateLimitName; readonly rule: RateLimitRule }> | undefined;
    let takes: BucketCheck[] | undefined;
    for (const [limit, subject] of checks) {
      const rule = this.rules[limit];
      if (!rule) continue;
      const key = this.keyOf(limit, subject);
      const until = this.blockedUntil.get(key);
      if (until !== undefined && until > nowMs) throw this.refusal(limit, rule, until, now);
      const windowMs = rule.windowSeconds * 1000;
      if (BUCKET_LIMITS.has(limit)) {
        (takes ??= []).push({ limit, rule, take: { key, intervalMs: windowMs / rule.limit, burstMs: windowMs } });
        continue;
      }
      const windowStart = Math.floor(nowMs / windowMs) * windowMs;
      (hits ??= []).push({ key, windowStart, windowEnd: windowStart + windowMs, limit: rule.limit });
      (limits ??= []).push({ limit, rule });
    }
    const counted = hits === undefined ? undefined : this.countWindows(hits, limits!, now);
    if (takes === undefined) return counted;
    const bucketTakes = takes;
    return counted === undefined
      ? this.takeAll(bucketTakes, 0, now)
      : counted.then(() => this.takeAll(bucketTakes, 0, now));
  }

  private countWindows(
    hits: readonly CounterHit[],
    limits: ReadonlyArray<{ readonly limit: RateLimitName; readonly rule: RateLimitRule }>,
    now: Date,
  ): Promise<void> | undefined {
    const nowMs = now.getTime();
    const counts = this.counters.hitInMemory?.(hits, nowMs);
    if (counts !== undefined) return this.judge(hits, limits, counts, now);
    return this.counters.hit(hits, nowMs).then((answer) => this.judge(hits, limits, answer, now));
  }

  /** Takes one token from each bucket from `from` on, in order; throws for the first one empty. */
  private takeAll(takes: readonly BucketCheck[], from: number, now: Date): Promise<void> | undefined {
    const nowMs = now.getTime();
    for (let index = from; index < takes.length; index++) {
      const check = takes[index]!;
      const answer = this.buckets.takeInMemory?.(check.take, nowMs);
      if (answer === undefined)
        return this.buckets.take(check.take, nowMs).then((freeAt) => {
          this.judgeTake(check, freeAt, now);
          return this.takeAll(takes, index + 1, now);
        });
      this.judgeTake(check, answer, now);
    }
    return undefined;
  }

  private judgeTake(check: BucketCheck, freeAt: number | null, now: Date): void {
    if (freeAt === null) return;
    this.remember(check.take.key, freeAt, now);
    throw this.refusal(check.limit, check.rule, freeAt, now);
  }

  private judge(
    hits: readonly CounterHit[],
    limits: ReadonlyArray<{ readonly limit: RateLimitName; readonly rule: RateLimitRule }>,
    counts: readonly number[],
    now: Date,
  ): undefined {
    for (let index = 0; index < hits.length; index++) {
      const { limit, rule } = limits[index]!;
      if (counts[index]! <= rule.limit) continue;
      const { key, windowEnd } = hits[index]!;
      this.remember(key, windowEnd, now);
      throw this.refusal(limit, rule, windowEnd, now);
    }
    return undefined;
  }

  /**
   * `limit:subject`, the key its count is kept under: built once per subject (bounded), so a request
   * asking again builds no string and hashes none.
   */
  private keyOf(limit: RateLimitName, subject: string): string {
    let keys = this.keys.get(limit);
    if (keys === undefined) this.keys.set(limit, (keys = new Map()));
    let key = keys.get(subject);
    if (key === undefined) {
      if (keys.size >= MAX_KEPT_KEYS) keys.clear();
      keys.set(subject, (key = `${limit}:${subject}`));
    }
    return key;
  }

  /** Called with the limit's name on every refusal (metrics). */
  onRefusal(listener: (limit: RateLimitName) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  private refusal(limit: RateLimitName, rule: RateLimitRule, untilMs: number, now: Date): RateLimitedError {
    for (const listener of this.listeners) listener(limit);
    return new RateLimitedError(limit, Math.max(1, Math.ceil((untilMs - now.getTime()) / 1000)), rule);
  }

  private remember(key: string, untilMs: number, now: Date): void {
    if (this.blockedUntil.size >= MAX_REMEMBERED_BLOCKS) {
      for (const [known, until] of this.blockedUntil) if (until <= now.getTime()) this.blockedUntil.delete(known);
      // Still full: forget them all; the shared counts refuse them again.
      if (this.blockedUntil.size >= MAX_REMEMBERED_BLOCKS) this.blockedUntil.clear();
    }
    this.blockedUntil.set(key, untilMs);
  }
}

/**
 * GCRA over `tat`, a bucket's theoretical arrival time (before `now`: full): a request is taken when
 * `max(tat, now) + interval` stays within `now + burst`, giving the new `tat`; null when refused.
 */
export function gcraTake(tat: number, take: BucketTake, now: number): number | null {
  const next = Math.max(tat, now) + take.intervalMs;
  return next - now <= take.burstMs ? next : null;
}

/** When a refused bucket has a token again: its `tat` less the burst, plus one interval. */
export function gcraFreeAt(tat: number, take: BucketTake): number {
  return tat + take.intervalMs - take.burstMs;
}

/** Buckets in this process's memory, exact (the embedded database, and unit tests). */
export function memoryBuckets(): RateLimitBuckets & { takeInMemory(take: BucketTake, now: number): number | null } {
  const tats = new Map<string, number>();
  const takeInMemory = (take: BucketTake, now: number): number | null => {
    const tat = tats.get(take.key) ?? Number.NEGATIVE_INFINITY;
    const next = gcraTake(tat, take, now);
    if (next === null) return gcraFreeAt(tat, take);
    if (tats.size >= MAX_KEPT_KEYS) {
      for (const [key, until] of tats) if (until <= now) tats.delete(key);
      // Still full: every bucket starts full again (a flood of subjects only refills them).
      if (tats.size >= MAX_KEPT_KEYS) tats.clear();
    }
    tats.set(take.key, next);
    return null;
  };
  return { takeInMemory, take: async (take, now) => takeInMemory(take, now) };
}

/**
 * Counts one request against each `[limit, subject]` (docs/api/rest.md#rate-limits); throws RateLimitedError when
 * one is over. Answers at once (undefined) when the count needed no round trip; `await` it either way.
 */
export function rateLimit(ctx: RateLimitContext, ...checks: Check[]): Promise<void> | undefined {
  return ctx.requestGuard.throttle.count(checks, ctx.clock());
}

/**
 * One bind attempt from `clientAddress`, whatever its shape, counted against the per-address limit (REST bind-tx and
 * GraphQL's bindTransaction share it).
 */
export function throttleBindAddress(ctx: RateLimitContext, clientAddress: string): Promise<void> | undefined {
  return rateLimit(ctx, ['bind_address', clientAddress]);
}

/**
 * A well-formed bind of `sessionId` (a UUID) from `clientAddress`, counted against the per-session limit per session
 * and address: a stranger's binds use up their own count, never the payer's (docs/api/rest.md#rate-limits).
 */
export function throttleSessionBind(
  ctx: RateLimitContext,
  sessionId: string,
  clientAddress: string,
): Promise<void> | undefined {
  return rateLimit(ctx, ['bind_session', `${sessionId.toLowerCase()} ${clientAddress}`]);
}
