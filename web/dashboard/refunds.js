// The session page's refunds (docs/refund-claims.md#the-dashboard): the session's refunds, a "Refund" form for roles
// with manage_refunds, and "Send from wallet": Kassa builds the transfer, the merchant's EIP-1193 wallet sends it.

const TEXTS = {
  en: {
    title: 'Refunds',
    none: 'No refunds yet.',
    button: 'Refund',
    kind: 'What to refund',
    'kind.excess': 'The overpaid excess',
    'kind.full': 'Everything received',
    'kind.part': 'A part',
    amount: 'Amount (for a part)',
    basis: 'Amount in',
    'basis.token': 'the asset',
    'basis.fiat': "the session's currency, at the rate of the moment",
    where: 'Where to send it',
    'where.claim': 'A claim link for the payer to fill in',
    'where.address': 'This address',
    address: 'Address',
    create: 'Create refund',
    created: 'Refund created.',
    claimLink: 'Claim link (send it to the payer):',
    send: 'Send from wallet',
    noWallet: 'No browser wallet found: use `kassa refunds send` instead.',
    connecting: 'Connecting to the wallet…',
    confirm: 'Confirm the transfer in the wallet…',
    sent: 'Sent {hash}; Kassa follows it on the chain.',
    column: ['Status', 'Amount', 'Destination', 'Transaction'],
  },
  de: {
    title: 'Erstattungen',
    none: 'Noch keine Erstattungen.',
    button: 'Erstatten',
    kind: 'Was erstattet wird',
    'kind.excess': 'Der überzahlte Betrag',
    'kind.full': 'Alles Erhaltene',
    'kind.part': 'Ein Teil',
    amount: 'Betrag (für einen Teil)',
    basis: 'Betrag in',
    'basis.token': 'der Kryptowährung',
    'basis.fiat': 'der Währung der Sitzung, zum aktuellen Kurs',
    where: 'Wohin',
    'where.claim': 'Ein Link, in den der Zahler seine Adresse einträgt',
    'where.address': 'Diese Adresse',
    address: 'Adresse',
    create: 'Erstattung anlegen',
    created: 'Erstattung angelegt.',
    claimLink: 'Link für den Zahler:',
    send: 'Aus der Wallet senden',
    noWallet: 'Keine Browser-Wallet gefunden: Verwenden Sie stattdessen `kassa refunds send`.',
    connecting: 'Verbindung mit der Wallet …',
    confirm: 'Bestätigen Sie die Überweisung in der Wallet …',
    sent: '{hash} gesendet; Kassa verfolgt sie auf der Chain.',
    column: ['Status', 'Betrag', 'Ziel', 'Transaktion'],
  },
};

/**
 * Adds the refunds section to the session page; `page` lends what the session page has (element builder, role check).
 * @param {{ results: HTMLElement, org: string, session: { id: string }, csrf: string, can: (p: string) => boolean,
 *   el: (tag: string, attributes?: object, ...children: unknown[]) => HTMLElement, lang: string }} page
 */
