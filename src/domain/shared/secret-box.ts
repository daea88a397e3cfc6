import { createCipheriv, createDecipheriv, createHmac, randomBytes } from 'node:crypto';

/**
 * Stored secrets, AES-256-GCM under the master key: `v2.<key id>.<iv>.<tag>.<ciphertext>`, the row as additional data
 * so a copy elsewhere does not open; v1 (no key id, no row) opens until re-sealed (docs/operations.md#configuration).
 */

/** The master keys: the one that seals, and older ones that still open (during a rotation). */
export interface MasterKeys {
  readonly current: Buffer;
  readonly previous: readonly Buffer[];
  /** KASSA_SECRETS_V1=refuse: the v1 format (no key id, no row binding) no longer opens. */
  readonly refuseV1?: boolean;
}

/** Where a secret is stored; its ciphertext is bound to it. */
export interface SecretRow {
  readonly table: 'api_keys' | 'webhook_endpoints';
  readonly id: string;
}

/** A stored ciphertext together with the row it was read from (the stores build these). */
export interface StoredSecret {
  readonly sealed: string;
  readonly row: SecretRow;
}

/**
 * A short public name of a master key: 8 hex characters of an HMAC under the key itself (nothing about the key can be
 * learnt from it).
 */
export function keyId(key: Buffer): string {
  return createHmac('sha256', key).update('kassa master key id').digest('hex').slice(0, 8);
}

function masterKeys(keys: MasterKeys | Buffer): MasterKeys {
  return Buffer.isBuffer(keys) ? { current: keys, previous: [] } : keys;
}

function additionalData(row: SecretRow): Buffer {
  return Buffer.from(`kassa:${row.table}:${row.id}`, 'utf8');
}

/** Encrypts a secret for storage in `row`, under the current master key. */
export function sealSecret(plaintext: string, keys: MasterKeys | Buffer, row: SecretRow): string {
  const key = masterKeys(keys).current;
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', key, iv);
  cipher.setAAD(additionalData(row));
  const ciphertext = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
  return ['v2', keyId(key), ...[iv, cipher.getAuthTag(), ciphertext].map((part) => part.toString('base64url'))].join(
    '.',
  );
}

/**
 * Decrypts a stored secret (v2 or v1) with whichever known master key sealed it; throws when no
 * known key opens it, when it was altered, or when it was sealed for another row.
 */
export function openSecret(stored: StoredSecret, keys: MasterKeys | Buffer): string {
  const { current, previous, refuseV1 } = masterKeys(keys);
  const parts = stored.sealed.split('.');
  if (parts[0] === 'v2' && parts.length === 5) {
    const [, id, iv, tag, ciphertext] = parts as [string, string, string, string, string];
    const key = [current, ...previous].find((candidate) => keyId(candidate) === id);
    if (!key)
      throw new Error(
        `Secret of ${describe(stored.row)} is sealed under master key ${id}, which is neither KASSA_MASTER_KEY nor ` +
          `in KASSA_MASTER_KEY_PREVIOUS`,
      );
    try {
      return decrypt(key, iv, tag, ciphertext, additionalData(stored.row));
    } catch {
      throw new Error(`Secret of ${describe(stored.row)} does not open: it was altered, or sealed for another row`);
    }
  }
  if (parts[0] === 'v1' && parts.length === 4) {
    if (refuseV1) {
      throw new Error(
        `Secret of ${describe(stored.row)} is in the v1 format (no key id, not bound to its row), which ` +
          `KASSA_SECRETS_V1=refuse refuses: ` +
          're-seal it with `kassa keys rotate-master` under KASSA_SECRETS_V1=accept',
      );
    }
    const [, iv, tag, ciphertext] = parts as [string, string, string, string];
    for (const key of [current, ...previous]) {
      try {
        return decrypt(key, iv, tag, ciphertext, null);
      } catch {
        // Not this key: try the next.
      }
    }
    throw new Error(
      `Secret of ${describe(stored.row)} (v1) does not open with KASSA_MASTER_KEY or KASSA_MASTER_KEY_PREVIOUS`,
    );
  }
  throw new Error('Unknown sealed secret format');
}

/** Whether a stored secret is in the v1 format (no key id, no row binding). */
export function isV1Sealed(sealed: string): boolean {
  return sealed.startsWith('v1.');
}

/** Whether a stored secret is already what sealSecret writes now: v2 under the current master key. */
export function isSealedUnderCurrentKey(sealed: string, keys: MasterKeys | Buffer): boolean {
  const parts = sealed.split('.');
  return parts[0] === 'v2' && parts.length === 5 && parts[1] === keyId(masterKeys(keys).current);
}

function decrypt(key: Buffer, iv: string, tag: string, ciphertext: string, aad: Buffer | null): string {
  // A full 16-byte tag only: GCM would otherwise accept a truncated (forgeable) tag.
  const decipher = createDecipheriv('aes-256-gcm', key, Buffer.from(iv, 'base64url'), { authTagLength: 16 });
  if (aad) decipher.setAAD(aad);
  decipher.setAuthTag(Buffer.from(tag, 'base64url'));
  return Buffer.concat([decipher.update(Buffer.from(ciphertext, 'base64url')), decipher.final()]).toString('utf8');
}

function describe(row: SecretRow): string {
  return `${row.table} row ${row.id}`;
}
