// @ts-check
// DOM helpers both hosted pages use: elements by id, text cells, the merchant's colour.

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

/**
 * The data the server put in the page (a JSON script element, never executed).
 * @returns {unknown}
 */
export function readPageData() {
  return JSON.parse($('kassa-page-data').textContent ?? 'null');
}
