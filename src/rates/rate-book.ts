import type { RatesConfig, RatesSourceName } from '../config.js';
import { ASSET_TICKERS, type AssetTicker } from '../domain/shared/assets.js';
import { Decimal } from '../domain/shared/money.js';
import { CoinbaseRatesSource } from './coinbase-source.js';
import { CoinGeckoRatesSource } from './coingecko-source.js';
import type { QuotedRate, RatesProvider } from '../domain/rates/rates-ports.js';
import type { RatesSource, SourceRate } from './rates-source.js';
import { StaticRatesSource } from './static-source.js';

export interface RateBookOptions {
  /** A price whose `asOf` is older than this (relative to the quote's `now`) is not used. */
  readonly maxAgeSeconds: number;
  /** A source's answer is reused for this long before it is asked again. */
  readonly refreshSeconds: number;
  /** An asset fewer sources price (freshly) is not quoted (KASSA_RATES_MIN_SOURCES; 1 when absent). */
  readonly minSources?: number;
  /**
   * An asset whose fresh prices differ by more than this percentage of the lowest is not quoted
   * (KASSA_RATES_MAX_SPREAD_PCT; no limit when absent).
   */
  readonly maxSpreadPercent?: number | null;
}

/** The part of a pino logger the rate book uses. */
export interface RatesLogger {
  warn(obj: object, msg: string): void;
}

/** Quotes kept (per currency and set of tickers); past this many the memory starts afresh. */
const MAX_QUOTES_KEPT = 1_000;

/** Fractional digits of `unitPriceFiat`, rounded half-up (docs/payment-rules.md#quotes). */
export const UNIT_PRICE_DECIMALS = 8;

type Rates = ReadonlyMap<AssetTicker, SourceRate>;

/**
 * The domain's rates provider: answers cached per source and currency for `refreshSeconds`, one request shared, and the
 * median of fresh prices quoted, none under `minSources` or over `maxSpreadPercent` (docs/payment-rules.md#8-rates).
 */
export class RateBook implements RatesProvider {
  private readonly cache = new Map<string, { readonly fetchedAtMs: number; readonly rates: Rates }>();
  private readonly inflight = new Map<string, Promise<Rates | null>>();
  /**
   * The last quote per currency and tickers, with the source answers it was made from: quoting again from the same
   * answers gives the same rates, as the same objects (docs/benchmarks.md). Callers only read them.
   */
  private readonly quotes = new Map<
    string,
    {
      readonly answers: ReadonlyArray<Rates | null>;
      /** The clock when it was made: a clock set back (tests do) makes it again. */
      readonly madeAtMs: number;
      readonly validUntilMs: number;
      readonly quoted: readonly QuotedRate[];
    }
  >();

  constructor(
    private readonly sources: readonly RatesSource[],
    private readonly options: RateBookOptions,
    private readonly logger?: RatesLogger,
  ) {}

  supportsCurrency(fiat: string): boolean {
    const currency = fiat.toUpperCase();
    return this.sources.some((source) => source.supportsCurrency(currency));
  }

  async quoteRates(fiat: string, tickers: readonly AssetTicker[], now: Date): Promise<readonly QuotedRate[]> {
    const currency = fiat.toUpperCase();
    const wanted = [...new Set(tickers)];
    if (wanted.length === 0) return [];
    const answers = await Promise.all(
      this.sources.map(async (source, index) =>
        source.supportsCurrency(currency) ? { source, rates: await this.ratesFrom(index, currency, now) } : null,
      ),
    );
    // The same sources' answers, none of the prices used grown too old: the quote made from them stands.
    const key = `${currency}|${wanted.join(',')}`;
    const known = this.quotes.get(key);
    if (
      known !== undefined &&
      now.getTime() >= known.madeAtMs &&
      now.getTime() <= known.validUntilMs &&
      known.answers.length === answers.length &&
      known.answers.every((rates, index) => rates === (answers[index]?.rates ?? null))
    ) {
      return known.quoted;
    }
    const { quoted, validUntilMs } = this.quote(currency, wanted, answers, now);
    if (this.quotes.size >= MAX_QUOTES_KEPT) this.quotes.clear();
    this.quotes.set(key, {
      answers: answers.map((answer) => answer?.rates ?? null),
      madeAtMs: now.getTime(),
      validUntilMs,
      quoted,
    });
    return quoted;
  }

