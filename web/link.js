// Kassa's payment link page (/l/<id>): shows the basket or asks for an amount, asks for the
// payer's identity when the link wants one, then starts a checkout session through
// POST /payment-links/<id>/sessions and goes to /pay/<session id>. Plain browser
// JavaScript, no build step and no third-party code.
'use strict';

(function paymentLinkPage() {
  const page = JSON.parse(document.getElementById('kassa-page-data').textContent);
  const link = page.link;
  const texts = page.messages || {};
  const locale = page.lang || 'en';
  const $ = (id) => document.getElementById(id);

  function t(key, params) {
    const text = texts[key];
    if (typeof text !== 'string') return `⟦${key}⟧`;
    return params ? text.replace(/\{(\w+)\}/g, (whole, name) => (name in params ? String(params[name]) : whole)) : text;
  }

  const separators = (() => {
    const parts = new Intl.NumberFormat(locale).formatToParts(11111.5);
    const part = (type, fallback) => (parts.find((p) => p.type === type) || { value: fallback }).value;
    return { group: part('group', ','), decimal: part('decimal', '.') };
  })();

  /** An exact 8-digit string in the locale's separators: "1234.50000000" → "1,234.50" / "1.234,50". */
  function fiat(amount) {
    const [whole, fraction = ''] = amount.split('.');
    const cut = fraction.replace(/0+$/, '').padEnd(2, '0');
    return `${whole.replace(/\B(?=(\d{3})+(?!\d))/g, separators.group)}${separators.decimal}${cut}`;
  }

  function cell(tag, text, className) {
    const element = document.createElement(tag);
    element.textContent = text;
    if (className) element.className = className;
    return element;
  }

  const FIELDS = {
    email: { type: 'email', autocomplete: 'email', label: 'link.email' },
    telegram: { type: 'text', autocomplete: 'off', label: 'link.telegram' },
    username: { type: 'text', autocomplete: 'username', label: 'link.username' },
  };

  function render() {
    if (link.items.length > 0) {
      $('summary').hidden = false;
      $('items').tBodies[0].replaceChildren(
        ...link.items.map((item) => {
          const row = document.createElement('tr');
          const name = cell('td', item.name, 'item-name');
          name.append(cell('span', `${item.quantity} × ${fiat(item.unitPrice)}`, 'item-detail'));
          row.append(name, cell('td', String(item.quantity), 'num col-detail'), cell('td', fiat(item.unitPrice), 'num col-detail'), cell('td', fiat(item.totalPrice), 'num'));
          return row;
        }),
      );
      $('total-fiat').textContent = `${fiat(link.totalAmountFiat)} ${link.currency}`;
    } else {
      $('amount-section').hidden = false;
      $('amount-label').textContent = t('link.amount', { currency: link.currency });
      $('amount-hint').textContent = t('link.amountHint', { min: fiat(link.amountMin), max: fiat(link.amountMax), currency: link.currency });
    }
    if (link.requiresPayerIdentity) {
      $('details').hidden = false;
      $('details-hint').textContent = link.identityOptions.length > 1 ? t('link.detailsHintOne') : t('link.detailsHint');
      $('identity-fields').replaceChildren(
        ...link.identityOptions.flatMap((kind) => {
          const field = FIELDS[kind];
          const label = cell('label', t(field.label));
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

  /** The decimal the payer typed, in the page's notation, as the API's plain decimal ("1.234,5" → "1234.5" in German). */
  function plainAmount(text) {
    const trimmed = text.trim().replace(/\s/g, '');
    const withoutGroups = trimmed.split(separators.group).join(separators.group === separators.decimal ? separators.group : '');
    return withoutGroups.replace(separators.decimal, '.');
  }

  // One key per attempt with the same details: a retry after a network error is the same visit.
  let attempt = null;

  async function submit(event) {
    event.preventDefault();
    const error = $('link-error');
    const button = $('link-submit');
    error.hidden = true;
    const body = {};
    if (link.items.length === 0) body.amount = plainAmount($('amount').value);
    for (const kind of link.requiresPayerIdentity ? link.identityOptions : []) {
      const value = $(`identity-${kind}`).value.trim();
      if (value) body[kind] = value;
    }
    const signature = JSON.stringify(body);
    if (!attempt || attempt.signature !== signature) attempt = { signature, key: crypto.randomUUID() };
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
      if (response.status !== 201 || !answer || !answer.session_id) {
        const message = answer && answer.message ? [].concat(answer.message).join('\n') : t('error.server', { status: response.status });
        throw new Error(message);
      }
      location.assign(`/pay/${encodeURIComponent(answer.session_id)}?lang=${encodeURIComponent(locale)}`);
    } catch (failure) {
      $('link-progress').textContent = '';
      error.textContent = t('link.failed', { message: failure.message });
      error.hidden = false;
      button.disabled = false;
    }
  }

  if (page.brand) {
    document.documentElement.style.setProperty('--brand', page.brand.color);
    document.documentElement.style.setProperty('--brand-ink', page.brand.ink);
  }
  $('link-form').addEventListener('submit', submit);
  render();
})();
