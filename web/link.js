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
          row.append(
            name,
            cell('td', String(item.quantity), 'num col-detail'),
            cell('td', fiat(item.unitPrice), 'num col-detail'),
            cell('td', fiat(item.totalPrice), 'num'),
          );
          return row;
        }),
      );
      $('total-fiat').textContent = `${fiat(link.totalAmountFiat)} ${link.currency}`;
    } else {
      $('amount-section').hidden = false;
      $('amount-label').textContent = t('link.amount', { currency: link.currency });
      $('amount-hint').textContent = t('link.amountHint', {
        min: fiat(link.amountMin),
        max: fiat(link.amountMax),
        currency: link.currency,
      });
    }
    if (link.requiresPayerIdentity) {
      $('details').hidden = false;
      $('details-hint').textContent =
        link.identityOptions.length > 1 ? t('link.detailsHintOne') : t('link.detailsHint');
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

  // ---- The open amount: read without guessing, shown before it is sent ----

  const INVALID = { kind: 'invalid' };

  /** Digits written with one kind of thousands mark in groups of three ("1,234,567", "1 234"), as plain digits; null otherwise. */
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
   * The amount the payer typed, as the API's plain decimal, never guessed
   * (docs/hosted-pages.md#payment-links). The page's own decimal mark is always the decimal
   * mark. With both "." and ",", the last one is. The other mark alone groups thousands only in
   * groups of three; otherwise it is a decimal mark typed the other way round ("7.5" on a German
   * page is 7,5; "7,5" on an English page is 7.5). "1,234" on an English page (or "1.234" on a
   * German one) reads two ways: the page asks instead of choosing.
   */
  function readAmount(text) {
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
      if (/^[1-9]\d{0,2}$/.test(before) && /^\d{3}$/.test(after))
        return { kind: 'ambiguous', before, mark: last, after };
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
    const units = (amount) => {
      const [int, frac = ''] = amount.split('.');
      return BigInt(int + frac.padEnd(8, '0'));
    };
    if (units(value) < units(link.amountMin) || units(value) > units(link.amountMax)) return { kind: 'range' };
    return { kind: 'ok', value };
  }

  /** What the page says about the amount as typed: the amount that will be charged, or what to change. */
  function amountMessage(reading) {
    const currency = link.currency;
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
        return t('link.amountRange', { min: fiat(link.amountMin), max: fiat(link.amountMax), currency });
      case 'invalid':
        return t('link.amountInvalid', { example: fiat('12.5') });
      default:
        return '';
    }
  }

  function showAmount() {
    const reading = readAmount($('amount').value);
    $('amount-preview').textContent = amountMessage(reading);
    $('amount-preview').dataset.kind = reading.kind;
    if (reading.kind === 'ok' || reading.kind === 'empty') $('amount').removeAttribute('aria-invalid');
    return reading;
  }

  /**
   * A random UUID (v4) for the Idempotency-Key. crypto.randomUUID exists only in secure contexts
   * (HTTPS or loopback): on plain HTTP from another host (a shop's LAN) it is undefined, while
   * crypto.getRandomValues exists everywhere.
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
   * Why the server refused the visit, in the page's language: the link went out of use since the page was loaded
   * (410, 409 used up), every unique amount of its price is held (409) or too many visits (429), told apart by the
   * body's `code` (docs/api/rest.md#error-codes). A 400 names the fields the server found wrong, in its own words.
   */
  function refusal(status, answer) {
    const message = answer && answer.message !== undefined ? [].concat(answer.message).join('\n') : '';
    const code = answer && typeof answer.code === 'string' ? answer.code : '';
    if (status === 410) return t(code === 'link_expired' ? 'message.expiredTitle' : 'message.inactiveTitle');
    if (status === 409) return t(code === 'link_used_up' ? 'message.usedUpTitle' : 'link.busy');
    if (status === 429) return t('link.tooMany');
    if (status === 400 && message) return message;
    return t('error.server', { status });
  }

  // One key per attempt with the same details: a retry after a network error is the same visit.
  let attempt = null;

  async function submit(event) {
    event.preventDefault();
    const error = $('link-error');
    const button = $('link-submit');
    error.hidden = true;
    const body = {};
    if (link.items.length === 0) {
      const reading = showAmount();
      if (reading.kind !== 'ok') {
        error.textContent =
          reading.kind === 'empty'
            ? t('link.amountRange', { min: fiat(link.amountMin), max: fiat(link.amountMax), currency: link.currency })
            : amountMessage(reading);
        error.hidden = false;
        $('amount').setAttribute('aria-invalid', 'true');
        $('amount').focus();
        return;
      }
      body.amount = reading.value;
    }
    for (const kind of link.requiresPayerIdentity ? link.identityOptions : []) {
      const value = $(`identity-${kind}`).value.trim();
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
  $('amount').addEventListener('input', showAmount);
  render();
})();
