import type { Test } from 'supertest';
import { freshTimestamp, signed, type TestMerchant } from './merchant.js';
import type { TestKassa } from '../support/kassa.js';

/** A valid POST /payment-links body (docs/hosted-pages.md#payment-links); override any part. */
export function paymentLinkRequest(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    name: 'Coffee subscription',
    items: [
      { name: 'Coffee beans', quantity: 2, unit_price: 12.5, product_id: 'beans-1kg' },
      { name: 'Grinder', quantity: 1, unit_price: 80 },
    ],
    currency: 'USD',
    identity_options: ['email'],
    ...overrides,
  };
}

/** A signed management call on /payment-links (`{ts}.{METHOD}.{path?query}.{body}`). */
export function linkCall(
  kassa: TestKassa,
  merchant: Pick<TestMerchant, 'apiKey' | 'apiSecret'>,
  method: 'get' | 'post' | 'patch' | 'delete',
  target: string,
  body?: unknown,
): Test {
  const text = body === undefined ? '' : typeof body === 'string' ? body : JSON.stringify(body);
  return signed(kassa.http[method](target), merchant, text, { timestamp: freshTimestamp(kassa.ctx.clock().getTime()) });
}

/** Creates a link and insists on 201; returns the link view. */
export async function createLink(
  kassa: TestKassa,
  merchant: Pick<TestMerchant, 'apiKey' | 'apiSecret'>,
  overrides: Record<string, unknown> = {},
): Promise<Record<string, any>> {
  const response = await linkCall(kassa, merchant, 'post', '/payment-links', paymentLinkRequest(overrides));
  if (response.status !== 201)
    throw new Error(`POST /payment-links answered ${response.status}: ${JSON.stringify(response.body)}`);
  return response.body as Record<string, any>;
}

/** The payer's visit: POST /payment-links/:id/sessions (public). */
export function visitLink(
  kassa: TestKassa,
  linkId: string,
  body: unknown,
  options: { idempotencyKey?: string } = {},
): Test {
  const request = kassa.http.post(`/payment-links/${linkId}/sessions`).set('Content-Type', 'application/json');
  if (options.idempotencyKey !== undefined) request.set('Idempotency-Key', options.idempotencyKey);
  return request.send(typeof body === 'string' ? body : JSON.stringify(body));
}
