import { createHash } from 'node:crypto';
import type { IdentityOption } from './payment-link.js';

/** What a payer gives on a payment link's page, checked against what the link asks for. */
export interface PayerIdentityInput {
  readonly email?: string;
  readonly telegram?: string;
  readonly username?: string;
}

export interface PayerIdentity {
  readonly email: string | null;
  /** A Telegram numeric user id, or a username written `@name` (lower case). */
  readonly telegramId: string | null;
  readonly username: string | null;
}

// Pragmatic, like the create schema's email check: one @, a dot in the domain, no spaces.
const EMAIL = /^[^\s@]{1,64}@[^\s@]+\.[^\s@]{2,}$/;
// Telegram: a numeric user id, or a public username (5–32 letters, digits, underscores, starting with a letter).
const TELEGRAM_ID = /^\d{1,20}$/;
const TELEGRAM_USERNAME = /^@?([A-Za-z][A-Za-z0-9_]{4,31})$/;
const CONTROL = /[\u0000-\u001f\u007f]/;

/**
 * Checks the payer's identity against the link's options: at least one of the offered
 * kinds (when the link requires an identity), each valid, none that the link does not
 * ask for. Returns every problem at once, named by field.
 */
export function checkPayerIdentity(input: PayerIdentityInput, options: readonly IdentityOption[], required: boolean): { identity: PayerIdentity; problems: string[] } {
  const problems: string[] = [];
  const given = (['email', 'telegram', 'username'] as const).filter((kind) => input[kind] !== undefined && input[kind] !== '');
  for (const kind of given) if (!options.includes(kind)) problems.push(`${kind} is not asked for by this payment link`);
  if (required && !given.some((kind) => options.includes(kind))) {
    problems.push(options.length === 1 ? `${options[0]} is required` : `one of ${options.join(', ')} is required`);
  }
  let email: string | null = null;
  let telegramId: string | null = null;
  let username: string | null = null;
  if (input.email !== undefined && input.email !== '' && options.includes('email')) {
    const value = input.email.trim();
    if (value.length > 255 || !EMAIL.test(value)) problems.push('email must be an email address');
    else email = value;
  }
  if (input.telegram !== undefined && input.telegram !== '' && options.includes('telegram')) {
    const value = input.telegram.trim();
    const name = TELEGRAM_USERNAME.exec(value);
    if (TELEGRAM_ID.test(value)) telegramId = value;
    else if (name) telegramId = `@${name[1]!.toLowerCase()}`;
    else problems.push('telegram must be a Telegram username (@name, 5 to 32 letters, digits or _) or a numeric user id');
  }
  if (input.username !== undefined && input.username !== '' && options.includes('username')) {
    const value = input.username.trim();
    if (value.length < 1 || value.length > 64 || CONTROL.test(value)) problems.push('username must be 1 to 64 characters without control characters');
    else username = value;
  }
  return { identity: { email, telegramId, username }, problems };
}

/**
 * `user.id` of a link session: opaque and stable. The same identity given on any of the
 * organisation's links gets the same id (the merchant recognises a returning payer);
 * nothing of the identity can be read from it. Anonymous payers get the id of `fallback`
 * (an idempotency key, so a retried visit is the same request, or a random value).
 */
export function payerId(organisationId: string, identity: PayerIdentity, fallback: string): string {
  const parts = [
    identity.email ? `email:${identity.email.toLowerCase()}` : null,
    identity.telegramId ? `telegram:${identity.telegramId}` : null,
    identity.username ? `username:${identity.username}` : null,
  ].filter((part): part is string => part !== null);
  if (parts.length === 0) return `anon_${digest(`kassa-anonymous-payer:v1\n${organisationId}\n${fallback}`)}`;
  return `payer_${digest(`kassa-payer:v1\n${organisationId}\n${parts.join('\n')}`)}`;
}

const digest = (text: string) => createHash('sha256').update(text, 'utf8').digest('hex').slice(0, 32);
