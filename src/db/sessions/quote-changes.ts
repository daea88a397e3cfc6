import type { Prisma } from '../../generated/prisma/client.js';
import type { CheckoutSession, CryptoQuote } from '../../domain/sessions/checkout-session.js';

type Client = Prisma.TransactionClient;

/**
 * Re-prices a session (docs/payment-rules.md, rule 7): one row per asset with old and new rate and amount, the quotes
 * replaced, `quoted_at` moved, and a selected asset's required amount updated.
 */
export async function replaceQuotes(
  tx: Client,
  session: CheckoutSession,
  quotes: readonly CryptoQuote[],
  at: Date,
): Promise<void> {
  const pairs = quotes.map((quote) => ({ quote, old: session.quotes.find((q) => q.ticker === quote.ticker)! }));
  await tx.$executeRaw`
    INSERT INTO checkout_session_quote_changes (session_id, ticker, old_unit_price_fiat, new_unit_price_fiat,
      old_amount, new_amount,
                                                old_quoted_at, rate_source, created_at)
    SELECT ${session.id}::uuid, ticker, old_price, new_price, old_amount, new_amount, ${session.quotedAt}, source, ${at}
      FROM unnest(${pairs.map((p) => p.quote.ticker)}::text[],
        ${pairs.map((p) => p.old.unitPriceFiat.toFixed())}::numeric[],
                  ${pairs.map((p) => p.quote.unitPriceFiat.toFixed())}::numeric[],
                    ${pairs.map((p) => p.old.amount.toFixed())}::numeric[],
                  ${pairs.map((p) => p.quote.amount.toFixed())}::numeric[],
                    ${pairs.map((p) => p.quote.rateSource)}::text[])
           AS c(ticker, old_price, new_price, old_amount, new_amount, source)`;
  await tx.$executeRaw`
    UPDATE checkout_session_quotes q
       SET unit_price_fiat = c.price, amount = c.amount, base_amount = c.base, amount_step = c.step,
         offset_steps = c.offset_steps,
           rate_source = c.source, rated_at = c.rated_at, rounding = c.rounding
      FROM unnest(${quotes.map((q) => q.ticker)}::text[], ${quotes.map((q) => q.unitPriceFiat.toFixed())}::numeric[],
                  ${quotes.map((q) => q.amount.toFixed())}::numeric[],
                    ${quotes.map((q) => q.baseAmount.toFixed())}::numeric[],
                  ${quotes.map((q) => q.amountStep.toFixed())}::numeric[], ${quotes.map((q) => q.offsetSteps)}::int[],
                  ${quotes.map((q) => q.rateSource)}::text[], ${quotes.map((q) => q.ratedAt)}::timestamptz[],
                    ${quotes.map((q) => q.rounding)}::text[])
           AS c(ticker, price, amount, base, step, offset_steps, source, rated_at, rounding)
     WHERE q.session_id = ${session.id}::uuid AND q.ticker = c.ticker`;
  await tx.$executeRaw`
    UPDATE checkout_sessions s
       SET quoted_at = ${at}, updated_at = ${at},
           total_amount_crypto = CASE WHEN s.crypto_currency IS NULL THEN s.total_amount_crypto
                                      ELSE (SELECT q.amount FROM checkout_session_quotes q WHERE q.session_id = s.id
                                        AND q.ticker = s.crypto_currency) END
     WHERE s.id = ${session.id}::uuid`;
}
