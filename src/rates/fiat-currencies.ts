/**
 * Fiat currencies (ISO 4217, upper case) that CoinGecko's `vs_currencies` prices in.
 * Kept to fiat on purpose: CoinGecko also accepts "btc", "eth", "xau", … which are not
 * currencies a merchant invoices in.
 */
export const COINGECKO_FIAT_CURRENCIES: ReadonlySet<string> = new Set([
  'USD', 'EUR', 'GBP', 'JPY', 'CHF', 'CAD', 'AUD', 'CNY', 'INR', 'BRL', 'KRW', 'RUB', 'TRY', 'SEK', 'NOK',
  'DKK', 'PLN', 'CZK', 'HUF', 'MXN', 'NZD', 'SGD', 'HKD', 'ZAR', 'ILS', 'THB', 'TWD', 'PHP', 'IDR', 'MYR',
  'AED', 'SAR', 'ARS', 'CLP', 'NGN', 'UAH', 'VND', 'PKR', 'BDT', 'LKR', 'KWD', 'BHD', 'MMK', 'GEL',
]);

/**
 * Fiat currencies Coinbase's `/v2/exchange-rates?currency=` is relied on for: the widely
 * traded ones. Coinbase lists more; the exotic ones (and RUB, whose availability varies
 * with sanctions) are left out until someone checks them against the live API.
 */
export const COINBASE_FIAT_CURRENCIES: ReadonlySet<string> = new Set([
  'USD', 'EUR', 'GBP', 'JPY', 'CHF', 'CAD', 'AUD', 'CNY', 'INR', 'BRL', 'KRW', 'TRY', 'SEK', 'NOK', 'DKK',
  'PLN', 'CZK', 'HUF', 'MXN', 'NZD', 'SGD', 'HKD', 'ZAR', 'ILS', 'THB', 'TWD', 'PHP', 'IDR', 'MYR', 'AED',
  'SAR', 'ARS', 'CLP', 'NGN', 'UAH', 'VND', 'PKR',
]);
