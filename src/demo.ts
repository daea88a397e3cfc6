import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { createHash } from 'node:crypto';
import path from 'node:path';
import type { Config } from './config.js';
import { createApiKey } from './domain/organisations/api-keys.js';
import type { DomainContext } from './domain/context.js';
import { createOrganisation } from './domain/organisations/organisations.js';
import { createSignInLink } from './domain/dashboard/sign-in.js';
import { dashboardLinkUrl } from './domain/dashboard/tokens.js';

/** anvil's second default account (#1): a known address whose private key is public; the local sandbox holds it. */
export const DEMO_WALLET = '0x70997970c51812dc3a010c7d01b50e0d17dc79c8';

export interface DemoCredentials {
  organisationId: string;
  apiKey: string;
  apiSecret: string;
}

export const DEMO_BODY = JSON.stringify({
  user: { id: 'customer-42', email: 'payer@example.com' },
  items: [{ name: 'Kassa T-shirt', quantity: 2, unit_price: 19.99 }],
  currency: 'USD',
});

/** One file per database, so a PostgreSQL run never overwrites the embedded database's demo key. */
export function demoFile(config: Config): string {
  if (!config.databaseUrl) return path.join(config.dataDir, 'demo.json');
  const database = createHash('sha256').update(config.databaseUrl).digest('hex').slice(0, 12);
  return path.join(config.dataDir, `demo-${database}.json`);
}

export function readDemoCredentials(config: Config): DemoCredentials | null {
  const file = demoFile(config);
  return existsSync(file) ? (JSON.parse(readFileSync(file, 'utf8')) as DemoCredentials) : null;
}

/**
 * Development only: creates a demo organisation and API key on the first start
 * (kept in <dataDir>/demo.json so later starts reuse them) and returns them.
 */
export async function ensureDemo(
  ctx: DomainContext,
  config: Config,
): Promise<{ credentials: DemoCredentials; created: boolean }> {
  const existing = readDemoCredentials(config);
  if (existing && (await ctx.store.organisations.findById(existing.organisationId)))
    return { credentials: existing, created: false };
  // The demo wallet's private key is published with anvil: it is set on the sandbox network only,
  // never on a mainnet (config refuses the demo beside one); the sandbox always has the deposit factory.
  const organisation = await createOrganisation(ctx, {
    name: 'Demo Shop',
    wallet: DEMO_WALLET,
    network: 'local',
    receiving: 'deposit',
  });
  const key = await createApiKey(ctx, organisation.id);
  const credentials = { organisationId: organisation.id, apiKey: key.apiKey, apiSecret: key.apiSecret };
  writeFileSync(demoFile(config), JSON.stringify(credentials, null, 2) + '\n', { mode: 0o600 });
  return { credentials, created: true };
}

/** A signed curl a developer can paste as it is (the signature is computed by the shell at paste time). */
export function signedCurl(baseUrl: string, credentials: DemoCredentials): string {
  return [
    `KEY='${credentials.apiKey}'`,
    `SECRET='${credentials.apiSecret}'`,
    `BODY='${DEMO_BODY}'`,
    `TS=$(date +%s%3N)`,
    `SIG=$(printf '%s.%s' "$TS" "$BODY" | openssl dgst -sha256 -hmac "$SECRET" -hex | sed 's/^.* //')`,
    `curl -s -X POST ${baseUrl}/checkout-sessions -H 'Content-Type: application/json' \\`,
    `  -H "X-Service-Key: $KEY" -H "X-Service-Timestamp: $TS" -H "X-Service-Signature: $SIG" -d "$BODY"`,
  ].join('\n');
}

/** The demo organisation's dashboard owner (docs/dashboard.md#first-run); `.invalid` never reaches a real inbox. */
export const DEMO_OWNER_EMAIL = 'owner@demo-shop.invalid';

/**
 * Development: a one-time sign-in link (valid an hour) for the demo organisation's owner, made on every start; the
 * account and its owner role are created on first use. Returns the link's token (see demoSignInUrl).
 */
export async function demoSignInToken(ctx: DomainContext, credentials: DemoCredentials): Promise<string> {
  return (await createSignInLink(ctx, credentials.organisationId, DEMO_OWNER_EMAIL, 'owner')).token;
}

export function demoSignInUrl(baseUrl: string, token: string): string {
  return dashboardLinkUrl(baseUrl, 'sign_in', token);
}
