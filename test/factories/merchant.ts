import type { Test } from 'supertest';
import { createApiKey } from '../../src/domain/api-keys.js';
import type { DomainContext } from '../../src/domain/context.js';
import { createOrganisation } from '../../src/domain/organisations.js';
import { signPayload } from '../../src/domain/signatures.js';

export interface TestMerchant {
  readonly organisationId: string;
  readonly apiKey: string;
  readonly apiSecret: string;
  readonly wallet: string;
}

let counter = 0;

/** A fresh organisation with one wallet (on every enabled network unless `network` is given) and an API key. */
export async function createMerchant(
  ctx: DomainContext,
  options: { wallet?: string | null; network?: string; name?: string } = {},
): Promise<TestMerchant> {
  counter += 1;
  const wallet = options.wallet === undefined ? `0x${counter.toString(16).padStart(40, 'a')}` : options.wallet;
  const organisation = await createOrganisation(ctx, {
    name: options.name ?? `Merchant ${counter}`,
    ...(wallet ? { wallet, network: options.network } : {}),
  });
  const key = await createApiKey(ctx, organisation.id);
  return { organisationId: organisation.id, apiKey: key.apiKey, apiSecret: key.apiSecret, wallet: wallet?.toLowerCase() ?? '' };
}

/** Adds the three signing headers of spec §5 to a supertest request and sends `rawBody` as it is. */
export function signed(
  request: Test,
  merchant: Pick<TestMerchant, 'apiKey' | 'apiSecret'>,
  rawBody: string,
  options: { timestamp?: number; contentType?: string } = {},
): Test {
  const timestamp = String(options.timestamp ?? Date.now());
  return request
    .set('Content-Type', options.contentType ?? 'application/json')
    .set('X-Service-Key', merchant.apiKey)
    .set('X-Service-Timestamp', timestamp)
    .set('X-Service-Signature', signPayload(merchant.apiSecret, timestamp, rawBody))
    .send(rawBody);
}
