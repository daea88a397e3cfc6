import { isTerminal, type CheckoutSession } from './checkout-session.js';
import type { DomainContext } from '../context.js';
import { assetsOnAny } from '../shared/networks.js';
import { amountLane, claimUniqueQuotes, priceQuotes } from '../rates/quotes.js';
import { appendOutboxEvent } from './session-events.js';
import type { QuotedRate } from '../rates/rates-ports.js';

/**
 * Re-prices open sessions nobody has paid once every network is scanned past the quote's end; old amounts are
 * released, not freed (docs/payment-rules.md, rules 4 and 7). Rates are fetched before any row is locked.
 */
export async function requoteDueSessions(ctx: DomainContext, batchSize = 100): Promise<number> {
  const now = ctx.clock();
  const grace = ctx.inflightGraceMinutes;
  // Amounts released earlier go back to the pool once no unscanned transfer can be meant for them.
  // An open session keeps an amount it gave up for a quote lifetime (at most the grace): one step more per asset.
  await ctx.store.purgeReleasedAmountClaims(now, grace, ctx.quoteTtlMinutes);
  // Rates first, for every currency due: a session whose assets are not all priced now keeps its quote and is passed
  // over, so it cannot hold up the sessions behind it in the queue.
  const currencies = await ctx.store.currenciesDueForRequote(now, ctx.quoteTtlMinutes, grace);
  if (currencies.length === 0) return 0;
  const ratesByCurrency = new Map<string, readonly QuotedRate[]>();
  for (const currency of currencies)
    ratesByCurrency.set(currency, await ctx.rates.quoteRates(currency, assetsOnAny(ctx.networks), now));
  const priced = new Map([...ratesByCurrency].map(([currency, rates]) => [currency, rates.map((rate) => rate.ticker)]));
  const due = await ctx.store.sessionsDueForRequote(now, ctx.quoteTtlMinutes, grace, batchSize, priced);
  let requoted = 0;
  for (const { id, fiatCurrency } of due) {
    // Every session found has its currency priced (sessionsDueForRequote's `priced`).
    const rates = ratesByCurrency.get(fiatCurrency) ?? [];
    const done = await ctx.store
      .transaction(async (tx) => {
        const session = await tx.lockSession(id);
        const held = () => tx.requoteHeld(id, now, ctx.quoteTtlMinutes, grace);
        if (!session || !(await dueForRequote(session, now, ctx.quoteTtlMinutes, held))) return false;
        const fresh = session.quotes.map((quote) => rates.find((rate) => rate.ticker === quote.ticker));
        // Without a fresh rate for every offered asset, the old quote stands until the next round.
        if (fresh.some((rate) => rate === undefined)) return false;
        // The old amounts stay matched to transfers mined before now and out of others' reach until scanned.
        await tx.releaseAmountClaims(session.id, now);
        const priced = priceQuotes(session.totalAmountFiat, fresh as QuotedRate[], ctx.networks, session.networks);
        const quotes = await claimUniqueQuotes(
          tx,
          session.id,
          priced,
          ctx.networks,
          session.networks,
          ctx.uniqueAmountSteps,
          now,
          amountLane(session.fromPaymentLink, ctx.uniqueAmountSteps),
        );
        // Every amount of a new price is taken: all of this is undone, and the old quote (with its claims) stands.
        if (quotes === null) throw new AmountsTaken();
        await tx.replaceQuotes(session, quotes, now);
        const updated: CheckoutSession = { ...session, quotes, quotedAt: now, updatedAt: now };
        await appendOutboxEvent(ctx, tx, updated, 'checkout_session.quote_updated', now);
        return true;
      })
      .catch(async (error: unknown) => {
        if (!(error instanceof AmountsTaken)) throw error;
        await honourOldQuoteAgain(ctx, id, now);
        return false;
      });
    if (done) requoted += 1;
  }
  return requoted;
}

async function dueForRequote(
  session: CheckoutSession,
  now: Date,
  ttlMinutes: number,
  held: () => Promise<boolean>,
): Promise<boolean> {
  // An asset selected means a payment was seen: its amount owed stands (rule 7).
  if (isTerminal(session.status) || session.status === 'partial' || session.cryptoCurrency) return false;
  if (now.getTime() >= session.expiresAt.getTime()) return false;
  if (now.getTime() < session.quotedAt.getTime() + ttlMinutes * 60_000) return false;
  return !(await held());
}

/** A re-pricing found every unique amount of a new price taken (undone; see honourOldQuoteAgain). */
class AmountsTaken extends Error {}

/**
 * Every amount of a new price is held, so the old quote is honoured for another lifetime; restarting it moves the
 * session off the head of the queue, so it cannot starve the sessions due behind it.
 */
async function honourOldQuoteAgain(ctx: DomainContext, id: string, now: Date): Promise<void> {
  await ctx.store.transaction(async (tx) => {
    const session = await tx.lockSession(id);
    if (session && !isTerminal(session.status)) await tx.updateSession(id, { quotedAt: now, updatedAt: now });
  });
}
