import { Prisma } from '../../generated/prisma/client.js';
import { OPEN_STATUSES } from '../../domain/sessions/checkout-session.js';
import { PAYMENT_CLOCK_SKEW_MS } from '../../domain/payments/payments.js';
import type { ExpiryHolds } from '../../domain/sessions/status-machine.js';

type Client = Prisma.TransactionClient;

/**
 * docs/payment-rules.md, rule 6: the SQL of what holds a session (alias `s`) open after expires_at; one text for the
 * expiry sweep's selection and the check of one session, so the two always agree.
 */
export function paymentInFlightSql(): Prisma.Sql {
  // A reversed payment holds until the first catching up to the head that began after the rollback (rollBack stamps
  // updated_at, not caught_up_at), so a rescan that outlasts the rollback's tick still holds the session.
  return Prisma.sql`(s.payments_changed_at IS NOT NULL
                  OR EXISTS (SELECT 1 FROM payments p
                              WHERE p.session_id = s.id AND p.state = 'seen' AND p.block_time < s.expires_at)
                  OR EXISTS (SELECT 1 FROM payments p JOIN chain_cursors c ON c.network = p.network
                              WHERE p.session_id = s.id AND p.state = 'reversed' AND p.block_time < s.expires_at
                                AND (c.caught_up_at IS NULL OR c.caught_up_at < p.updated_at))
                  OR EXISTS (SELECT 1 FROM checkout_session_transactions t
                              WHERE t.session_id = s.id AND t.state = 'unverified'
                                AND t.seen_on_chain_at < s.expires_at))`;
}

/**
 * A network of the session a watcher scanned during its life but not yet past `until` (plus allowed clock skew); a
 * network nobody watches is not waited for. Expiry, re-pricing and the reuse of released amounts wait for it.
 */
export function chainBehindSql(
  graceMinutes: number,
  until: Prisma.Sql = Prisma.sql`s.expires_at`,
  options: { everyNetwork?: boolean } = {},
): Prisma.Sql {
  // everyNetwork: also networks a selected chain ruled out. Otherwise the paying network, and any other the session
  // still holds an amount on (docs/decisions/0024), until scanned past the earlier of `until` and that amount's lapse.
  const skew = Prisma.sql`make_interval(secs => ${PAYMENT_CLOCK_SKEW_MS / 1000})`;
  const paying = options.everyNetwork
    ? Prisma.empty
    : Prisma.sql`AND (s.chain_id IS NULL OR n.chain_id = s.chain_id
                      OR EXISTS (SELECT 1 FROM payment_amount_claims k
                                  WHERE k.session_id = s.id AND k.network = n.network
                                    AND (k.released_at IS NULL OR c.caught_up_at < k.released_at + ${skew})))`;
  return Prisma.sql`EXISTS (SELECT 1 FROM checkout_session_networks n
                             JOIN chain_cursors c ON c.network = n.network
                            WHERE n.session_id = s.id ${paying}
                              AND c.caught_up_at >= s.created_at - make_interval(mins => ${graceMinutes})
                              AND c.caught_up_at < ${until}
                                                   + make_interval(secs => ${PAYMENT_CLOCK_SKEW_MS / 1000}))`;
}

const OPEN: readonly string[] = OPEN_STATUSES;

/** Open sessions past expiry that nothing holds any more (or whose grace is over), locked for this caller only. */
export function dueExpiriesSql(now: Date, graceMinutes: number, limit: number): Prisma.Sql {
  const graceEndedFor = new Date(now.getTime() - graceMinutes * 60_000);
  return Prisma.sql`
    SELECT s.id FROM checkout_sessions s
     WHERE s.status::text = ANY(${OPEN}) AND s.expires_at <= ${now}
       AND (s.expires_at <= ${graceEndedFor} OR NOT (${paymentInFlightSql()} OR ${chainBehindSql(graceMinutes)}))
     ORDER BY s.expires_at
     LIMIT ${limit}
     FOR UPDATE OF s SKIP LOCKED`;
}

export async function expiryHolds(client: Client, sessionId: string, graceMinutes: number): Promise<ExpiryHolds> {
  const rows = await client.$queryRaw<Array<{ payment_in_flight: boolean; chain_behind: boolean }>>`
    SELECT ${paymentInFlightSql()} AS payment_in_flight, ${chainBehindSql(graceMinutes)} AS chain_behind
      FROM checkout_sessions s WHERE s.id = ${sessionId}::uuid`;
  const row = rows[0];
  return { paymentInFlight: row?.payment_in_flight ?? false, chainBehind: row?.chain_behind ?? false };
}
