import { randomUUID } from 'node:crypto';
import { KassaError, KassaNetworkError } from './errors.js';
import { sign, signRequest } from './signing.js';
import type {
  BindResponse,
  BindTransactionRequest,
  CreateCheckoutRequest,
  CreateRefundRequest,
  CreateWebhookEndpointRequest,
  Event,
  EventPage,
  MerchantSession,
  PublicSession,
  Refund,
  RefundList,
  UpdateWebhookEndpointRequest,
  WebhookEndpoint,
  WebhookEndpointList,
  WebhookEndpointWithSecret,
} from './types.js';

/** The client of Kassa's REST API: signed merchant calls, idempotent creates, retries, the events feed. */

export interface KassaClientOptions {
  /** e.g. https://pay.example.com */
  baseUrl: string;
  /** pk_… */
  apiKey: string;
  /** sk_… */
  apiSecret: string;
  /** Per request, default 30 s. */
  timeoutMs?: number;
  /** Retries of network errors and 5xx on calls safe to repeat (creates carry an idempotency key). Default 2. */
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
  createCheckoutSession(
    input: CreateCheckoutRequest,
    options: { idempotencyKey?: string } = {},
  ): Promise<MerchantSession> {
    const headers = { 'Idempotency-Key': options.idempotencyKey ?? randomUUID() };
    return this.request('POST', '/checkout-sessions', { body: input, signed: true, headers, retry: true });
  }

  getCheckoutSession(id: string): Promise<PublicSession> {
    return this.request('GET', `/checkout-sessions/${encodeURIComponent(id)}`, { retry: true });
  }

  bindTransaction(id: string, input: BindTransactionRequest): Promise<BindResponse> {
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
  async *events(
    query: {
      after?: string | null;
      sessionId?: string;
      pageSize?: number;
      onCursor?: (cursor: string | null) => void;
    } = {},
  ): AsyncGenerator<Event> {
    let after = query.after ?? null;
    for (;;) {
      const page = await this.listEvents({ after, limit: query.pageSize ?? 100, sessionId: query.sessionId });
      for (const event of page.data) yield event;
      after = page.next_cursor;
      query.onCursor?.(after);
      if (!page.has_more) return;
    }
  }

  createWebhookEndpoint(input: CreateWebhookEndpointRequest): Promise<WebhookEndpointWithSecret> {
    return this.request('POST', '/webhook-endpoints', { body: input, signed: true });
  }

  async listWebhookEndpoints(): Promise<WebhookEndpoint[]> {
    return (await this.request<WebhookEndpointList>('GET', '/webhook-endpoints', { signed: true, retry: true })).data;
  }

  getWebhookEndpoint(id: string): Promise<WebhookEndpoint> {
    return this.request('GET', `/webhook-endpoints/${encodeURIComponent(id)}`, { signed: true, retry: true });
  }

  updateWebhookEndpoint(id: string, patch: UpdateWebhookEndpointRequest): Promise<WebhookEndpoint> {
    return this.request('PATCH', `/webhook-endpoints/${encodeURIComponent(id)}`, { body: patch, signed: true });
  }

  async deleteWebhookEndpoint(id: string): Promise<void> {
    await this.request('DELETE', `/webhook-endpoints/${encodeURIComponent(id)}`, { signed: true });
  }

  rotateWebhookSecret(id: string): Promise<WebhookEndpointWithSecret> {
    const path = `/webhook-endpoints/${encodeURIComponent(id)}/rotate-secret`;
    return this.request('POST', path, { body: {}, signed: true });
  }

  /**
   * POST /checkout-sessions/:id/refunds (docs/api/refunds.md#create). Always sends an Idempotency-Key (yours, or a
   * fresh UUID), so a retried create never refunds twice.
   */
  createRefund(
    sessionId: string,
    input: CreateRefundRequest,
    options: { idempotencyKey?: string } = {},
  ): Promise<Refund> {
    const headers = { 'Idempotency-Key': options.idempotencyKey ?? randomUUID() };
    const path = `/checkout-sessions/${encodeURIComponent(sessionId)}/refunds`;
    return this.request('POST', path, { body: input, signed: true, headers, retry: true });
  }

  /** A session's refunds, oldest first. */
  async listRefunds(sessionId: string): Promise<Refund[]> {
    const path = `/checkout-sessions/${encodeURIComponent(sessionId)}/refunds`;
    return (await this.request<RefundList>('GET', path, { signed: true, retry: true })).data;
  }

  getRefund(id: string): Promise<Refund> {
    return this.request('GET', `/refunds/${encodeURIComponent(id)}`, { signed: true, retry: true });
  }

  /** Cancels a refund not yet sent; cancelling it again answers the same. */
  cancelRefund(id: string): Promise<Refund> {
    return this.request('POST', `/refunds/${encodeURIComponent(id)}/cancel`, { signed: true, retry: true });
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
    const underBase = basePath && url.pathname.startsWith(`${basePath}/`);
    const path = underBase ? url.pathname.slice(basePath.length) : url.pathname;
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
