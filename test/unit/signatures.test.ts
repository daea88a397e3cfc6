import { createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import {
  SIGNATURE_TOLERANCE_MS,
  parseTimestampMs,
  signPayload,
  signRequest,
  signatureMatches,
  timestampWithinTolerance,
} from '../../src/domain/organisations/signatures.js';

// docs/api/rest.md#signing-a-merchant-call: hex HMAC-SHA256 of `{timestamp}.{rawBody}` keyed with the API secret.

const SECRET = 'sk_test_0123456789abcdef';
const TIMESTAMP = '1736942400000';
const BODY = '{"user":{"id":"c"},"items":[]}';
// Computed outside Node: printf '%s' '1736942400000.{"user":{"id":"c"},"items":[]}' | openssl dgst -sha256 -hmac 'sk_test_0123456789abcdef'
const KNOWN = 'c1a7358e49bf5684b484684ac9a994d87825526ef4952809b806474c93139f11';

describe('signPayload', () => {
  it('matches a known vector computed with openssl', () => {
    expect(signPayload(SECRET, TIMESTAMP, BODY)).toBe(KNOWN);
    // printf '%s' '1700000000000.{"a":1}' | openssl dgst -sha256 -hmac secret
    expect(signPayload('secret', '1700000000000', '{"a":1}')).toBe(
      '4ef2732b0d632a6897af3a6d02a6de287f60d6c5f15dabdb0ceb045a34e3c5a7',
    );
  });

  it('equals an independent node:crypto HMAC over `${ts}.${body}`, for strings and Buffers alike', () => {
    const body = '{"currency":"EUR","items":[{"name":"Café ☕","quantity":1,"unit_price":3.5}]}';
    const independent = createHmac('sha256', SECRET).update(`${TIMESTAMP}.${body}`, 'utf8').digest('hex');
    expect(signPayload(SECRET, TIMESTAMP, body)).toBe(independent);
    expect(signPayload(SECRET, TIMESTAMP, Buffer.from(body, 'utf8'))).toBe(independent);
  });

  it('signs the raw bytes exactly as sent', () => {
    const raw = Buffer.from([0x7b, 0x7d, 0xff, 0x00]);
    const independent = createHmac('sha256', SECRET)
      .update(Buffer.concat([Buffer.from(`${TIMESTAMP}.`), raw]))
      .digest('hex');
    expect(signPayload(SECRET, TIMESTAMP, raw)).toBe(independent);
  });

  it('signs an empty body as `${ts}.`', () => {
    expect(signPayload(SECRET, TIMESTAMP, '')).toBe(createHmac('sha256', SECRET).update(`${TIMESTAMP}.`).digest('hex'));
  });

  it('changes with the secret, the timestamp and every byte of the body', () => {
    expect(signPayload(`${SECRET}x`, TIMESTAMP, BODY)).not.toBe(KNOWN);
    expect(signPayload(SECRET, '1736942400001', BODY)).not.toBe(KNOWN);
    expect(signPayload(SECRET, TIMESTAMP, `${BODY} `)).not.toBe(KNOWN);
    // The dot separates: moving it must not give the same signature.
    expect(signPayload(SECRET, '173694240000', `0.${BODY}`)).not.toBe(KNOWN);
  });

  it('is 64 lower-case hex characters', () => {
    expect(signPayload(SECRET, TIMESTAMP, BODY)).toMatch(/^[0-9a-f]{64}$/);
  });
});

// Every signed route but create: hex HMAC-SHA256 of `{timestamp}.{METHOD}.{path?query}.{rawBody}`
// (docs/api/rest.md#signing-a-merchant-call).
describe('signRequest', () => {
  it('matches known vectors computed with openssl', () => {
    // printf '%s' '1736942400000.GET./events?after=abc&limit=10.' | openssl dgst -sha256 -hmac 'sk_test_0123456789abcdef'
    expect(signRequest(SECRET, TIMESTAMP, 'GET', '/events?after=abc&limit=10', '')).toBe(
      'cee1e2ab2c71523985cac6fb46c6ff2ad2c8a45120d2b82a20e29793e82461a5',
    );
    // printf '%s' '1736942400000.POST./webhook-endpoints/0b7c1a52-6f3e-4a8e-9d21-5c4f0e8b7a10/rotate-secret.{}' | openssl dgst -sha256 -hmac 'sk_test_0123456789abcdef'
    expect(
      signRequest(
        SECRET,
        TIMESTAMP,
        'POST',
        '/webhook-endpoints/0b7c1a52-6f3e-4a8e-9d21-5c4f0e8b7a10/rotate-secret',
        Buffer.from('{}'),
      ),
    ).toBe('7bd817aa43b7de126df18483f1518ec7c64b581e1eb41c4219c421d7225ffed7');
  });

  it('changes with the method, the path, the query and the body, so a signature fits one request only', () => {
    const base = signRequest(SECRET, TIMESTAMP, 'GET', '/webhook-endpoints', '');
    expect(signRequest(SECRET, TIMESTAMP, 'DELETE', '/webhook-endpoints', '')).not.toBe(base);
    expect(signRequest(SECRET, TIMESTAMP, 'GET', '/events', '')).not.toBe(base);
    expect(signRequest(SECRET, TIMESTAMP, 'GET', '/webhook-endpoints?limit=1', '')).not.toBe(base);
    expect(signRequest(SECRET, TIMESTAMP, 'GET', '/webhook-endpoints', '{}')).not.toBe(base);
    // Not the create scheme over an empty body either.
    expect(signPayload(SECRET, TIMESTAMP, '')).not.toBe(base);
  });
});

describe('signatureMatches', () => {
  it('accepts the expected signature', () => {
    expect(signatureMatches(KNOWN, KNOWN)).toBe(true);
  });

  it('accepts the expected signature in upper-case hex (hex is case-insensitive)', () => {
    expect(signatureMatches(KNOWN, KNOWN.toUpperCase())).toBe(true);
  });

  it.each([
    ['one hex digit changed', `${KNOWN.slice(0, -1)}0`],
    ['first digit changed', `0${KNOWN.slice(1)}`],
    ['another signature', signPayload(SECRET, '1736942400001', BODY)],
    ['empty', ''],
    ['truncated by one byte', KNOWN.slice(0, -2)],
    ['truncated by one hex digit', KNOWN.slice(0, -1)],
    ['half', KNOWN.slice(0, 32)],
    ['one byte too long', `${KNOWN}00`],
    ['doubled', `${KNOWN}${KNOWN}`],
    ['non-hex characters', `${KNOWN.slice(0, -2)}zz`],
    ['non-hex of the right length', 'g'.repeat(64)],
    ['a leading space', ` ${KNOWN}`],
    ['a trailing space', `${KNOWN} `],
    ['a 0x prefix', `0x${KNOWN}`],
    ['sha256= prefix', `sha256=${KNOWN}`],
    ['base64 of the same bytes', Buffer.from(KNOWN, 'hex').toString('base64')],
  ])('rejects %s', (_name, presented) => {
    expect(signatureMatches(KNOWN, presented)).toBe(false);
  });

  // Buffer.from(hex) silently drops a trailing odd digit, so the right signature plus one
  // more hex digit decodes to the right bytes.
  it.each(['0', 'f', 'A'])('rejects the right signature followed by one extra hex digit (%s)', (extra) => {
    expect(signatureMatches(KNOWN, `${KNOWN}${extra}`)).toBe(false);
  });
});

describe('parseTimestampMs', () => {
  it.each([
    ['1736942400000', 1736942400000],
    ['0', 0],
    ['1', 1],
    ['1234567890123456', 1234567890123456],
  ])('parses %s', (text, expected) => {
    expect(parseTimestampMs(text)).toBe(expected);
  });

  it.each([
    '',
    ' ',
    '-1',
    '+1',
    '1.5',
    '1e12',
    '0x10',
    ' 1736942400000',
    '1736942400000 ',
    'abc',
    '12345678901234567',
    'NaN',
    'Infinity',
  ])('rejects %j', (text) => {
    expect(parseTimestampMs(text)).toBeNull();
  });
});

describe('timestampWithinTolerance', () => {
  const NOW = 1736942400000;

  it('is ±5 minutes', () => {
    expect(SIGNATURE_TOLERANCE_MS).toBe(300_000);
  });

  it.each([
    ['now', NOW, true],
    ['exactly 5 minutes old', NOW - 300_000, true],
    ['exactly 5 minutes ahead', NOW + 300_000, true],
    ['5 minutes and 1 ms old', NOW - 300_001, false],
    ['5 minutes and 1 ms ahead', NOW + 300_001, false],
    ['an hour old', NOW - 3_600_000, false],
    ['seconds instead of milliseconds', Math.floor(NOW / 1000), false],
    ['zero', 0, false],
  ])('%s → %s', (_name, timestamp, expected) => {
    expect(timestampWithinTolerance(timestamp, NOW)).toBe(expected);
  });
});
