// @ts-check
// Kassa's payment link page (/l/<id>), the entry module: the basket or an amount, the payer's identity when the link
// wants one, then POST /payment-links/<id>/sessions and on to /pay/<session id>.

/** @import { IdentityOption, LinkPageData } from './types.js' */

import { $, applyBrand, cell, fiat, locale, readPageData, t } from './page.js';
import { amountMessage, readAmount } from './link-amount.js';

const data = /** @type {LinkPageData} */ (readPageData());
const { link } = data;

/**
 * An open amount's bounds (a link without items always has both).
 * @type {import('./link-amount.js').AmountRange}
 */
const range = {
  min: /** @type {string} */ (link.amountMin),
  max: /** @type {string} */ (link.amountMax),
  currency: link.currency,
};

/** @type {Record<IdentityOption, { type: string; autocomplete: AutoFill; label: string }>} */
const FIELDS = {
  email: { type: 'email', autocomplete: 'email', label: 'link.email' },
  telegram: { type: 'text', autocomplete: 'off', label: 'link.telegram' },
  username: { type: 'text', autocomplete: 'username', label: 'link.username' },
};

function render() {
  if (link.items.length > 0) {
    $('summary').hidden = false;
    $('items', HTMLTableElement).tBodies[0].replaceChildren(
      ...link.items.map((item) => {
        const row = document.createElement('tr');
        const name = cell('td', item.name, 'item-name');
        name.append(cell('span', `${item.quantity} × ${fiat(item.unitPrice)}`, 'item-detail'));
        row.append(
          name,
          cell('td', String(item.quantity), 'num col-detail'),
          cell('td', fiat(item.unitPrice), 'num col-detail'),
          cell('td', fiat(item.totalPrice), 'num'),
        );
        return row;
      }),
    );
    $('total-fiat').textContent = `${fiat(/** @type {string} */ (link.totalAmountFiat))} ${link.currency}`;
  } else {
    $('amount-section').hidden = false;
    $('amount-label').textContent = t('link.amount', { currency: link.currency });
    $('amount-hint').textContent = t('link.amountHint', {
      min: fiat(range.min),
      max: fiat(range.max),
      currency: link.currency,
    });
  }
  if (link.requiresPayerIdentity) {
    $('details').hidden = false;
    $('details-hint').textContent = link.identityOptions.length > 1 ? t('link.detailsHintOne') : t('link.detailsHint');
    $('identity-fields').replaceChildren(
      ...link.identityOptions.flatMap((kind) => {
        const field = FIELDS[kind];
        const label = /** @type {HTMLLabelElement} */ (cell('label', t(field.label)));
        label.htmlFor = `identity-${kind}`;
        const input = document.createElement('input');
        input.id = `identity-${kind}`;
        input.name = kind;
        input.type = field.type;
        input.autocomplete = field.autocomplete;
        input.spellcheck = false;
        input.setAttribute('aria-describedby', 'details-hint link-error');
        if (link.identityOptions.length === 1) input.required = true;
        return [label, input];
      }),
    );
  }
  $('link-form').hidden = false;
}

/** Reads the amount field and shows what it reads as. */
function showAmount() {
  const amount = $('amount', HTMLInputElement);
  const reading = readAmount(amount.value, range);
  $('amount-preview').textContent = amountMessage(reading, range);
  $('amount-preview').dataset.kind = reading.kind;
  if (reading.kind === 'ok' || reading.kind === 'empty') amount.removeAttribute('aria-invalid');
  return reading;
}

/**
 * A random UUID (v4) for the Idempotency-Key: crypto.randomUUID exists only in secure contexts, so plain HTTP from
 * another host (a shop's LAN) gets one from crypto.getRandomValues.
 * @returns {string}
 */
function randomKey() {
  if (typeof crypto.randomUUID === 'function') return crypto.randomUUID();
  const bytes = crypto.getRandomValues(new Uint8Array(16));
  bytes[6] = (bytes[6] & 0x0f) | 0x40;
  bytes[8] = (bytes[8] & 0x3f) | 0x80;
  const hex = [...bytes].map((byte) => byte.toString(16).padStart(2, '0')).join('');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

/**
 * Why the server refused the visit, in the page's language, told apart by the body's `code`
 * (docs/api/rest.md#error-codes); a 400 names the fields the server found wrong, in its own words.
 * @param {number} status
 * @param {{ message?: string | string[]; code?: string } | null} answer
 * @returns {string}
 */
function refusal(status, answer) {
  const message =
    answer && answer.message !== undefined ? /** @type {string[]} */ ([]).concat(answer.message).join('\n') : '';
  const code = answer && typeof answer.code === 'string' ? answer.code : '';
  if (status === 410) return t(code === 'link_expired' ? 'message.expiredTitle' : 'message.inactiveTitle');
  if (status === 409) return t(code === 'link_used_up' ? 'message.usedUpTitle' : 'link.busy');
  if (status === 429) return t('link.tooMany');
  if (status === 400 && message) return message;
  return t('error.server', { status });
}

/** One key per attempt with the same details: a retry after a network error is the same visit. */
/** @type {{ signature: string; key: string } | null} */
let attempt = null;

/** @param {SubmitEvent} event */
async function submit(event) {
  event.preventDefault();
  const error = $('link-error');
  const button = $('link-submit', HTMLButtonElement);
  error.hidden = true;
  /** @type {Record<string, string>} */
  const body = {};
  if (link.items.length === 0) {
    const reading = showAmount();
    if (reading.kind !== 'ok') {
      error.textContent =
        reading.kind === 'empty'
          ? t('link.amountRange', { min: fiat(range.min), max: fiat(range.max), currency: link.currency })
          : amountMessage(reading, range);
      error.hidden = false;
      $('amount').setAttribute('aria-invalid', 'true');
      $('amount').focus();
      return;
    }
    body.amount = reading.value;
  }
  for (const kind of link.requiresPayerIdentity ? link.identityOptions : []) {
    const value = $(`identity-${kind}`, HTMLInputElement).value.trim();
    if (value) body[kind] = value;
  }
  const signature = JSON.stringify(body);
  if (!attempt || attempt.signature !== signature) attempt = { signature, key: randomKey() };
  button.disabled = true;
  $('link-progress').textContent = t('link.submitting');
  try {
    const response = await fetch(`/payment-links/${encodeURIComponent(link.id)}/sessions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json', 'idempotency-key': attempt.key },
      body: signature,
    });
    let answer = null;
    try {
      answer = await response.json();
    } catch {
      answer = null;
    }
    if (response.status !== 201 || !answer || !answer.session_id) throw new Error(refusal(response.status, answer));
    location.assign(`/pay/${encodeURIComponent(answer.session_id)}?lang=${encodeURIComponent(locale)}`);
  } catch (failure) {
    $('link-progress').textContent = '';
    error.textContent = t('link.failed', { message: /** @type {Error} */ (failure).message });
    error.hidden = false;
    button.disabled = false;
  }
}

applyBrand(data.brand);
$('link-form').addEventListener('submit', submit);
$('amount').addEventListener('input', showAmount);
render();
