import { randomUUID } from 'node:crypto';
import type { DomainContext } from '../../context.js';
import { signPayload } from '../../organisations/signatures.js';
import { activeSecrets } from '../../webhooks/webhook-secrets.js';
import { getWebhookEndpoint } from '../../webhooks/webhook-endpoints.js';
import type { ReceiverResponse } from '../../webhooks/webhook-ports.js';
import { responseOf, type DashboardResponse } from './webhook-deliveries.js';

/** One signed POST to a webhook endpoint under the delivery worker's rules (src/webhooks/http-post.ts). */
export type WebhookPost = (
  url: string,
  body: string,
  headers: Record<string, string>,
) => Promise<{
  statusCode: number | null;
  error: string | null;
  responseExcerpt: string | null;
  response?: ReceiverResponse | null;
  latencyMs: number;
}>;

/** The type of the test event; never in the outbox, the events feed or an endpoint's filter. */
export const TEST_EVENT_TYPE = 'kassa.test';

export interface WebhookTestResult extends DashboardResponse {
  readonly requestBody: string;
  readonly httpStatus: number | null;
  readonly latencyMs: number;
  readonly error: string | null;
}

/**
 * One POST at once of an event of type kassa.test naming the endpoint, signed as deliveries are; its answer is
 * returned and nothing is stored or retried. `organisationId` null: any organisation's endpoint (the CLI).
 */
export async function sendWebhookTestEvent(
  ctx: DomainContext,
  organisationId: string | null,
  endpointId: string,
  post: WebhookPost,
): Promise<WebhookTestResult> {
  const endpoint = await getWebhookEndpoint(ctx, organisationId, endpointId);
  const now = ctx.clock();
  const id = randomUUID();
  const requestBody = JSON.stringify({
    id,
    type: TEST_EVENT_TYPE,
    created_at: now.toISOString(),
    data: { endpoint_id: endpoint.id, organisation_id: endpoint.organisationId },
  });
  const timestamp = String(now.getTime());
  const signatures = activeSecrets(ctx, endpoint, now).map((secret) => signPayload(secret, timestamp, requestBody));
  const result = await post(endpoint.url, requestBody, {
    'X-Service-Event-Id': id,
    'X-Service-Timestamp': timestamp,
    'X-Service-Signature': signatures.join(','),
  });
  return {
    requestBody,
    httpStatus: result.statusCode,
    latencyMs: Math.round(result.latencyMs),
    error: result.error,
    ...responseOf(result.responseExcerpt, result.response),
  };
}
