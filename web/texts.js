// @ts-check
// Texts and number formats in the page's language. The server chose the language and put its
// catalogue (web/i18n/<lang>.json) in the page data; amounts stay the server's exact digit strings.

/** @import { CommonPageData, Texts } from './types.js' */

import { readPageData } from './dom.js';

const data = /** @type {CommonPageData} */ (readPageData());
/** @type {Texts} */
const texts = data.messages || {};
/** The page's language (a BCP 47 tag the Intl formats take). */
export const locale = data.lang || 'en';

/**
 * The catalogue's text for `key` with `{name}` filled in; a missing text shows as ⟦key⟧ (tests look for it).
 * @param {string} key
 * @param {Readonly<Record<string, string | number>>} [params]
 * @returns {string}
 */
export function t(key, params) {
  const text = texts[key];
  if (typeof text !== 'string') return `⟦${key}⟧`;
  return params ? text.replace(/\{(\w+)\}/g, (whole, name) => (name in params ? String(params[name]) : whole)) : text;
}

const plurals = new Intl.PluralRules(locale);

/**
 * "1 confirmation" / "12 confirmations", by the language's plural rules.
 * @param {number} count
 */
export const confirmationsText = (count) =>
  t(plurals.select(count) === 'one' ? 'confirmations.one' : 'confirmations.other', { count });

/** The locale's separators, applied to the server's exact digits (never through a float). */
export const separators = (() => {
  const parts = new Intl.NumberFormat(locale).formatToParts(11111.5);
  /** @param {Intl.NumberFormatPartTypes} type @param {string} fallback */
  const part = (type, fallback) => (parts.find((p) => p.type === type) || { value: fallback }).value;
  return { group: part('group', ','), decimal: part('decimal', '.') };
})();

/**
 * "1234.50000000" → "1,234.50" (en) or "1.234,50" (de): at least 2 and at most 8 decimals, trailing zeros cut.
 * @param {string} amount
 * @returns {string}
 */
export function fiat(amount) {
  const [whole, fraction = ''] = amount.split('.');
  const cut = fraction.replace(/0+$/, '').padEnd(2, '0');
  return `${whole.replace(/\B(?=(\d{3})+(?!\d))/g, separators.group)}${separators.decimal}${cut}`;
}

export const dateFormat = new Intl.DateTimeFormat(locale, { dateStyle: 'medium', timeStyle: 'short' });
