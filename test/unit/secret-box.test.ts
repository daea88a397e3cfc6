import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { openSecret, sealSecret } from '../../src/domain/secret-box.js';

// DESIGN.md §4 "Authentication": API secrets stored with AES-256-GCM under KASSA_MASTER_KEY.

const KEY = Buffer.from('000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f', 'hex');
const SECRET = 'sk_live_4f1c2a9e8b7d6c5b4a3f2e1d0c9b8a7f';

const parts = (sealed: string) => sealed.split('.');
const b64 = (text: string) => Buffer.from(text, 'base64url');
/** Flips one bit of the n-th byte of a base64url part. */
function flip(part: string, byte = 0): string {
  const bytes = b64(part);
  bytes[byte] = bytes[byte]! ^ 0x01;
  return bytes.toString('base64url');
}

describe('sealSecret / openSecret', () => {
  it('round-trips', () => {
    expect(openSecret(sealSecret(SECRET, KEY), KEY)).toBe(SECRET);
  });

  it.each([
    ['empty', ''],
    ['unicode', 'Schlüssel ☕ 鍵'],
    ['long', 'x'.repeat(10_000)],
    ['dots and base64 characters', 'a.b.c-_+/='],
  ])('round-trips a %s secret', (_name, plaintext) => {
    expect(openSecret(sealSecret(plaintext, KEY), KEY)).toBe(plaintext);
  });

  it('writes v1.<iv>.<tag>.<ciphertext>: a 12-byte IV, a 16-byte tag, ciphertext as long as the plaintext', () => {
    const sealed = sealSecret(SECRET, KEY);
    const [version, iv, tag, ciphertext, ...rest] = parts(sealed);
    expect(version).toBe('v1');
    expect(rest).toEqual([]);
    expect(b64(iv!)).toHaveLength(12);
    expect(b64(tag!)).toHaveLength(16);
    expect(b64(ciphertext!)).toHaveLength(Buffer.byteLength(SECRET));
    expect(sealed).toMatch(/^v1\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/);
    expect(sealed).not.toContain(SECRET);
  });

  it('gives a different sealed value each time (random IV) and both open', () => {
    const first = sealSecret(SECRET, KEY);
    const second = sealSecret(SECRET, KEY);
    expect(first).not.toBe(second);
    expect(parts(first)[1]).not.toBe(parts(second)[1]);
    expect(parts(first)[3]).not.toBe(parts(second)[3]);
    expect(openSecret(first, KEY)).toBe(SECRET);
    expect(openSecret(second, KEY)).toBe(SECRET);
  });

  it('throws with the wrong key', () => {
    const sealed = sealSecret(SECRET, KEY);
    expect(() => openSecret(sealed, randomBytes(32))).toThrow();
    const oneBitOff = Buffer.from(KEY);
    oneBitOff[31] = oneBitOff[31]! ^ 0x80;
    expect(() => openSecret(sealed, oneBitOff)).toThrow();
  });

  it('throws when the ciphertext was altered', () => {
    const [v, iv, tag, ct] = parts(sealSecret(SECRET, KEY));
    expect(() => openSecret([v, iv, tag, flip(ct!, 0)].join('.'), KEY)).toThrow();
    expect(() => openSecret([v, iv, tag, flip(ct!, 10)].join('.'), KEY)).toThrow();
    expect(() => openSecret([v, iv, tag, b64(ct!).subarray(0, -1).toString('base64url')].join('.'), KEY)).toThrow();
  });

  it('throws when the tag was altered', () => {
    const [v, iv, tag, ct] = parts(sealSecret(SECRET, KEY));
    expect(() => openSecret([v, iv, flip(tag!, 0), ct].join('.'), KEY)).toThrow();
    expect(() => openSecret([v, iv, flip(tag!, 15), ct].join('.'), KEY)).toThrow();
  });

  it('throws when the IV was altered', () => {
    const [v, iv, tag, ct] = parts(sealSecret(SECRET, KEY));
    expect(() => openSecret([v, flip(iv!, 0), tag, ct].join('.'), KEY)).toThrow();
  });

  // GCM verifies a shortened tag against the same prefix of the real one: a 4-byte tag can
  // be forged in ~2^32 tries. Only the full 16-byte tag that sealSecret writes may be accepted.
  it.each([4, 8, 12, 15])('throws when the tag was truncated to %i bytes', (length) => {
    const [v, iv, tag, ct] = parts(sealSecret(SECRET, KEY));
    const short = b64(tag!).subarray(0, length).toString('base64url');
    expect(() => openSecret([v, iv, short, ct].join('.'), KEY)).toThrow();
  });

  it.each([
    ['an unknown version', (s: string) => s.replace(/^v1\./, 'v2.')],
    ['a missing part', (s: string) => parts(s).slice(0, 3).join('.')],
    ['no parts', () => 'garbage'],
    ['an empty string', () => ''],
  ])('throws "Unknown sealed secret format" for %s', (_name, mangle) => {
    expect(() => openSecret(mangle(sealSecret(SECRET, KEY)), KEY)).toThrow('Unknown sealed secret format');
  });
});
