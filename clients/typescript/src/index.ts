/**
 * @kassa/client — a dependency-free client for Kassa's REST API (Node 20+:
 * node:crypto and the global fetch). Signs merchant calls (spec §5 for create,
 * method, path and query too for the others), sends
 * idempotency keys on create, pages the events feed and verifies webhooks.
 */
import { createHmac, randomUUID, timingSafeEqual } from 'node:crypto';

// ---------------------------------------------------------------- types

export type CheckoutStatus = 'pending' | 'waiting_payment' | 'partial' | 'paid' | 'expired' | 'failed';

export type EventType =
  | 'checkout_session.created'
  | 'checkout_session.tx_bound'
  | 'checkout_session.partially_paid'
  | 'checkout_session.paid'
  | 'checkout_session.expired'
  | 'checkout_session.failed'
  | 'checkout_session.late_payment'
  | 'checkout_session.payment_reversed';

export interface CreateCheckoutSessionInput {
  user: { id: string; email: string; username?: string };
  items: Array<{ name: string; quantity: number; unit_price: number; product_id?: string }>;
  /** ISO 4217, e.g. "USD". */
  currency: string;
  metadata?: Record<string, unknown>;
  expires_in_minutes?: number;
}

/** The crypto tickers Kassa quotes and binds (spec §1, §2.5). */
export type CryptoTicker = 'BTC' | 'USDT' | 'BNB' | 'SOL' | 'USDC' | 'ETH';

/** Spec §2.3. Amounts are decimal strings with 8 fractional digits. */
export interface CryptoOption {
  ticker: CryptoTicker;
  /** Asset identifier, e.g. "ethereum". */
  id: string;
  /** Price of 1 unit in the session's quote currency. */
  unit_price_fiat: string;
  /** What the payer must send. */
  amount: string;
}

/** The payer as the merchant described them on create (spec §2.1 `user`). */
export interface CheckoutUser {
  id: string;
  email: string | null;
  telegram_id: string | null;
  username: string | null;
}

/** Spec §2.1, exactly these fields (amounts are 8-decimal strings). */
export interface PublicSession {
  session_id: string;
  status: CheckoutStatus;
  source: string;
  from_payment_link: boolean;
  anonymous: boolean;
  requires_payer_identity: boolean;
  identity_options: string[];
  product_payment_link_id: string | null;
  total_amount_crypto: string | null;
  crypto_currency: CryptoTicker | null;
  crypto_options: CryptoOption[];
  fiat_currency: string;
  total_amount_fiat: string;
  wallet_address: string;
  supported_networks: string[];
  expires_at: string;
  overpaid: boolean;
  bound_tx_hash: string | null;
  payer_wallet_address: string | null;
  chain_id: string | null;
  user: CheckoutUser;
}

/** A line item of the merchant view (spec §2.2 `items`). */
export interface SessionItem {
  name: string;
  quantity: number;
  /** 8-decimal string in the session's quote currency. */
  unit_price: string;
  total_price: string;
  product_id: string | null;
}

/** Spec §2.2: every field of the public view plus the merchant's. */
export interface MerchantSession extends PublicSession {
  organisation_id: string;
  organisation_name: string | null;
  organisation_deleted: boolean;
  owner_user_id: string | null;
  /** {checkout_base_url}/pay/<session_id>: send the payer here. */
  checkout_url: string;
  items: SessionItem[];
  metadata: Record<string, unknown>;
  created_at: string;
}

export interface BindTransactionInput {
  tx_hash: string;
  /** Decimal EIP-155 id ("56"); hex "0x38" is accepted. */
  chain_id: string;
  /** Required unless the session already has one. */
  crypto_currency?: CryptoTicker;
  payer_wallet_address?: string;
}

/** Spec §2.6. */
export interface BindResult {
  session_id: string;
  bound_tx_hash: string;
  crypto_currency: CryptoTicker;
  total_amount_crypto: string;
  status: CheckoutStatus;
  /** true when this transaction was already bound to the session (a replay). */
  idempotent: boolean;
}

/** The envelope of a webhook body and of a feed entry. */
export interface KassaEvent {
  /** Also sent as X-Service-Event-Id: deduplicate on it. */
  id: string;
  type: EventType;
  created_at: string;
  /** The merchant view of the session when the event happened. */
  data: MerchantSession;
}

export interface EventPage {
  data: KassaEvent[];
  /** Pass as `after` for the next page. */
  next_cursor: string | null;
  has_more: boolean;
}

