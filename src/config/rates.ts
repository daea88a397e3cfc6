import path from 'node:path';
import type { EnvReader } from './env-reader.js';
import { PACKAGE_ROOT } from './package-root.js';
import { redactUrl } from './redact-url.js';
import { inTheClearOffThisMachine } from './transport-security.js';

export const RATES_SOURCE_NAMES = ['static', 'coingecko', 'coinbase'] as const;
export type RatesSourceName = (typeof RATES_SOURCE_NAMES)[number];

export interface RatesConfig {
  readonly sources: readonly RatesSourceName[];
  readonly staticFile: string;
  readonly staticJson: string | null;
  readonly coingeckoUrl: string;
  readonly coingeckoApiKey: string | null;
  readonly coinbaseUrl: string;
  readonly maxAgeSeconds: number;
  readonly refreshSeconds: number;
  readonly timeoutMs: number;
  /** Fewer fresh prices than this for an asset: it is not quoted. */
  readonly minSources: number;
  /** Fresh prices of one asset further apart than this percentage: it is not quoted; null: no limit. */
  readonly maxSpreadPercent: number | null;
}

/** Where quotes' exchange rates come from (src/rates). */
export function readRatesConfig(read: EnvReader, production: boolean): RatesConfig {
  // Production asks two independent sources and quotes only when both answer and agree.
  const sources = read.list('KASSA_RATES_SOURCES', production ? ['coingecko', 'coinbase'] : ['static']);
  for (const source of sources) {
    if (!(RATES_SOURCE_NAMES as readonly string[]).includes(source)) {
      read.problems.push(`KASSA_RATES_SOURCES: unknown source "${source}" (known: ${RATES_SOURCE_NAMES.join(', ')})`);
    }
  }
  const minSources = read.integer('KASSA_RATES_MIN_SOURCES', production ? 2 : 1, 1, 10);
  if (minSources > new Set(sources).size) {
    read.problems.push(
      `KASSA_RATES_MIN_SOURCES is ${minSources} but KASSA_RATES_SOURCES names ${new Set(sources).size}: no asset ` +
        `could ever be quoted`,
    );
  }
  const spread = read.string('KASSA_RATES_MAX_SPREAD_PCT', production ? '2' : 'off');
  if (spread !== 'off' && (!/^\d{1,3}(\.\d{1,4})?$/.test(spread) || Number(spread) > 100)) {
    read.problems.push(`KASSA_RATES_MAX_SPREAD_PCT must be a percentage from 0 to 100, or off (got "${spread}")`);
  }
  const coingeckoUrl = read.url('KASSA_COINGECKO_URL', 'https://api.coingecko.com/api/v3').replace(/\/+$/, '');
  const coinbaseUrl = read.url('KASSA_COINBASE_URL', 'https://api.coinbase.com').replace(/\/+$/, '');
  if (production) {
    for (const [name, url] of [
      ['KASSA_COINGECKO_URL', coingeckoUrl],
      ['KASSA_COINBASE_URL', coinbaseUrl],
    ] as const) {
      if (inTheClearOffThisMachine(url))
        read.problems.push(
          `${name} must use https in production (its prices make every quote; only a loopback address may be ` +
            `plain http): got "${redactUrl(url)}"`,
        );
    }
  }
  return {
    sources: sources as RatesSourceName[],
    staticFile: path.resolve(read.string('KASSA_RATES_FILE', path.join(PACKAGE_ROOT, 'config/rates.static.json'))),
    staticJson: read.optional('KASSA_RATES_JSON'),
    coingeckoUrl,
    coingeckoApiKey: read.optional('KASSA_COINGECKO_API_KEY'),
    coinbaseUrl,
    maxAgeSeconds: read.integer('KASSA_RATES_MAX_AGE_SECONDS', 120, 1, 86400),
    refreshSeconds: read.integer('KASSA_RATES_REFRESH_SECONDS', 30, 1, 86400),
    timeoutMs: read.integer('KASSA_RATES_TIMEOUT_MS', 5000, 100, 60000),
    minSources,
    maxSpreadPercent: spread === 'off' ? null : Number(spread),
  };
}
