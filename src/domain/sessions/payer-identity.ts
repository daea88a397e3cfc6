import { createHmac } from 'node:crypto';
import { regexes } from 'zod';
import type { IdentityOption } from '../payment-links/payment-link.js';

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

// The merchant create schema's own rule for user.email (`z.email()` uses exactly this pattern): a
// payer of a link is held to what a merchant's API call is. ASCII only, so no markup and no look-alikes.
const EMAIL = regexes.email;
// Telegram: a numeric user id, or a public username (5–32 letters, digits, underscores, starting with a letter).
const TELEGRAM_ID = /^\d{1,20}$/;
const TELEGRAM_USERNAME = /^@?([A-Za-z][A-Za-z0-9_]{4,31})$/;
// Control, format (bidi, zero-width, BOM), surrogate, private-use, unassigned and separator code points:
// invisible or reordering text has no place in what merchants' dashboards show.
const INVISIBLE = /[\p{Cc}\p{Cf}\p{Cs}\p{Co}\p{Cn}\p{Zl}\p{Zp}]/u;
// What a form or a paste adds around a value; anything else invisible is refused, wherever it is.
const SURROUNDING_WHITESPACE = /^[\t\n\r ]+|[\t\n\r ]+$/g;
const USERNAME_MAX = 64;

/** The value without what surrounds it, or the problem of an invisible character in it. */
function readField(kind: IdentityOption, raw: string, problems: string[]): string | null {
  const value = raw.replace(SURROUNDING_WHITESPACE, '');
  const invisible = INVISIBLE.exec(value);
  if (invisible) {
    const codePoint = invisible[0].codePointAt(0)!.toString(16).toUpperCase().padStart(4, '0');
    problems.push(`${kind} must not contain control or invisible formatting characters (found U+${codePoint})`);
    return null;
  }
  return value.trim();
}

/**
 * Every problem at once, named by field: an offered kind when the link requires one, none it does not ask for, no
 * invisible characters; an email follows create's rule, a username has no `<` or `>` and is stored as NFC.
 */
export function checkPayerIdentity(
  input: PayerIdentityInput,
  options: readonly IdentityOption[],
  required: boolean,
): { identity: PayerIdentity; problems: string[] } {
  const problems: string[] = [];
  const given = (['email', 'telegram', 'username'] as const).filter(
    (kind) => input[kind] !== undefined && input[kind] !== '',
  );
  for (const kind of given) if (!options.includes(kind)) problems.push(`${kind} is not asked for by this payment link`);
  if (required && !given.some((kind) => options.includes(kind))) {
    problems.push(options.length === 1 ? `${options[0]} is required` : `one of ${options.join(', ')} is required`);
  }
  const asked = (kind: IdentityOption) =>
    input[kind] !== undefined && input[kind] !== '' && options.includes(kind)
      ? readField(kind, input[kind]!, problems)
      : null;
  let email = asked('email');
  if (email !== null && (email.length > 255 || !EMAIL.test(email))) {
    problems.push('email must be an email address');
    email = null;
  }
  const telegram = asked('telegram');
  let telegramId: string | null = null;
  if (telegram !== null) {
    const name = TELEGRAM_USERNAME.exec(telegram);
    if (TELEGRAM_ID.test(telegram)) telegramId = telegram;
    else if (name) telegramId = `@${name[1]!.toLowerCase()}`;
    else
      problems.push('telegram must be a Telegram username (@name, 5 to 32 letters, digits or _) or a numeric user id');
  }
  let username = asked('username');
  if (username !== null) {
    username = username.normalize('NFC');
    const length = [...username].length;
    if (length < 1 || length > USERNAME_MAX) {
      problems.push(`username must be 1 to ${USERNAME_MAX} characters`);
      username = null;
    } else if (/[<>]/.test(username)) {
      problems.push('username must not contain < or >');
      username = null;
    }
  }
  return { identity: { email, telegramId, username }, problems };
}

/**
 * Stable across the organisation's links, so a returning payer is recognised; an HMAC under the installation's secret,
 * so nobody without it can tell whose it is (docs/decisions/0016-payment-link-uses-and-payer-ids.md).
 */
export function payerId(key: Uint8Array, organisationId: string, identity: PayerIdentity, fallback: string): string {
  const parts = [
    identity.email ? `email:${identity.email.toLowerCase()}` : null,
    identity.telegramId ? `telegram:${identity.telegramId}` : null,
    identity.username ? `username:${identity.username}` : null,
  ].filter((part): part is string => part !== null);
  if (parts.length === 0) return `anon_${mac(key, `kassa-anonymous-payer:v2\n${organisationId}\n${fallback}`)}`;
  return `payer_${mac(key, `kassa-payer:v2\n${organisationId}\n${parts.join('\n')}`)}`;
}

const mac = (key: Uint8Array, text: string) =>
  createHmac('sha256', key).update(text, 'utf8').digest('hex').slice(0, 32);
