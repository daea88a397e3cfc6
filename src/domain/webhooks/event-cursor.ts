import { createCipheriv, createDecipheriv, createHash } from 'node:crypto';

/**
 * The events feed's cursor (`next_cursor`, `after`): opaque to the merchant. Behind it is the outbox sequence, which
 * counts every organisation's events: shown as it is, the gap between two of a merchant's cursors told them how many
 * events the installation's other organisations made meanwhile (their business volume). So the sequence goes out
 * encrypted: one AES-256 block (a pseudo-random permutation, under the installation secret `events_cursor`) of the
 * sequence and 8 bytes tied to the organisation, `ev1_` and 22 base64url characters. Without the secret a cursor
 * reveals nothing and cannot be made, and one organisation's cursor is refused for another (its tie does not match):
 * a merchant cannot probe where their own events sit in the outbox either.
 */

const PREFIX = 'ev1_';
/** What a cursor looks like (the query schema checks it; decodeEventCursor checks the rest). */
export const EVENT_CURSOR_PATTERN = /^ev1_[A-Za-z0-9_-]{22}$/;

function tie(organisationId: string): Buffer {
  return createHash('sha256').update(`kassa-events-cursor\n${organisationId}`, 'utf8').digest().subarray(0, 8);
}

/** The cursor of outbox sequence `seq` for `organisationId`, under the installation's cursor key. */
export function encodeEventCursor(key: Buffer, organisationId: string, seq: bigint): string {
  const block = Buffer.alloc(16);
  block.writeBigUInt64BE(seq, 0);
  tie(organisationId).copy(block, 8);
  const cipher = createCipheriv('aes-256-ecb', key, null);
  cipher.setAutoPadding(false);
  return PREFIX + Buffer.concat([cipher.update(block), cipher.final()]).toString('base64url');
}

/** The outbox sequence behind `cursor`, or undefined when it is not one this installation gave `organisationId`. */
export function decodeEventCursor(key: Buffer, organisationId: string, cursor: string): bigint | undefined {
  if (!EVENT_CURSOR_PATTERN.test(cursor)) return undefined;
  const bytes = Buffer.from(cursor.slice(PREFIX.length), 'base64url');
  if (bytes.length !== 16) return undefined;
  const decipher = createDecipheriv('aes-256-ecb', key, null);
  decipher.setAutoPadding(false);
  const block = Buffer.concat([decipher.update(bytes), decipher.final()]);
  if (!block.subarray(8).equals(tie(organisationId))) return undefined;
  return block.readBigUInt64BE(0);
}
