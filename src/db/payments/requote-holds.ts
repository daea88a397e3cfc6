import { Prisma } from '../../generated/prisma/client.js';
import { decide } from '../../domain/payments/decide.js';
import { chainBehindSql } from './expiry-holds.js';
import { BOUND_TRANSACTION_SEEN_SQL, PAYMENT_CREDITED_SQL } from './payment-credits.js';

type Client = Prisma.TransactionClient;

/**
 * docs/payment-rules.md, rule 7: the re-quote sweep's SQL (SKIP LOCKED) for what decide()'s quote_end tick judges per
 * session (requoteHeld), so the two agree.
 */
export function requoteHeldSql(now: Date, ttlMinutes: number, graceMinutes: number): Prisma.Sql {
  const graceEndedFor = new Date(now.getTime() - (ttlMinutes + graceMinutes) * 60_000);
  const quoteEnd = Prisma.sql`s.quoted_at + make_interval(mins => ${ttlMinutes})`;
  const inFlight = Prisma.sql`${Prisma.raw(BOUND_TRANSACTION_SEEN_SQL)} OR ${chainBehindSql(graceMinutes, quoteEnd)}`;
  return Prisma.sql`(${Prisma.raw(PAYMENT_CREDITED_SQL)} OR (s.quoted_at > ${graceEndedFor} AND (${inFlight})))`;
}

/** Whether session `sessionId`'s quote is held at `now`: its facts read, decide()'s clock tick at the quote's end. */
export async function requoteHeld(
  client: Client,
  sessionId: string,
  now: Date,
  ttlMinutes: number,
  graceMinutes: number,
): Promise<boolean> {
  const quoteEnd = Prisma.sql`s.quoted_at + make_interval(mins => ${ttlMinutes})`;
  const rows = await client.$queryRaw<
    Array<{ quoted_at: Date; credited: boolean; bound_seen: boolean; chain_behind: boolean }>
  >`
    SELECT s.quoted_at, ${Prisma.raw(PAYMENT_CREDITED_SQL)} AS credited,
           ${Prisma.raw(BOUND_TRANSACTION_SEEN_SQL)} AS bound_seen,
           ${chainBehindSql(graceMinutes, quoteEnd)} AS chain_behind
      FROM checkout_sessions s WHERE s.id = ${sessionId}::uuid`;
  const row = rows[0];
  if (!row) return false;
  const graceOver = row.quoted_at.getTime() <= now.getTime() - (ttlMinutes + graceMinutes) * 60_000;
  const facts = { paymentCredited: row.credited, boundSeenOnChain: row.bound_seen, chainBehind: row.chain_behind };
  return decide({ kind: 'clock', tick: 'quote_end' }, { tick: 'quote_end', graceOver, ...facts }).kind === 'wait';
}
