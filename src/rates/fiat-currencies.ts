/**
 * The widely traded fiat currencies (ISO 4217, upper case) both rate sources price in. Coinbase's list stops here: the
 * exotic ones (and RUB, whose availability there varies) stay out until checked against the live API.
 */
const WIDELY_TRADED_FIAT = [
  'USD',
  'EUR',
  'GBP',
  'JPY',
  'CHF',
  'CAD',
  'AUD',
  'CNY',
  'INR',
  'BRL',
  'KRW',
  'TRY',
  'SEK',
  'NOK',
  'DKK',
  'PLN',
  'CZK',
  'HUF',
  'MXN',
  'NZD',
  'SGD',
  'HKD',
  'ZAR',
  'ILS',
  'THB',
  'TWD',
  'PHP',
  'IDR',
  'MYR',
  'AED',
  'SAR',
  'ARS',
  'CLP',
  'NGN',
  'UAH',
  'VND',
  'PKR',
];

/**
 * Fiat currencies CoinGecko's `vs_currencies` prices in: fiat only, since it also accepts "btc", "xau", … which no
 * merchant invoices in.
 */
export const COINGECKO_FIAT_CURRENCIES: ReadonlySet<string> = new Set([
  ...WIDELY_TRADED_FIAT,
  'RUB',
  'BDT',
  'LKR',
  'KWD',
  'BHD',
  'MMK',
  'GEL',
]);

/** Fiat currencies relied on from Coinbase's `/v2/exchange-rates`. */
export const COINBASE_FIAT_CURRENCIES: ReadonlySet<string> = new Set(WIDELY_TRADED_FIAT);
