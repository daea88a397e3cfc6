import { randomBytes } from 'node:crypto';
import type { DomainContext } from '../context.js';
import { openSecret } from '../shared/secret-box.js';
import type { WebhookEndpointRecord } from './webhook-ports.js';

/** `whsec_` + 64 hex characters; the whole string is the HMAC key. */
export function newWebhookSecret(): string {
  return `whsec_${randomBytes(32).toString('hex')}`;
}

/** The secrets that sign deliveries right now: the current one, and the previous one during a rotation's overlap. */
export function activeSecrets(ctx: DomainContext, endpoint: WebhookEndpointRecord, now: Date): string[] {
  const secrets = [openSecret(endpoint.secretCiphertext, ctx.masterKey)];
  if (endpoint.previousSecretCiphertext && endpoint.previousSecretExpiresAt && endpoint.previousSecretExpiresAt > now) {
    secrets.push(openSecret(endpoint.previousSecretCiphertext, ctx.masterKey));
  }
  return secrets;
}