export async function showRefunds(page) {
  const { results, org, session, csrf, can, el } = page;
  const texts = TEXTS[page.lang] || TEXTS.en;
  const base = '/dashboard/api/organisations/' + encodeURIComponent(org);
  const section = el('section', { id: 'refunds', 'aria-labelledby': 'refunds-title' });
  results.append(section);

  async function call(method, path, body) {
    const response = await fetch(base + path, {
      method,
      headers:
        body === undefined ? { 'X-CSRF-Token': csrf } : { 'Content-Type': 'application/json', 'X-CSRF-Token': csrf },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const answer = await response.json();
    if (!response.ok) throw new Error([].concat(answer.message).join('; ') || String(response.status));
    return answer;
  }

  async function render(note) {
    const { data } = await call('GET', '/sessions/' + session.id + '/refunds');
    const status = el('p', { class: 'note', role: 'status', id: 'refund-status' }, note || '');
    const rows = data.map((refund) =>
      el(
        'tr',
        { 'data-refund': refund.id, 'data-status': refund.status },
        el('td', {}, refund.status),
        el('td', {}, refund.amount + ' ' + refund.crypto_currency),
        el('td', {}, refund.destination || el('a', { href: refund.claim_url }, refund.claim_url)),
        el(
          'td',
          {},
          refund.tx_hash
            ? el('code', {}, refund.tx_hash)
            : refund.status === 'ready' && can('manage_refunds')
              ? sendButton(refund, status)
              : '–',
        ),
      ),
    );
    const list = data.length
      ? el(
          'table',
          {},
          el('thead', {}, el('tr', {}, ...texts.column.map((c) => el('th', {}, c)))),
          el('tbody', {}, ...rows),
        )
      : el('p', {}, texts.none);
    section.replaceChildren(el('h2', { id: 'refunds-title' }, texts.title), list, status);
    if (can('manage_refunds')) section.append(form(status));
  }

  function choice(name, values, label) {
    const select = el(
      'select',
      { name, id: 'refund-' + name },
      ...values.map((v) => el('option', { value: v }, texts[name + '.' + v])),
    );
    return el('div', { class: 'field' }, el('label', { for: 'refund-' + name }, label), select);
  }

  function form(status) {
    const address = el('input', {
      name: 'destination',
      id: 'refund-destination',
      autocomplete: 'off',
      placeholder: '0x…',
    });
    const amount = el('input', { name: 'amount', id: 'refund-amount', inputmode: 'decimal', autocomplete: 'off' });
    const body = el(
      'form',
      { id: 'refund-form', hidden: '' },
      choice('kind', ['excess', 'full', 'part'], texts.kind),
      el('div', { class: 'field' }, el('label', { for: 'refund-amount' }, texts.amount), amount),
      choice('basis', ['token', 'fiat'], texts.basis),
      choice('where', ['claim', 'address'], texts.where),
      el('div', { class: 'field' }, el('label', { for: 'refund-destination' }, texts.address), address),
      el('button', { type: 'submit' }, texts.create),
    );
    const open = el('button', { type: 'button', id: 'refund-button' }, texts.button);
    open.addEventListener('click', () => (body.hidden = !body.hidden));
    body.addEventListener('submit', (event) => {
      event.preventDefault();
      const fields = new FormData(body);
      const request = { kind: fields.get('kind'), basis: fields.get('basis'), amount: fields.get('amount') || null };
      if (fields.get('where') === 'address') request.destination = fields.get('destination');
      call('POST', '/sessions/' + session.id + '/refunds', request)
        .then((refund) =>
          render(texts.created + (refund.claim_url ? ' ' + texts.claimLink + ' ' + refund.claim_url : '')),
        )
        .catch((error) => (status.textContent = error.message));
    });
    return el('div', {}, open, body);
  }

  function sendButton(refund, status) {
    const button = el('button', { type: 'button', class: 'small', 'data-send': refund.id }, texts.send);
    button.addEventListener('click', () => {
      button.disabled = true;
      send(refund, status)
        .then((hash) => render(texts.sent.replace('{hash}', hash)))
        .catch((error) => (status.textContent = error.message))
        .finally(() => (button.disabled = false));
    });
    return button;
  }

  /** Kassa's transfer, exactly: the wallet is asked for the chain, then eth_sendTransaction; the hash goes back. */
  async function send(refund, status) {
    const provider = window.ethereum;
    if (!provider || typeof provider.request !== 'function') throw new Error(texts.noWallet);
    const { transaction } = await call('GET', '/refunds/' + refund.id + '/transfer');
    status.textContent = texts.connecting;
    const [from] = await provider.request({ method: 'eth_requestAccounts' });
    if (BigInt(await provider.request({ method: 'eth_chainId' })) !== BigInt(transaction.chain_id))
      await provider.request({ method: 'wallet_switchEthereumChain', params: [{ chainId: transaction.chain_id }] });
    status.textContent = texts.confirm;
    const hash = await provider.request({
      method: 'eth_sendTransaction',
      params: [{ from, to: transaction.to, data: transaction.data, value: transaction.value }],
    });
    await call('POST', '/refunds/' + refund.id + '/sent', { tx_hash: hash, from });
    return hash;
  }

  // The session page stands without its refunds: a failure here is said in the section, never thrown.
  await render('').catch((error) =>
    section.replaceChildren(el('p', { class: 'problem', role: 'alert' }, error.message)),
  );
}
