import { randomBytes, randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { decodeEventCursor, encodeEventCursor, EVENT_CURSOR_PATTERN } from '../../src/domain/webhooks/event-cursor.js';

describe('the events feed cursor (src/domain/webhooks/event-cursor.ts)', () => {
  const key = randomBytes(32);
  const org = randomUUID();

  it('round-trips every sequence, from 1 to the largest bigint column value', () => {
    for (const seq of [1n, 2n, 255n, 1_000_000n, 2n ** 63n - 1n]) {
      const cursor = encodeEventCursor(key, org, seq);
      expect(cursor).toMatch(EVENT_CURSOR_PATTERN);
      expect(decodeEventCursor(key, org, cursor)).toBe(seq);
    }
  });

  it('says nothing of the distance between two sequences: neighbours share no prefix', () => {
    const a = encodeEventCursor(key, org, 1000n);
    const b = encodeEventCursor(key, org, 1001n);
    expect(a.slice(4, 8)).not.toBe(b.slice(4, 8));
  });

  it('opens only under its key, for its organisation, unaltered', () => {
    const cursor = encodeEventCursor(key, org, 42n);
    expect(decodeEventCursor(randomBytes(32), org, cursor)).toBeUndefined();
    expect(decodeEventCursor(key, randomUUID(), cursor)).toBeUndefined();
    // One character in the middle changed (the last one's low bits are base64 padding, ignored).
    expect(
      decodeEventCursor(key, org, `${cursor.slice(0, 12)}${cursor[12] === 'A' ? 'B' : 'A'}${cursor.slice(13)}`),
    ).toBeUndefined();
    expect(decodeEventCursor(key, org, '42')).toBeUndefined();
    expect(decodeEventCursor(key, org, `ev1_${'A'.repeat(22)}`)).toBeUndefined();
  });
});
