import { randomBytes } from 'node:crypto';
import { existsSync, linkSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { Env } from './env-reader.js';

/**
 * The 32-byte key that encrypts API and webhook secrets: KASSA_MASTER_KEY, required in
 * production; elsewhere one key per data dir, created on first use and kept.
 */
export function readMasterKey(env: Env, production: boolean, dataDir: string, problems: string[]): Buffer | null {
  const given = env.KASSA_MASTER_KEY?.trim();
  if (given) {
    const key = decodeKey(given);
    if (!key) problems.push('KASSA_MASTER_KEY must be 32 bytes, as 64 hex characters or base64');
    else if (production && looksMadeByHand(key))
      problems.push(
        `KASSA_MASTER_KEY holds ${new Set(key).size} distinct bytes of 32: it looks made by hand (zeros, a ` +
          'repeated pattern, a word), not random; use `openssl rand -hex 32`',
      );
    return key;
  }
  if (production) {
    problems.push(
      'KASSA_MASTER_KEY is required in production (32 bytes as hex or base64, e.g. `openssl rand -hex 32`)',
    );
    return null;
  }
  const file = path.join(dataDir, 'master.key');
  if (!existsSync(file)) {
    mkdirSync(dataDir, { recursive: true });
    // Written whole to a temp file, then linked into place: a process starting at
    // the same moment sees either no key or the complete key, never a half-written one.
    const temp = `${file}.${process.pid}.${randomBytes(4).toString('hex')}`;
    try {
      writeFileSync(temp, randomBytes(32).toString('hex') + '\n', { mode: 0o600 });
      linkSync(temp, file);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    } finally {
      rmSync(temp, { force: true });
    }
  }
  const key = decodeKey(readFileSync(file, 'utf8').trim());
  if (!key) problems.push(`${file} does not hold a 32-byte key`);
  return key;
}

/**
 * Master keys that still open stored secrets during a rotation (KASSA_MASTER_KEY_PREVIOUS,
 * comma-separated, each like KASSA_MASTER_KEY); `kassa keys rotate-master` re-seals under the current one.
 */
export function readPreviousMasterKeys(env: Env, problems: string[]): Buffer[] {
  const given = (env.KASSA_MASTER_KEY_PREVIOUS ?? '')
    .split(',')
    .map((text) => text.trim())
    .filter(Boolean);
  const keys = given.map(decodeKey);
  keys.forEach((key, index) => {
    if (!key)
      problems.push(`KASSA_MASTER_KEY_PREVIOUS: key ${index + 1} must be 32 bytes, as 64 hex characters or base64`);
  });
  return keys.filter((key): key is Buffer => key !== null);
}

/**
 * 64 hex characters, or 32 bytes in base64 (standard or URL-safe, 43 characters and an optional "="), exactly: Node's
 * lenient base64 decoder would take any 43 letters for a key.
 */
export function decodeKey(text: string): Buffer | null {
  if (/^[0-9a-fA-F]{64}$/.test(text)) return Buffer.from(text, 'hex');
  if (!/^[A-Za-z0-9+/]{42}[AEIMQUYcgkosw048]=?$/.test(text) && !/^[A-Za-z0-9_-]{42}[AEIMQUYcgkosw048]=?$/.test(text))
    return null;
  const buffer = Buffer.from(text, 'base64');
  return buffer.length === 32 ? buffer : null;
}

/**
 * Whether a key has fewer than 16 distinct byte values: a random 32-byte key has about 30 (fewer than 16 about once in
 * 10^12), while zeros, a repeated pattern or a word have a handful.
 */
export function looksMadeByHand(key: Buffer): boolean {
  return new Set(key).size < 16;
}
