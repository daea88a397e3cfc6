// @ts-check
// What both hosted pages share: elements by id, text cells, the page data, the merchant's colour, and the page's
// language (the catalogue the server chose, number and date formats). Amounts stay the server's exact digit strings.

/** @import { CommonPageData, Texts } from './types.js' */

/**
 * The element with this id; with `type`, checked to be of that kind (an input, a button, …).
 * @template {HTMLElement} [T=HTMLElement]
 * @param {string} id
 * @param {{ new (): T; prototype: T }} [type]
 * @returns {T}
 */
export function $(id, type) {
  const element = document.getElementById(id);
  if (!(element instanceof (type ?? HTMLElement))) throw new Error(`#${id} is missing or not a ${type?.name}`);
  return /** @type {T} */ (element);
}

/**
 * A new element holding `text` (as text, never as HTML).
 * @param {string} tag
 * @param {string} text
 * @param {string} [className]
 * @returns {HTMLElement}
 */
export function cell(tag, text, className) {
  const element = document.createElement(tag);
  element.textContent = text;
  if (className) element.className = className;
  return element;
}

/**
 * The merchant's colour (CSSOM: allowed by the CSP, unlike inline styles); the server picked a readable text colour.
 * @param {{ color: string; ink: string } | null | undefined} brand
 */
export function applyBrand(brand) {
  if (!brand) return;
  document.documentElement.style.setProperty('--brand', brand.color);
  document.documentElement.style.setProperty('--brand-ink', brand.ink);
}

/** @type {unknown} */
let pageData;

/**
 * The data the server put in the page (a JSON script element, never executed), read once.
 * @returns {unknown}
 */
export function readPageData() {
  pageData ??= JSON.parse($('kassa-page-data').textContent ?? 'null');
  return pageData;
}

// ---- Texts and formats in the page's language ----

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
