import { randomBytes, randomUUID } from 'node:crypto';
import type { DomainContext } from '../context.js';
import { conflict, notFound, unavailable } from '../shared/errors.js';
import type { ApiKeyRecord } from './organisation-ports.js';
import { openSecret, sealSecret } from '../shared/secret-box.js';

/** A newly issued key: the only moment the secret is visible. */
export interface IssuedApiKey {
  readonly id: string;
  readonly organisationId: string;
  readonly apiKey: string;
  readonly apiSecret: string;
  readonly createdAt: Date;
}

export type ApiKeyState = 'active' | 'revoked' | 'expired';

export interface ApiKeySummary {
  readonly id: string;
  readonly apiKey: string;
  readonly organisationId: string;
  readonly state: ApiKeyState;
  readonly createdAt: Date;
  readonly expiresAt: Date | null;
  readonly revokedAt: Date | null;
  readonly lastUsedAt: Date | null;
}

/** Issues a new key pair for an organisation; the secret is stored encrypted only. */
export async function createApiKey(
  ctx: DomainContext,
  organisationId: string,
  rotatedFromId?: string,
): Promise<IssuedApiKey> {
  const organisation = await ctx.store.organisations.findById(organisationId);
  if (!organisation) throw notFound(`Organisation ${organisationId} not found`);
  const apiKey = `pk_${randomBytes(16).toString('hex')}`;
  const apiSecret = `sk_${randomBytes(32).toString('hex')}`;
  const id = randomUUID();
  const record = await ctx.store.apiKeys.create({
    id,
    organisationId,
    publicKey: apiKey,
    secretCiphertext: sealSecret(apiSecret, ctx.masterKey, { table: 'api_keys', id }),
    rotatedFromId,
  });
  return { id: record.id, organisationId, apiKey, apiSecret, createdAt: record.createdAt };
}

export async function listApiKeys(ctx: DomainContext, organisationId: string): Promise<ApiKeySummary[]> {
  const organisation = await ctx.store.organisations.findById(organisationId);
  if (!organisation) throw notFound(`Organisation ${organisationId} not found`);
  const now = ctx.clock();
  return (await ctx.store.apiKeys.listForOrganisation(organisationId)).map((key) => summarise(key, now));
}

/** Revokes a key at once; calls signed with it get 401 from then on. */
export async function revokeApiKey(ctx: DomainContext, apiKey: string): Promise<void> {
  if (!(await ctx.store.apiKeys.revoke(apiKey, ctx.clock()))) throw notFound(`API key ${apiKey} not found`);
}

/**
 * A new key for the same organisation; the old one keeps working for `graceMinutes` (0 = stop it now), so a
 * merchant can deploy the new secret without downtime.
 */
export async function rotateApiKey(
  ctx: DomainContext,
  apiKey: string,
  graceMinutes: number,
): Promise<IssuedApiKey & { oldKeyExpiresAt: Date }> {
  const old = await ctx.store.apiKeys.findByPublicKey(apiKey);
  if (!old) throw notFound(`API key ${apiKey} not found`);
  const state = summarise(old, ctx.clock()).state;
  if (state !== 'active') throw conflict(`API key ${apiKey} is ${state}; issue a new one with \`kassa keys create\``);
  // Once: a key in its grace rotated again would get a new grace (days, by mistake) and a second successor. Claimed
  // before the successor is issued, so two rotations at once issue one.
  const oldKeyExpiresAt = await ctx.store.apiKeys.expire(apiKey, graceMinutes);
  if (!oldKeyExpiresAt) {
    const again = await ctx.store.apiKeys.findByPublicKey(apiKey);
    throw conflict(
      again?.expiresAt
        ? `API key ${apiKey} was already rotated; it stops working at ${again.expiresAt.toISOString()}: rotate ` +
            `the key that replaced it`
        : `API key ${apiKey} is revoked; issue a new one with \`kassa keys create\``,
    );
  }
  const issued = await createApiKey(ctx, old.organisationId, old.id);
  return { ...issued, oldKeyExpiresAt };
}

function summarise(key: ApiKeyRecord, now: Date): ApiKeySummary {
  const state: ApiKeyState = key.revokedAt ? 'revoked' : key.expiresAt && key.expiresAt <= now ? 'expired' : 'active';
  return {
    id: key.id,
    apiKey: key.publicKey,
    organisationId: key.organisationId,
    state,
    createdAt: key.createdAt,
    expiresAt: key.expiresAt,
    revokedAt: key.revokedAt,
    lastUsedAt: key.lastUsedAt,
  };
}

/**
 * Start-up check: the master key must open the stored secrets. A wrong
 * KASSA_MASTER_KEY would otherwise surface as a failure on every signed call.
 */
export async function verifyMasterKey(ctx: DomainContext): Promise<void> {
  const sample = await ctx.store.apiKeys.sample();
  if (!sample) return;
  try {
    openSecret(sample.secretCiphertext, ctx.masterKey);
  } catch {
    throw unavailable(
      'KASSA_MASTER_KEY does not decrypt the API secrets stored in this database: start Kassa with the master key ' +
        'they were created under ' +
        '(during a rotation, the old one in KASSA_MASTER_KEY_PREVIOUS)',
    );
  }
}
