import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';

// Format: v1.<iv>.<tag>.<ciphertext>, each base64url; the version lets the scheme change later.
const VERSION = 'v1';

/** Encrypts an API secret for storage with AES-256-GCM under the master key. */
export function sealSecret(plaintext: string, masterKey: Buffer): string {
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', masterKey, iv);
  const ciphertext = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
  return [VERSION, iv, cipher.getAuthTag(), ciphertext].map((part) => (typeof part === 'string' ? part : part.toString('base64url'))).join('.');
}

/** Decrypts what sealSecret produced; throws when the key is wrong or the data was altered. */
export function openSecret(sealed: string, masterKey: Buffer): string {
  const parts = sealed.split('.');
  const [version, iv, tag, ciphertext] = parts;
  if (parts.length !== 4 || version !== VERSION || !iv || !tag || ciphertext === undefined) throw new Error('Unknown sealed secret format');
  // A full 16-byte tag only: GCM would otherwise accept a truncated (forgeable) tag.
  const decipher = createDecipheriv('aes-256-gcm', masterKey, Buffer.from(iv, 'base64url'), { authTagLength: 16 });
  decipher.setAuthTag(Buffer.from(tag, 'base64url'));
  return Buffer.concat([decipher.update(Buffer.from(ciphertext, 'base64url')), decipher.final()]).toString('utf8');
}
