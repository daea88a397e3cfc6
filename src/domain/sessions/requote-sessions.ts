import { isTerminal, type CheckoutSession } from './checkout-session.js';
import type { DomainContext } from '../context.js';
import { assetsOnAny } from '../shared/networks.js';
import { amountLane, claimUniqueQuotes, priceQuotes } from '../rates/quotes.js';
import { appendOutboxEvent } from './session-events.js';
import type { QuotedRate } from '../rates/rates-ports.js';

/**
 * One round of the quote-lifetime worker (docs/payment-rules.md, rule 7): a quote is honoured
 * for KASSA_QUOTE_TTL_MINUTES; after that, an open session nobody has paid yet (no
 * payment credited, no bound transaction known to the chain) is priced again at the
 * current rates, with fresh unique amounts, a row per asset with the old and new rate,
 * and a `checkout_session.quote_updated` event. Sessions whose payment was already seen
 * keep their quote, so a payment is judged against the quote valid when it was first
 * seen. A session is re-priced only once every network it can be paid on is scanned past
 * the end of its quote (as expiry waits for expires_at), and its old unique amounts are
 * released, not freed: a transfer of one mined before the re-pricing still pays it, at
 * the old amount (rule 4). Rates are fetched before any row is locked; a session that
 * cannot be priced now (no fresh rate for one of its assets in its currency) keeps its quote
 * and is passed over, not tried first in every round. Returns how many were re-priced.
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
 * Every unique amount of a new price is held (docs/payment-rules.md, rule 4): the re-pricing was undone, and the
 * old quote, with its amounts, is honoured for another quote lifetime. Its lifetime restarts, so the session leaves
 * the head of the re-pricing queue instead of being tried first every round (which would starve every other
 * session due behind it).
 */
async function honourOldQuoteAgain(ctx: DomainContext, id: string, now: Date): Promise<void> {
  await ctx.store.transaction(async (tx) => {
    const session = await tx.lockSession(id);
    if (session && !isTerminal(session.status)) await tx.updateSession(id, { quotedAt: now, updatedAt: now });
  });
}
