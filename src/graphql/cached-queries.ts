import { Kind, type OperationDefinitionNode } from 'graphql';
import type { CheckoutSession } from '../domain/sessions/checkout-session.js';
import type { DomainContext } from '../domain/context.js';
import { cachedCheckoutSession, stillCached } from '../domain/sessions/get-checkout-session.js';
import type { FlatHeaders } from '../metrics.js';
import type { ColdQueries } from './cold-queries.js';
import {
  countIn,
  headersFor,
  rewrite,
  timeFields,
  timeLeftChangesAt,
  timeTemplate,
  type TimeTemplate,
} from './kept-answer-time.js';

/**
 * `checkoutSession` answers kept per instance (docs/decisions/0010-caches-and-lanes.md): served again only while each
 * session read is still the cache's object and its time is not up, with `secondsUntilExpiry` rewritten as Apollo would.
 */
export interface CachedAnswer {
  /** What the request asked, as it was filed under (see CachedQueries.find). */
  readonly asked: string;
  /** The method and Accept header of the request it answered (see CachedQueries.find). */
  readonly method: 'GET' | 'POST';
  readonly accept: string;
  readonly status: number;
  /** Apollo's headers, Content-Length and ETag, flat, as the lane sends them (src/metrics.ts: answerAtOnce). */
  sentHeaders: FlatHeaders;
  body: Buffer;
  /**
   * The sessions it read, held weakly: an answer is served only while each is the cache's object, so one the cache
   * dropped may be collected (a kept answer no longer keeps its sessions, and their views, alive).
   */
  readonly sessions: ReadonlyArray<WeakRef<CheckoutSession>>;
  /** Domain-clock milliseconds from which the answer may differ (the time left changes). */
  validUntil: number;
  /** How to write the answer again when the time left changes (see timeTemplate); absent: not served past it. */
  readonly template?: TimeTemplate;
  /** Whether it is still filed (not replaced, dropped or evicted): only a filed answer is served. */
  filed: boolean;
}

/** What one HTTP operation read, for CachedQueries.keep (filled by the resolvers and an Apollo plugin). */
export interface QueryTrace {
  readonly sessions: CheckoutSession[];
  /** The domain clock when the first session was read (its time left is computed then). */
  readAt: Date | undefined;
  operation: OperationDefinitionNode | undefined;
  errors: boolean;
}

export function newQueryTrace(): QueryTrace {
  return { sessions: [], readAt: undefined, operation: undefined, errors: false };
}

const CAPACITY = 10_000;
/**
 * What the kept answers may hold in all, counted as the bytes of what each was asked and of its answer: the entry
 * count alone let anyone fill the heap (a query padded with an unused variable of 100 KB is a new entry each time).
 */
const BYTE_BUDGET = 16 * 1024 * 1024;
/** A request larger than this is never kept: the hosted page's query is about 430 bytes as a URL. */
export const MAX_KEPT_REQUEST_BYTES = 4096;
/** Nor an answer larger than this (a query asking one session many times over under aliases). */
export const MAX_KEPT_ANSWER_BYTES = 64 * 1024;

export class CachedQueries {
  private readonly answers = new Map<string, CachedAnswer>();
  /** The bytes the filed answers hold (see BYTE_BUDGET). */
  private bytes = 0;
  /**
   * The answer each connection was last served or looked up: a page polls one query on one keep-alive connection, and
   * comparing with what it asked last costs less than hashing a long URL or body.
   */
  private readonly lastOnConnection = new WeakMap<object, CachedAnswer>();
  /** Answers served from here so far (for tests and curiosity; not a metric). */
  hits = 0;
  /** Cold reads answered without Apollo so far (for tests and curiosity; not a metric). */
  coldHits = 0;
  /** Where the shapes of Apollo's kept answers are learned, for cold reads of other sessions (see answerCold). */
  cold: ColdQueries | undefined;

  constructor(
    private readonly capacity = CAPACITY,
    private readonly byteBudget = BYTE_BUDGET,
  ) {}

  /**
   * The kept answer to `asked` (its method, exact bytes and Accept, so a hit needs no parsing) if still the answer now;
   * one kept per `asked`. `connection`'s last answer is tried first.
   */
  find(
    method: 'GET' | 'POST',
    asked: string,
    accept: string | undefined,
    ctx: DomainContext,
    connection?: object,
  ): CachedAnswer | undefined {
    let answer = connection === undefined ? undefined : this.lastOnConnection.get(connection);
    if (answer === undefined || !answer.filed || answer.asked !== asked) {
      answer = this.answers.get(asked);
      if (answer === undefined) return undefined;
      if (connection !== undefined) this.lastOnConnection.set(connection, answer);
    }
    if (answer.method !== method || answer.accept !== (accept ?? '')) return undefined;
    const now = ctx.clock();
    let current = true;
    for (let i = 0; current && i < answer.sessions.length; i++) {
      const session = answer.sessions[i]!.deref();
      current = session !== undefined && stillCached(ctx, session, now);
    }
    if (current && now.getTime() >= answer.validUntil) {
      const before = weight(answer);
      current = answer.template !== undefined && rewrite(answer, now);
      this.bytes += weight(answer) - before;
    }
    if (!current) {
      this.unfile(answer);
      return undefined;
    }
    this.hits += 1;
    return answer;
  }

