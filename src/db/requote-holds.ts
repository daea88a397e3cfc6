import { Prisma } from '../generated/prisma/client.js';
import { chainBehindSql } from './expiry-holds.js';
import { PAYMENT_ACTIVITY_SQL } from './payment-credits.js';

type Client = Prisma.TransactionClient;

/**
 * docs/payment-rules.md, rule 7: what keeps session `s`, its quote over by the clock, from being
 * re-priced at `now`: a payment credited or a bound transaction the chain knows; or a network it
 * can be paid on not yet scanned past the end of its quote, the hold expiry has at expires_at
 * (src/db/expiry-holds.ts), since a transfer mined while the quote stood may be in a block not
 * scanned yet. Like expiry, that wait ends KASSA_INFLIGHT_GRACE_MINUTES after the quote's end.
 */
export function requoteHeldSql(now: Date, ttlMinutes: number, graceMinutes: number): Prisma.Sql {
  const graceEndedFor = new Date(now.getTime() - (ttlMinutes + graceMinutes) * 60_000);
  const quoteEnd = Prisma.sql`s.quoted_at + make_interval(mins => ${ttlMinutes})`;
  return Prisma.sql`(${Prisma.raw(PAYMENT_ACTIVITY_SQL)}
                     OR (s.quoted_at > ${graceEndedFor} AND ${chainBehindSql(graceMinutes, quoteEnd)}))`;
}

export async function requoteHeld(
  client: Client,
  sessionId: string,
  now: Date,
  ttlMinutes: number,
  graceMinutes: number,
): Promise<boolean> {
  const rows = await client.$queryRaw<Array<{ held: boolean }>>`
    SELECT ${requoteHeldSql(now, ttlMinutes, graceMinutes)} AS held FROM checkout_sessions s
     WHERE s.id = ${sessionId}::uuid`;
  return rows[0]?.held ?? false;
}
