import { createCipheriv, createDecipheriv, createHash } from 'node:crypto';

/**
 * The events feed's cursor: the outbox sequence sealed with the organisation in one AES block (`ev1_`), since the raw
 * sequence would tell a merchant other organisations' volume; another organisation's cursor is refused.
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