  /**
   * Keeps Apollo's answer when it may be served again (see the class comment). `sessions` are
   * the sessions its resolvers read; `now` the domain clock when they read them.
   */
  keep(
    request: { method: 'GET' | 'POST'; asked: string; accept: string | undefined },
    ctx: DomainContext,
    outcome: {
      operation: OperationDefinitionNode | undefined;
      errors: boolean;
      status: number;
      headers: ReadonlyArray<readonly [string, string]> | FlatHeaders;
      body: string;
      /** The body's text around its `secondsUntilExpiry` values, when its maker knows it (see answerCold). */
      timeParts?: readonly string[];
      /**
       * Made without Apollo from a shape learned already (answerCold): nothing to learn from it, its headers flat, and
       * its timeParts joined with the count are its body.
       */
      cold?: boolean;
    },
    sessions: readonly CheckoutSession[],
    now: Date,
  ): CachedAnswer | undefined {
    if (outcome.errors || outcome.status !== 200 || sessions.length === 0 || !readsOnlySessions(outcome.operation))
      return undefined;
    if (request.asked.length > MAX_KEPT_REQUEST_BYTES) return undefined;
    // Only sessions this instance's cache holds as they are: their replacement is what tells a change.
    if (!sessions.every((session) => cachedCheckoutSession(ctx, session.id) === session)) return undefined;
    const body = Buffer.from(outcome.body, 'utf8');
    if (body.length > MAX_KEPT_ANSWER_BYTES) return undefined;
    const apolloHeaders = outcome.cold ? (outcome.headers as FlatHeaders) : outcome.headers.flat();
    // Which `secondsUntilExpiry` the answer holds: none (kept until a change), some (written again as they tick), or
    // maybe some where they cannot be told apart (undefined: not served past the second).
    const counts = sessions.length === 1 ? timeFields(outcome.operation!) : undefined;
    const { timeParts } = outcome;
    const template = !counts?.keys.length
      ? undefined
      : timeParts?.length === counts.keys.length + 1 &&
          (outcome.cold || timeParts.join(String(countIn(sessions[0]!, now))) === outcome.body)
        ? { parts: timeParts, apolloHeaders }
        : timeTemplate(counts, outcome.body, apolloHeaders);
    const previous = this.answers.get(request.asked);
    if (previous !== undefined) this.unfile(previous);
    const answer: CachedAnswer = {
      asked: request.asked,
      method: request.method,
      accept: request.accept ?? '',
      status: outcome.status,
      sentHeaders: headersFor(apolloHeaders, body),
      body,
      sessions: sessions.map((session) => new WeakRef(session)),
      validUntil: counts?.keys.length === 0 ? Number.POSITIVE_INFINITY : timeLeftChangesAt(sessions, now),
      ...(template && { template }),
      filed: true,
    };
    this.answers.set(request.asked, answer);
    this.bytes += weight(answer);
    // The oldest filed go first (a Map keeps the order of filing).
    while (this.answers.size > this.capacity || this.bytes > this.byteBudget)
      this.unfile(this.answers.values().next().value!);
    if (!outcome.cold) this.cold?.learn(request, outcome.operation!, apolloHeaders, outcome.body, sessions);
    return answer.filed ? answer : undefined;
  }

  /**
   * The answer Apollo would give `asked`, made without Apollo from a learned shape (src/graphql/cold-queries.ts) and
   * kept; undefined at once when no shape fits, and from the promise when the request must go on to Apollo.
   */
  answerCold(
    method: 'GET' | 'POST',
    asked: string,
    accept: string | undefined,
    ctx: DomainContext,
  ): Promise<{ status: number; headers: FlatHeaders; body: Buffer } | undefined> | undefined {
    return this.cold?.answer(method, asked, accept, ctx)?.then((cold) => {
      if (cold === undefined) return undefined;
      const outcome = {
        operation: cold.operation,
        errors: false,
        status: cold.status,
        headers: cold.apolloHeaders,
        body: cold.body,
        timeParts: cold.timeParts,
        cold: true,
      };
      const kept = this.keep({ method, asked, accept }, ctx, outcome, [cold.session], cold.readAt);
      this.coldHits += 1;
      if (kept !== undefined) return { status: kept.status, headers: kept.sentHeaders, body: kept.body };
      const body = Buffer.from(cold.body, 'utf8');
      return { status: cold.status, headers: headersFor(cold.apolloHeaders, body), body };
    });
  }

  /** Takes `answer` out of `answers` (and so out of every connection's memory: only a filed answer is served). */
  private unfile(answer: CachedAnswer): void {
    answer.filed = false;
    if (this.answers.get(answer.asked) === answer) {
      this.answers.delete(answer.asked);
      this.bytes -= weight(answer);
    }
  }

  get size(): number {
    return this.answers.size;
  }

  /** The bytes the kept answers hold (what they were asked and their answers), at most the byte budget. */
  get heldBytes(): number {
    return this.bytes;
  }
}

/** What a kept answer holds, for the byte budget: what it was asked, its answer and its template (about as long). */
function weight(answer: CachedAnswer): number {
  return answer.asked.length + answer.body.length * (answer.template === undefined ? 1 : 2);
}

/** A query whose every top-level field is `checkoutSession` (aliases allowed; nothing else at the root). */
function readsOnlySessions(operation: OperationDefinitionNode | undefined): boolean {
  if (operation?.operation !== 'query') return false;
  return operation.selectionSet.selections.every(
    (selection) => selection.kind === Kind.FIELD && selection.name.value === 'checkoutSession',
  );
}