  private quote(
    currency: string,
    wanted: readonly AssetTicker[],
    answers: ReadonlyArray<{ source: RatesSource; rates: Rates | null } | null>,
    now: Date,
  ): { quoted: QuotedRate[]; validUntilMs: number } {
    const maxAgeMs = this.options.maxAgeSeconds * 1000;
    const oldestUsableMs = now.getTime() - maxAgeMs;
    let validUntilMs = Number.POSITIVE_INFINITY;
    const quoted: QuotedRate[] = [];
    for (const ticker of wanted) {
      const used: Array<{ name: string; rate: SourceRate }> = [];
      for (const answer of answers) {
        const rate = answer?.rates?.get(ticker);
        if (!answer || !rate || rate.asOf.getTime() < oldestUsableMs) continue;
        if (!rate.price.isFinite() || !rate.price.gt(0)) continue;
        used.push({ name: answer.source.name, rate });
      }
      // A price used now stops being usable once older than maxAge; the quote is remade then.
      for (const { rate } of used) validUntilMs = Math.min(validUntilMs, rate.asOf.getTime() + maxAgeMs);
      if (used.length === 0) continue;
      if (
        !this.agrees(
          currency,
          ticker,
          used.map(({ rate }) => rate.price),
        )
      )
        continue;
      const unitPriceFiat = median(used.map(({ rate }) => rate.price)).toDecimalPlaces(
        UNIT_PRICE_DECIMALS,
        Decimal.ROUND_HALF_UP,
      );
      // A price below 0.000000005 cannot be quoted: the amount would be a division by zero.
      if (unitPriceFiat.isZero()) continue;
      const ratedAtMs = Math.min(...used.map(({ rate }) => rate.asOf.getTime()));
      quoted.push({
        ticker,
        unitPriceFiat,
        source: used.map(({ name }) => name).join('+'),
        ratedAt: new Date(ratedAtMs),
      });
    }
    return { quoted, validUntilMs };
  }

  /** Enough sources, close enough together; a refusal is logged with its reason. */
  private agrees(currency: string, ticker: AssetTicker, prices: readonly Decimal[]): boolean {
    const needed = this.options.minSources ?? 1;
    if (prices.length < needed) {
      this.logger?.warn(
        { currency, ticker, prices: prices.length, needed },
        `not quoting ${ticker} in ${currency}: ${prices.length} fresh price${prices.length === 1 ? '' : 's'}, ` +
          `${needed} needed (KASSA_RATES_MIN_SOURCES)`,
      );
      return false;
    }
    const limit = this.options.maxSpreadPercent;
    if (limit === null || limit === undefined || prices.length < 2) return true;
    const sorted = [...prices].sort((a, b) => a.comparedTo(b));
    const [low, high] = [sorted[0]!, sorted[sorted.length - 1]!];
    const spread = high.minus(low).dividedBy(low).times(100);
    if (spread.lessThanOrEqualTo(limit)) return true;
    this.logger?.warn(
      {
        currency,
        ticker,
        low: low.toString(),
        high: high.toString(),
        spreadPercent: spread.toDecimalPlaces(4).toString(),
      },
      `not quoting ${ticker} in ${currency}: its sources disagree by ${spread.toDecimalPlaces(2).toString()}% (from ` +
        `${low.toString()} to ${high.toString()}), more than KASSA_RATES_MAX_SPREAD_PCT ${limit}%`,
    );
    return false;
  }

  private ratesFrom(index: number, currency: string, now: Date): Promise<Rates | null> {
    const key = `${index}:${currency}`;
    const cached = this.cache.get(key);
    if (cached && now.getTime() - cached.fetchedAtMs < this.options.refreshSeconds * 1000) {
      return Promise.resolve(cached.rates);
    }
    let pending = this.inflight.get(key);
    if (!pending) {
      pending = this.fetchFrom(key, this.sources[index]!, currency, now).finally(() => this.inflight.delete(key));
      this.inflight.set(key, pending);
    }
    return pending;
  }

  /** Never rejects: a failing source is logged once here, however many callers share the fetch. */
  private async fetchFrom(key: string, source: RatesSource, currency: string, now: Date): Promise<Rates | null> {
    try {
      // Always all known tickers, so one cached answer serves every later ticker subset.
      const rates = await source.fetchRates(currency, ASSET_TICKERS);
      this.cache.set(key, { fetchedAtMs: now.getTime(), rates });
      return rates;
    } catch (error) {
      this.logger?.warn({ source: source.name, currency, err: error }, 'rates source failed; quoting without it');
      return null;
    }
  }
}

/**
 * The middle value of an odd count, the lower of the middle two of an even one: a lower unit price asks the payer
 * for more crypto, so the merchant never receives less than either middle source values the basket at.
 */
export function median(values: readonly Decimal[]): Decimal {
  if (values.length === 0) throw new Error('median of no values');
  const sorted = [...values].sort((a, b) => a.comparedTo(b));
  return sorted[Math.ceil(sorted.length / 2) - 1]!;
}

/** Builds the configured sources, in the configured order (each name once). */
export function createRatesSources(config: RatesConfig): RatesSource[] {
  const build: Record<RatesSourceName, () => RatesSource> = {
    static: () => new StaticRatesSource({ file: config.staticFile, json: config.staticJson }),
    coingecko: () =>
      new CoinGeckoRatesSource({
        baseUrl: config.coingeckoUrl,
        apiKey: config.coingeckoApiKey,
        timeoutMs: config.timeoutMs,
      }),
    coinbase: () => new CoinbaseRatesSource({ baseUrl: config.coinbaseUrl, timeoutMs: config.timeoutMs }),
  };
  return [...new Set(config.sources)].map((name) => build[name]());
}

/** The RateBook for a configuration; throws when the static rates are invalid. */
export function createRateBook(config: RatesConfig, logger?: RatesLogger): RateBook {
  return new RateBook(createRatesSources(config), config, logger);
}
