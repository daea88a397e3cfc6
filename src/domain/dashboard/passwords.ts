import { randomBytes, scrypt, timingSafeEqual, type ScryptOptions } from 'node:crypto';
import { invalid } from '../shared/errors.js';

/**
 * Dashboard passwords: scrypt (node:crypto) with a random 16-byte salt per password, stored as
 * `scrypt$N$r$p$salt$hash` so the cost can be raised later without breaking stored hashes.
 */
const COST = { N: 2 ** 15, r: 8, p: 1 } as const;
const KEY_LENGTH = 32;
/** scrypt needs 128·N·r bytes; Node's default ceiling (32 MB) is just too low for N = 2^15. */
const MAX_MEMORY = 64 * 1024 * 1024;
export const MIN_PASSWORD_LENGTH = 12;
export const MAX_PASSWORD_LENGTH = 256;

function derive(password: string, salt: Buffer, cost: { N: number; r: number; p: number }): Promise<Buffer> {
  const options: ScryptOptions = { ...cost, maxmem: MAX_MEMORY };
  return new Promise((resolve, reject) =>
    scrypt(password.normalize('NFC'), salt, KEY_LENGTH, options, (error, key) =>
      error ? reject(error) : resolve(key),
    ),
  );
}

/** Refuses a password too short or too long to be kept (a long one would only make scrypt slow). */
export function checkPasswordRules(password: string): void {
  if (password.length < MIN_PASSWORD_LENGTH)
    throw invalid(`The password must have at least ${MIN_PASSWORD_LENGTH} characters`);
  if (password.length > MAX_PASSWORD_LENGTH)
    throw invalid(`The password must have at most ${MAX_PASSWORD_LENGTH} characters`);
}

export async function hashPassword(password: string): Promise<string> {
  const salt = randomBytes(16);
  const hash = await derive(password, salt, COST);
  return ['scrypt', COST.N, COST.r, COST.p, salt.toString('base64url'), hash.toString('base64url')].join('$');
}

/** A hash no password matches, checked for unknown accounts so their answer takes as long as a known one's. */
export const UNUSABLE_HASH = [
  'scrypt',
  COST.N,
  COST.r,
  COST.p,
  Buffer.alloc(16).toString('base64url'),
  Buffer.alloc(KEY_LENGTH, 1).toString('base64url'),
].join('$');

/** Whether `password` matches `stored` (compared in constant time). */
export async function verifyPassword(password: string, stored: string): Promise<boolean> {
  const [scheme, n, r, p, salt, hash] = stored.split('$');
  if (scheme !== 'scrypt' || !salt || !hash) return false;
  const expected = Buffer.from(hash, 'base64url');
  const actual = await derive(password.slice(0, MAX_PASSWORD_LENGTH), Buffer.from(salt, 'base64url'), {
    N: Number(n),
    r: Number(r),
    p: Number(p),
  });
  return actual.length === expected.length && timingSafeEqual(actual, expected);
}