export interface WebhookEndpoint {
  id: string;
  organisation_id: string;
  url: string;
  events: EventType[];
  enabled: boolean;
  previous_secret_expires_at: string | null;
  created_at: string;
  updated_at: string;
}

// ---------------------------------------------------------------- errors

/** An answer other than 2xx, with Kassa's error body (spec §7); status 0 for a KassaNetworkError. */
export class KassaError extends Error {
  override readonly name: string = 'KassaError';
  /** Every problem (a 400 lists several). */
  readonly messages: string[];

  constructor(
    readonly status: number,
    readonly body: { statusCode?: number; message?: string | string[]; error?: string } | null,
    options?: { cause?: unknown; messages?: string[] },
  ) {
    const messages = options?.messages ?? (body?.message === undefined ? [`HTTP ${status}`] : Array.isArray(body.message) ? body.message : [body.message]);
    super(`${status} ${body?.error ?? ''}: ${messages.join('; ')}`.replace(/ +:/, ':'), options?.cause === undefined ? undefined : { cause: options.cause });
    this.messages = messages;
  }
}

/**
 * No HTTP answer at all: the connection failed (server down, DNS, TLS, reset)
 * or the request timed out, after the retries the call allows. `status` is 0,
 * `body` null, `cause` the underlying error (e.g. fetch's TypeError).
 */
export class KassaNetworkError extends KassaError {
  override readonly name: string = 'KassaNetworkError';

  constructor(
    readonly method: string,
    readonly url: string,
    cause: unknown,
  ) {
    super(0, null, { cause, messages: [`${method} ${url} failed: ${describeNetworkFailure(cause)}`] });
    this.message = `network error: ${this.messages[0]}`;
  }
}

function describeNetworkFailure(error: unknown): string {
  if (error instanceof Error && (error.name === 'TimeoutError' || error.name === 'AbortError')) return 'no answer before the timeout';
  const cause = error instanceof Error ? (error.cause as { code?: string; message?: string } | undefined) : undefined;
  const detail = cause?.code ?? cause?.message;
  const message = error instanceof Error ? error.message : String(error);
  return detail && !message.includes(detail) ? `${message} (${detail})` : message;
}

export class WebhookVerificationError extends Error {
  override readonly name = 'WebhookVerificationError';
}

// ---------------------------------------------------------------- signing

/** Hex HMAC-SHA256 of `{timestamp}.{rawBody}`: Kassa's scheme for webhooks and for creating a session (spec §5). */
export function sign(secret: string, timestamp: string, rawBody: string | Uint8Array): string {
  return createHmac('sha256', secret).update(`${timestamp}.`).update(rawBody).digest('hex');
}

/**
 * Hex HMAC-SHA256 of `{timestamp}.{METHOD}.{path?query}.{rawBody}`: Kassa's
 * scheme for every signed call but create (webhook endpoints, the events feed).
 * `target` is the path and query exactly as sent, e.g. `/events?limit=10`.
 */
export function signRequest(secret: string, timestamp: string, method: string, target: string, rawBody: string | Uint8Array): string {
  return createHmac('sha256', secret).update(`${timestamp}.${method}.${target}.`).update(rawBody).digest('hex');
}

function hexEqual(expectedHex: string, givenHex: string): boolean {
  const expected = Buffer.from(expectedHex, 'hex');
  const given = /^(?:[0-9a-fA-F]{2})+$/.test(givenHex) ? Buffer.from(givenHex, 'hex') : Buffer.alloc(0);
  // Compare equal lengths in constant time; a wrong length compares against zeros and fails.
  const comparable = given.length === expected.length ? given : Buffer.alloc(expected.length);
  return timingSafeEqual(expected, comparable) && given.length === expected.length;
}

export interface VerifyWebhookInput {
  /** The request body exactly as received (do not re-serialise parsed JSON). */
  rawBody: string | Uint8Array;
  /** The request headers (any case), or the three values. */
  headers: Record<string, string | string[] | undefined> | Headers;
  /** The endpoint secret(s); during your own rotation pass both. */
  secret: string | readonly string[];
  /** Accepted clock difference, default 5 minutes. */
  toleranceMs?: number;
  now?: number;
}

/**
 * Checks X-Service-Signature (one or more comma-separated signatures, any
 * matching one of `secret` is enough) and the X-Service-Timestamp window, in
 * constant time; returns the parsed event or throws WebhookVerificationError.
 */
