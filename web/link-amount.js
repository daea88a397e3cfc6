// @ts-check
// The payment link page's open amount: read as the payer typed it, without guessing
// (docs/hosted-pages.md#payment-links), and what the page says about it before it is sent.

import { fiat, separators, t } from './page.js';

/**
 * What the typed amount reads as: `ok` with the API's plain decimal, or why not.
 * @typedef {{ kind: 'ok'; value: string }
 *   | { kind: 'ambiguous'; before: string; mark: string; after: string }
 *   | { kind: 'empty' | 'invalid' | 'decimals' | 'range' }} Reading
 */

/**
 * The link's bounds, exact 8-digit strings in its currency.
 * @typedef {{ min: string; max: string; currency: string }} AmountRange
 */

/** @type {Reading} */
const INVALID = { kind: 'invalid' };

/**
 * Digits written with one kind of thousands mark in groups of three ("1,234,567", "1 234"), as plain digits; null
 * otherwise.
 * @param {string} whole
 * @returns {string | null}
 */
function ungroup(whole) {
  if (whole === '') return '0';
  if (/^\d+$/.test(whole)) return whole;
  const mark = whole.replace(/\d/g, '')[0];
  const groups = whole.split(mark);
  if (whole.replace(/\d/g, '') !== mark.repeat(groups.length - 1)) return null;
  if (!/^[1-9]\d{0,2}$/.test(groups[0]) || groups.slice(1).some((group) => !/^\d{3}$/.test(group))) return null;
  return groups.join('');
}

/**
 * The amount typed as the API's plain decimal, never guessed (docs/hosted-pages.md#payment-links): the page's mark is
 * decimal; the other groups thousands only in threes, else it is decimal too; an ambiguous "1,234" is asked about.
 * @param {string} text
 * @param {AmountRange} range
 * @returns {Reading}
 */
export function readAmount(text, range) {
  const typed = text.trim().replace(/[\s\u00a0\u202f]+/g, ' ');
  if (typed === '') return { kind: 'empty' };
  if (!/^[\d., ]*\d[\d., ]*$/.test(typed)) return INVALID;
  const marks = typed.replace(/[^.,]/g, '');
  const last = marks[marks.length - 1];
  let decimal = null;
  if (marks.includes('.') && marks.includes(',')) decimal = last;
  else if (marks.includes(separators.decimal)) decimal = separators.decimal;
  else if (marks.length === 1) {
    const [before, after] = typed.split(last);
    if (/^[1-9]\d{0,2}$/.test(before) && /^\d{3}$/.test(after)) return { kind: 'ambiguous', before, mark: last, after };
    decimal = last;
  }
  let whole = typed;
  let fraction = '';
  if (decimal) {
    const at = typed.indexOf(decimal);
    if (typed.lastIndexOf(decimal) !== at) return INVALID;
    whole = typed.slice(0, at);
    fraction = typed.slice(at + 1);
    if (!/^\d+$/.test(fraction)) return INVALID;
  }
  const digits = ungroup(whole);
  if (digits === null) return INVALID;
  if (fraction.length > 8) return { kind: 'decimals' };
  const value = `${digits.replace(/^0+(?=\d)/, '')}${fraction ? `.${fraction}` : ''}`;
  /** @param {string} amount */
  const units = (amount) => {
    const [int, frac = ''] = amount.split('.');
    return BigInt(int + frac.padEnd(8, '0'));
  };
  if (units(value) < units(range.min) || units(value) > units(range.max)) return { kind: 'range' };
  return { kind: 'ok', value };
}

/**
 * What the page says about the amount as typed: the amount that will be charged, or what to change.
 * @param {Reading} reading
 * @param {AmountRange} range
 * @returns {string}
 */
export function amountMessage(reading, range) {
  const { min, max, currency } = range;
  switch (reading.kind) {
    case 'ok':
      return t('link.amountPreview', { amount: fiat(reading.value), currency });
    case 'ambiguous':
      return t('link.amountAmbiguous', {
        typed: `${reading.before}${reading.mark}${reading.after}`,
        thousands: fiat(`${reading.before}${reading.after}`),
        decimal: fiat(`${reading.before}.${reading.after}`),
        currency,
        typeThousands: `${reading.before}${reading.after}`,
        typeDecimal: `${reading.before}${separators.decimal}${reading.after}`,
      });
    case 'decimals':
      return t('link.amountDecimals');
    case 'range':
      return t('link.amountRange', { min: fiat(min), max: fiat(max), currency });
    case 'invalid':
      return t('link.amountInvalid', { example: fiat('12.5') });
    default:
      return '';
  }
}
