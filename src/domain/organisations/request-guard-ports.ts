/**
 * Storage the request guards need (docs/api/rest.md#rate-limits): the replay cache of merchant signatures and the
 * rate-limit counters.
 */

/** Signatures of accepted merchant calls, so that none is accepted twice. Shared through the database. */
export interface SignatureReplayCache {
  /**
   * False when the signature was recorded before: a replay. Atomic, so of concurrent callers on any instance exactly
   * one gets true; `sessionId` is the session a create signed with it is answered with.
   */
  remember(
    apiKeyId: string,
    signature: string,
    keepUntil: Date,
    now: Date,
    sessionId?: string | null,
  ): Promise<boolean>;
  /** The session a create signed with `signature` was to make, when a create recorded it. */
  sessionMadeWith(apiKeyId: string, signature: string): Promise<string | null>;
}

/** One hit on a fixed window of a rate-limit key. */
export interface CounterHit {
  readonly key: string;
  /** The window's start and end, in epoch milliseconds. */
  readonly windowStart: number;
  readonly windowEnd: number;
  /** The limit the count is held to: a store may count in memory while a count is far from it. */
  readonly limit: number;
}

/** Hit counts per key and fixed window: in PostgreSQL (shared by instances) or in memory (embedded database). */
export interface RateLimitCounters {
  /**
   * Each window's count after the hit, in the order given: exact near the limit, never more than the true count
   * (docs/api/rest.md#rate-limits says how far instances may lag far from it).
   */
  hit(hits: readonly CounterHit[], now: number): Promise<number[]>;
  /**
   * `hit` without a promise when every count is known here, so a request far from its limits costs no await;
   * undefined (nothing counted) when `hit` must ask the store.
   */
  hitInMemory?(hits: readonly CounterHit[], now: number): number[] | undefined;
}

/**
 * Express's `trust proxy` value (TRUST_PROXY, docs/operations.md#configuration): false, true (X-Forwarded-For is
 * believed as sent), a hop count, or addresses, subnets and the names loopback, linklocal, uniquelocal.
 */
export type TrustProxySetting = boolean | number | readonly string[];

/** One request to take from a token bucket (GCRA, docs/api/rest.md#rate-limits). */
export interface BucketTake {
  /** `limit:subject`. */
  readonly key: string;
  /** The emission interval: one token comes back every this many milliseconds (window / limit). */
  readonly intervalMs: number;
  /** The bucket's size in time (the window): a full bucket lets `burstMs / intervalMs` requests through at once. */
  readonly burstMs: number;
}

/**
 * Token buckets, as each key's theoretical arrival time: in PostgreSQL (shared by instances) or in memory
 * (embedded database). A refused request takes nothing.
 */
export interface RateLimitBuckets {
  /** Takes one token: null when taken, else the time (epoch ms) one is free again. `now` in epoch ms. */
  take(take: BucketTake, now: number): Promise<number | null>;
  /** `take` without waiting when it can be judged here: its answer, or undefined (nothing taken) to ask `take`. */
  takeInMemory?(take: BucketTake, now: number): number | null | undefined;
}