export function verifyWebhook(input: VerifyWebhookInput): KassaEvent {
  const header = (name: string): string | undefined => {
    if (input.headers instanceof Headers) return input.headers.get(name) ?? undefined;
    const entry = Object.entries(input.headers).find(([key]) => key.toLowerCase() === name);
    const value = entry?.[1];
    return Array.isArray(value) ? value[0] : value;
  };
  const timestamp = header('x-service-timestamp');
  const signatures = header('x-service-signature');
  const eventId = header('x-service-event-id');
  if (!timestamp || !signatures) throw new WebhookVerificationError('Missing X-Service-Timestamp or X-Service-Signature');
  if (!/^\d{1,16}$/.test(timestamp)) throw new WebhookVerificationError('X-Service-Timestamp is not Unix milliseconds');
  const tolerance = input.toleranceMs ?? 5 * 60_000;
  if (Math.abs((input.now ?? Date.now()) - Number(timestamp)) > tolerance) throw new WebhookVerificationError('X-Service-Timestamp is outside the tolerance');
  const secrets = typeof input.secret === 'string' ? [input.secret] : input.secret;
  const presented = signatures.split(',').map((value) => value.trim());
  let valid = false;
  for (const secret of secrets) {
    const expected = sign(secret, timestamp, input.rawBody);
    // No early exit: every pair is compared.
    for (const candidate of presented) valid = hexEqual(expected, candidate) || valid;
  }
  if (!valid) throw new WebhookVerificationError('No signature in X-Service-Signature matches');
  const text = typeof input.rawBody === 'string' ? input.rawBody : Buffer.from(input.rawBody).toString('utf8');
  const event = JSON.parse(text) as KassaEvent;
  if (eventId !== undefined && eventId !== event.id) throw new WebhookVerificationError('X-Service-Event-Id does not match the body');
  return event;
}

// ---------------------------------------------------------------- client

export interface KassaClientOptions {
  /** e.g. https://pay.example.com */
  baseUrl: string;
  /** pk_… */
  apiKey: string;
  /** sk_… */
  apiSecret: string;
  /** Per request, default 30 s. */
  timeoutMs?: number;
  /** Retries of network errors and 5xx on calls that are safe to repeat (creates carry an idempotency key). Default 2. */
  maxRetries?: number;
  fetch?: typeof fetch;
}

export class KassaClient {
  private readonly baseUrl: string;
  private readonly fetch: typeof fetch;
  private lastTimestamp = 0;

  constructor(private readonly options: KassaClientOptions) {
    this.baseUrl = options.baseUrl.replace(/\/+$/, '');
    this.fetch = options.fetch ?? globalThis.fetch;
  }

  /**
   * POST /checkout-sessions. Always sends an Idempotency-Key (yours, e.g. the
   * order id, or a fresh UUID), so a retried create never makes two sessions.
   */
  createCheckoutSession(input: CreateCheckoutSessionInput, options: { idempotencyKey?: string } = {}): Promise<MerchantSession> {
    return this.request('POST', '/checkout-sessions', { body: input, signed: true, headers: { 'Idempotency-Key': options.idempotencyKey ?? randomUUID() }, retry: true });
  }

  getCheckoutSession(id: string): Promise<PublicSession> {
    return this.request('GET', `/checkout-sessions/${encodeURIComponent(id)}`, { retry: true });
  }

  bindTransaction(id: string, input: BindTransactionInput): Promise<BindResult> {
    // Binding the same hash again is idempotent on the server, so it may be retried.
    return this.request('POST', `/checkout-sessions/${encodeURIComponent(id)}/bind-tx`, { body: input, retry: true });
  }

  /** One page of the events feed (GET /events). */
  listEvents(query: { after?: string | null; limit?: number; sessionId?: string } = {}): Promise<EventPage> {
    const params = new URLSearchParams();
    if (query.after) params.set('after', query.after);
    if (query.limit !== undefined) params.set('limit', String(query.limit));
    if (query.sessionId) params.set('session_id', query.sessionId);
    const search = params.toString();
    return this.request('GET', `/events${search ? `?${search}` : ''}`, { signed: true, retry: true });
  }

  /** Every event after `after`, page by page; keep the last `id`'s cursor (`onCursor`) to resume later. */
  async *events(query: { after?: string | null; sessionId?: string; pageSize?: number; onCursor?: (cursor: string | null) => void } = {}): AsyncGenerator<KassaEvent> {
    let after = query.after ?? null;
    for (;;) {
      const page = await this.listEvents({ after, limit: query.pageSize ?? 100, sessionId: query.sessionId });
      for (const event of page.data) yield event;
      after = page.next_cursor;
      query.onCursor?.(after);
      if (!page.has_more) return;
    }
  }

