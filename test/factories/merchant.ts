import { createHmac } from 'node:crypto';
import type { Test } from 'supertest';
import { createApiKey } from '../../src/domain/organisations/api-keys.js';
import type { DomainContext } from '../../src/domain/context.js';
import { createOrganisation } from '../../src/domain/organisations/organisations.js';

export interface TestMerchant {
  readonly organisationId: string;
  readonly apiKey: string;
  readonly apiSecret: string;
  readonly wallet: string;
}

let counter = 0;

/**
 * A fresh organisation with one wallet (on every enabled network unless `network` is given) and an API key; on the
 * shared wallet unless `receiving` says otherwise, whatever the default would choose.
 */
export async function createMerchant(
  ctx: DomainContext,
  options: { wallet?: string | null; network?: string; name?: string; receiving?: 'shared' | 'deposit' } = {},
): Promise<TestMerchant> {
  counter += 1;
  const wallet = options.wallet === undefined ? `0x${counter.toString(16).padStart(40, 'a')}` : options.wallet;
  const organisation = await createOrganisation(ctx, {
    name: options.name ?? `Merchant ${counter}`,
    receiving: options.receiving ?? 'shared',
    ...(wallet ? { wallet, network: options.network } : {}),
  });
  const key = await createApiKey(ctx, organisation.id);
  return {
    organisationId: organisation.id,
    apiKey: key.apiKey,
    apiSecret: key.apiSecret,
    wallet: wallet?.toLowerCase() ?? '',
  };
}

const usedTimestamps = new Set<number>();

/**
 * `at`, or the next millisecond not yet used by this process: Kassa accepts a
 * signature once, so two identical requests signed in one millisecond would
 * be one request sent twice (docs/api/rest.md#signing-a-merchant-call).
 */
export function freshTimestamp(at: number = Date.now()): number {
  let timestamp = at;
  while (usedTimestamps.has(timestamp)) timestamp += 1;
  usedTimestamps.add(timestamp);
  return timestamp;
}

/**
 * The string a merchant signs (docs/api/rest.md#signing-a-merchant-call), written
 * here independently of src/domain/organisations/signatures.ts: create keeps
 * `{timestamp}.{rawBody}`; every other signed route signs
 * `{timestamp}.{METHOD}.{path?query}.{rawBody}`.
 */
export function stringToSign(timestamp: string, method: string, target: string, rawBody: string): string {
  const isCreate = method === 'POST' && target.split('?')[0] === '/checkout-sessions';
  return isCreate ? `${timestamp}.${rawBody}` : `${timestamp}.${method}.${target}.${rawBody}`;
}

/**
 * Adds the three signing headers to a supertest request and sends `rawBody` as
 * it is. The signature covers the request's method, path and query as given
 * to supertest; the timestamp is fresh unless one is given.
 */
export function signed(
  request: Test,
  merchant: Pick<TestMerchant, 'apiKey' | 'apiSecret'>,
  rawBody: string,
  options: { timestamp?: number; contentType?: string } = {},
): Test {
  const timestamp = String(options.timestamp ?? freshTimestamp());
  const url = new URL(request.url);
  const signature = createHmac('sha256', merchant.apiSecret)
    .update(stringToSign(timestamp, request.method, `${url.pathname}${url.search}`, rawBody), 'utf8')
    .digest('hex');
  return request
    .set('Content-Type', options.contentType ?? 'application/json')
    .set('X-Service-Key', merchant.apiKey)
    .set('X-Service-Timestamp', timestamp)
    .set('X-Service-Signature', signature)
    .send(rawBody);
}
