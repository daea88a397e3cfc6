import { Prisma } from '../../generated/prisma/client.js';
import { chainBehindSql } from './expiry-holds.js';
import { BOUND_TRANSACTION_SEEN_SQL, PAYMENT_CREDITED_SQL } from './payment-credits.js';

type Client = Prisma.TransactionClient;

/**
 * docs/payment-rules.md, rule 7: what keeps session `s`, its quote over by the clock, from being
 * re-priced at `now`: a payment credited; or, until KASSA_INFLIGHT_GRACE_MINUTES after the quote's
 * end (as expiry waits), a bound transaction the chain knows but has not judged, or a network it can
 * be paid on not yet scanned past the end of its quote, the hold expiry has at expires_at
 * (src/db/expiry-holds.ts), since a transfer mined while the quote stood may be in a block not
 * scanned yet. (Pending binds held it without that end: each is rejected `not mined` a grace after
 * its own bind, so binding one stuck transaction after another kept an old quote for days.)
 */
export function requoteHeldSql(now: Date, ttlMinutes: number, graceMinutes: number): Prisma.Sql {
  const graceEndedFor = new Date(now.getTime() - (ttlMinutes + graceMinutes) * 60_000);
  const quoteEnd = Prisma.sql`s.quoted_at + make_interval(mins => ${ttlMinutes})`;
  const inFlight = Prisma.sql`${Prisma.raw(BOUND_TRANSACTION_SEEN_SQL)} OR ${chainBehindSql(graceMinutes, quoteEnd)}`;
  return Prisma.sql`(${Prisma.raw(PAYMENT_CREDITED_SQL)} OR (s.quoted_at > ${graceEndedFor} AND (${inFlight})))`;
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