  createWebhookEndpoint(input: { url: string; events?: EventType[]; enabled?: boolean }): Promise<WebhookEndpoint & { secret: string }> {
    return this.request('POST', '/webhook-endpoints', { body: input, signed: true });
  }

  async listWebhookEndpoints(): Promise<WebhookEndpoint[]> {
    return (await this.request<{ data: WebhookEndpoint[] }>('GET', '/webhook-endpoints', { signed: true, retry: true })).data;
  }

  getWebhookEndpoint(id: string): Promise<WebhookEndpoint> {
    return this.request('GET', `/webhook-endpoints/${encodeURIComponent(id)}`, { signed: true, retry: true });
  }

  updateWebhookEndpoint(id: string, patch: { url?: string; events?: EventType[]; enabled?: boolean }): Promise<WebhookEndpoint> {
    return this.request('PATCH', `/webhook-endpoints/${encodeURIComponent(id)}`, { body: patch, signed: true });
  }

  async deleteWebhookEndpoint(id: string): Promise<void> {
    await this.request('DELETE', `/webhook-endpoints/${encodeURIComponent(id)}`, { signed: true });
  }

  rotateWebhookSecret(id: string): Promise<WebhookEndpoint & { secret: string }> {
    return this.request('POST', `/webhook-endpoints/${encodeURIComponent(id)}/rotate-secret`, { body: {}, signed: true });
  }

  private async request<T>(
    method: string,
    path: string,
    options: { body?: unknown; signed?: boolean; headers?: Record<string, string>; retry?: boolean },
  ): Promise<T> {
    const body = options.body === undefined ? '' : JSON.stringify(options.body);
    const attempts = 1 + (options.retry ? (this.options.maxRetries ?? 2) : 0);
    for (let attempt = 1; ; attempt++) {
      const headers: Record<string, string> = { Accept: 'application/json', ...options.headers };
      if (options.body !== undefined) headers['Content-Type'] = 'application/json';
      const url = new URL(`${this.baseUrl}${path}`);
      if (options.signed) {
        // Kassa accepts a signature once, so every attempt is signed afresh with a timestamp of its own.
        const timestamp = String(this.nextTimestamp());
        headers['X-Service-Key'] = this.options.apiKey;
        headers['X-Service-Timestamp'] = timestamp;
        headers['X-Service-Signature'] =
          method === 'POST' && path === '/checkout-sessions'
            ? sign(this.options.apiSecret, timestamp, body)
            : signRequest(this.options.apiSecret, timestamp, method, this.requestTarget(url), body);
      }
      let response: Response;
      try {
        response = await this.fetch(url, {
          method,
          headers,
          body: options.body === undefined ? undefined : body,
          signal: AbortSignal.timeout(this.options.timeoutMs ?? 30_000),
        });
      } catch (error) {
        if (attempt < attempts) {
          await backoff(attempt);
          continue;
        }
        throw new KassaNetworkError(method, `${this.baseUrl}${path}`, error);
      }
      if (response.status >= 500 && attempt < attempts) {
        await response.body?.cancel();
        await backoff(attempt);
        continue;
      }
      let text: string;
      try {
        text = await response.text();
      } catch (error) {
        // The connection broke or timed out while the body was read.
        throw new KassaNetworkError(method, `${this.baseUrl}${path}`, error);
      }
      const parsed = text ? safeJson(text) : null;
      if (!response.ok) throw new KassaError(response.status, parsed as KassaError['body']);
      return parsed as T;
    }
  }

  /** Now in milliseconds, but never the same value twice: two identical calls in one millisecond are two requests. */
  private nextTimestamp(): number {
    this.lastTimestamp = Math.max(Date.now(), this.lastTimestamp + 1);
    return this.lastTimestamp;
  }

  /**
   * The path and query as fetch sends them (after URL parsing), without the
   * path of `baseUrl`: Kassa serves at its root, so a proxy that mounts it
   * under a prefix strips that prefix before Kassa sees (and checks) the path.
   */
  private requestTarget(url: URL): string {
    const basePath = new URL(this.baseUrl).pathname.replace(/\/+$/, '');
    const path = basePath && url.pathname.startsWith(`${basePath}/`) ? url.pathname.slice(basePath.length) : url.pathname;
    return `${path}${url.search}`;
  }
}

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return { message: text };
  }
}

function backoff(attempt: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, Math.random() * 200 * 2 ** attempt));
}
