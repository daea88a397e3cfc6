// Kassa's hosted checkout page. Plain browser JavaScript, no build step and no
// third-party code: it reads the session over GraphQL (/graphql), follows it live
// over a graphql-ws WebSocket (polling when that fails) and binds the payer's
// transaction. Amounts stay strings; base units are computed with BigInt.
'use strict';

(function checkoutPage() {
  const page = JSON.parse(document.getElementById('kassa-page-data').textContent);

  const SESSION_FIELDS = `sessionId status cryptoCurrency totalAmountCrypto amountReceived amountDue cryptoOptions { ticker amount }
    fiatCurrency totalAmountFiat walletAddress supportedNetworks secondsUntilExpiry boundTxHash chainId
    items { name quantity unitPrice totalPrice }`;
  const PAGE_QUERY = `query CheckoutPage($id: ID!) {
    checkoutSession(id: $id) { ${SESSION_FIELDS} }
    networks { slug name chainId confirmations assets { ticker native contractAddress decimals } } }`;
  const SESSION_QUERY = `query CheckoutSession($id: ID!) { checkoutSession(id: $id) { ${SESSION_FIELDS} } }`;
  const UPDATES = `subscription CheckoutUpdates($id: ID!) { checkoutSessionUpdated(id: $id) { ${SESSION_FIELDS} } }`;
  const BIND = `mutation BindTransaction($sessionId: ID!, $input: BindTransactionInput!) {
    bindTransaction(sessionId: $sessionId, input: $input) { boundTxHash cryptoCurrency totalAmountCrypto status } }`;

  const POLL_MS = 5000;
  const OPEN = ['PENDING', 'WAITING_PAYMENT', 'PARTIAL'];
  const STATUS_TEXT = {
    PENDING: 'Not yet payable',
    WAITING_PAYMENT: 'Waiting for payment',
    PARTIAL: 'Partially paid',
    PAID: 'Paid',
    EXPIRED: 'Expired',
    FAILED: 'Failed',
  };

  const $ = (id) => document.getElementById(id);
  const state = { session: null, networks: [], asset: null, network: null, deadline: 0, live: null };

  // ---- GraphQL over HTTP (JSON content type: Apollo's CSRF prevention lets it through) ----

  async function graphql(query, variables) {
    const response = await fetch('/graphql', {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json' },
      body: JSON.stringify({ query, variables }),
    });
    let body;
    try {
      body = await response.json();
    } catch {
      throw new Error(`The server answered ${response.status}. Please try again.`);
    }
    if (body.errors && body.errors.length > 0) throw new Error(body.errors.map((e) => e.message).join('\n'));
    if (!response.ok || !body.data) throw new Error(`The server answered ${response.status}. Please try again.`);
    return body.data;
  }

  // ---- Amounts: strings in, strings out ----

  /** amount × 10^decimals, rounded up, from the 8-decimal string: never through a float. */
  function baseUnitsCeil(amount, decimals) {
    const [whole, fraction = ''] = amount.split('.');
    let units = BigInt(whole + fraction.padEnd(decimals, '0').slice(0, decimals));
    if (/[1-9]/.test(fraction.slice(decimals))) units += 1n;
    return units;
  }

  function paymentUri(chainId, wallet, asset, amount) {
    const units = baseUnitsCeil(amount, asset.decimals).toString();
    return asset.native
      ? `ethereum:${wallet}@${chainId}?value=${units}`
      : `ethereum:${asset.contractAddress}@${chainId}/transfer?address=${wallet}&uint256=${units}`;
  }

  /** "1234.50000000" → "1,234.50": fiat shown with at least 2 and at most 8 decimals, trailing zeros cut. */
  function fiat(amount) {
    const [whole, fraction = ''] = amount.split('.');
    const cut = fraction.replace(/0+$/, '').padEnd(2, '0');
    return `${whole.replace(/\B(?=(\d{3})+(?!\d))/g, ',')}.${cut}`;
  }

  const isOpen = (session) => OPEN.includes(session.status);

  // ---- Rendering ----

  function render() {
    const session = state.session;
    const main = $('checkout');
    main.setAttribute('aria-busy', 'false');
    main.dataset.status = session.status;

    const status = $('status');
    status.hidden = false;
    $('footer').hidden = false;
    status.textContent = STATUS_TEXT[session.status] || session.status;
    status.className = `status status-${session.status.toLowerCase()}`;
    $('title').textContent = { PAID: 'Payment complete', EXPIRED: 'Checkout expired', FAILED: 'Payment failed' }[session.status] || 'Complete your payment';

    renderSummary(session);
    renderOutcome(session);

    const open = isOpen(session);
    $('countdown-box').hidden = !open;
    $('pay').hidden = !open;
    if (open) renderPayment(session);
    $('bind').hidden = !open || Boolean(session.boundTxHash) || !state.network;
    $('bound').hidden = !open || !session.boundTxHash;
    $('bound-hash').textContent = session.boundTxHash || '';

    const devHint = $('dev-hint');
    devHint.hidden = !(page.developmentHints && open);
    devHint.replaceChildren('Development: ', cell('code', `npx kassa dev pay ${session.sessionId} --wait`), ' pays this session on the sandbox chain.');
  }

  function renderSummary(session) {
    $('summary').hidden = false;
    const body = $('items').tBodies[0];
    body.replaceChildren(
      ...session.items.map((item) => {
        const row = document.createElement('tr');
        const name = cell('td', item.name, 'item-name');
        // Shown instead of the Qty and Unit price columns at phone width.
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
    $('total-fiat').textContent = `${fiat(session.totalAmountFiat)} ${session.fiatCurrency}`;
    $('session-id').textContent = session.sessionId;
  }

  function cell(tag, text, className) {
    const element = document.createElement(tag);
    element.textContent = text;
    if (className) element.className = className;
    return element;
  }

  function renderOutcome(session) {
    const outcome = $('outcome');
    const texts = {
      PAID: ['Payment received', `Thank you. Your payment${session.totalAmountCrypto ? ` of ${session.totalAmountCrypto} ${session.cryptoCurrency}` : ''} is confirmed. You can close this page.`],
      EXPIRED: ['This checkout has expired', 'It can no longer be paid. If you already sent a payment, contact the merchant with your transaction hash.'],
      FAILED: ['Payment failed', 'Your transaction could not be accepted for this checkout. Contact the merchant with your transaction hash.'],
      PARTIAL: [
        'Partially paid',
        `We received ${session.amountReceived} ${session.cryptoCurrency} of ${session.totalAmountCrypto}. Send the remaining ${session.amountDue} ${session.cryptoCurrency} to the same address, from the same wallet.`,
      ],
    }[session.status];
    const wasHidden = outcome.hidden;
    outcome.hidden = !texts;
    if (!texts) return;
    outcome.className = `outcome outcome-${session.status.toLowerCase()}`;
    $('outcome-title').textContent = texts[0];
    $('outcome-text').textContent = texts[1];
    if (wasHidden && !isOpen(session)) outcome.focus();
  }

  function owed(session) {
    return session.amountDue && !/^0\.0+$/.test(session.amountDue) ? session.amountDue : session.totalAmountCrypto;
  }

  /** The options the payer can still choose: every quote, or only the locked asset. */
  function assetOptions(session) {
    // Once an asset is locked, what is still owed (the rest, after a partial payment).
    if (session.cryptoCurrency) return [{ ticker: session.cryptoCurrency, amount: owed(session) }];
    return session.cryptoOptions;
  }

  /** The session's networks that carry `ticker`, with how it is paid there. */
  function networksFor(session, ticker) {
    return state.networks
      .filter((network) => session.supportedNetworks.includes(network.slug))
      .map((network) => ({ network, asset: network.assets.find((asset) => asset.ticker === ticker) }))
      .filter((entry) => entry.asset)
      .filter((entry) => !session.chainId || entry.network.chainId === session.chainId);
  }

  function renderPayment(session) {
    const options = assetOptions(session);
    if (!options.some((option) => option.ticker === state.asset)) state.asset = options.length === 1 ? options[0].ticker : null;
    renderChoices($('assets'), 'asset', options.map((option) => ({
      value: option.ticker,
      label: option.ticker,
      detail: option.amount,
    })), state.asset, (value) => {
      state.asset = value;
      state.network = null;
      render();
    });

    const networks = state.asset ? networksFor(session, state.asset) : [];
    if (!networks.some((entry) => entry.network.slug === state.network)) state.network = networks[0] ? networks[0].network.slug : null;
    $('networks').hidden = !state.asset;
    renderChoices($('networks'), 'network', networks.map((entry) => ({
      value: entry.network.slug,
      label: entry.network.name,
      detail: `chain ${entry.network.chainId} · ${entry.asset.native ? 'native coin' : 'token'}`,
    })), state.network, (value) => {
      state.network = value;
      render();
    });

    const chosen = networks.find((entry) => entry.network.slug === state.network);
    const option = options.find((o) => o.ticker === state.asset);
    $('instructions').hidden = !chosen || !option;
    if (!chosen || !option) return;

    const { network, asset } = chosen;
    const wallet = (page.wallets && page.wallets[network.slug]) || session.walletAddress;
    $('amount').textContent = `${option.amount} ${asset.ticker}`;
    $('amount').dataset.value = option.amount;
    $('wallet').textContent = wallet;
    $('network-name').textContent = `${network.name} (chain id ${network.chainId})`;
    $('token-row').hidden = asset.native;
    $('token-contract').textContent = asset.native ? '' : asset.contractAddress;
    $('decimals-row').hidden = asset.native;
    $('token-decimals').textContent = asset.native ? '' : String(asset.decimals);
    const qr = `/pay/${encodeURIComponent(session.sessionId)}/qr.svg?network=${encodeURIComponent(network.slug)}&asset=${encodeURIComponent(asset.ticker)}`;
    if ($('qr').getAttribute('src') !== qr) $('qr').src = qr;
    $('wallet-link').href = paymentUri(network.chainId, wallet, asset, option.amount);
    $('pay-hint').textContent = asset.native
      ? `Send exactly this amount of ${network.name}'s own coin. Kassa counts it after ${network.confirmations} confirmation${network.confirmations === 1 ? '' : 's'}.`
      : `Send the ${asset.ticker} token (the contract above) on ${network.name}, not another chain's. Kassa counts it after ${network.confirmations} confirmation${network.confirmations === 1 ? '' : 's'}.`;
  }

  /** Radio buttons as large tappable labels; rebuilt only when the options change. */
  function renderChoices(fieldset, name, choices, selected, onChoose) {
    const key = JSON.stringify(choices);
    if (fieldset.dataset.key !== key) {
      fieldset.dataset.key = key;
      fieldset.querySelectorAll('label').forEach((label) => label.remove());
      for (const choice of choices) {
        const label = document.createElement('label');
        label.className = 'choice';
        const input = document.createElement('input');
        input.type = 'radio';
        input.name = name;
        input.value = choice.value;
        input.addEventListener('change', () => onChoose(choice.value));
        const title = cell('span', choice.label, 'choice-label');
        const detail = cell('span', choice.detail, 'choice-detail');
        label.append(input, title, detail);
        fieldset.append(label);
      }
    }
    fieldset.querySelectorAll('input').forEach((input) => {
      input.checked = input.value === selected;
    });
  }

  // ---- Countdown from secondsUntilExpiry (the server's clock, not the device's) ----

  function setDeadline(seconds) {
    state.deadline = performance.now() + seconds * 1000;
    tick();
  }

  function tick() {
    if (!state.session) return;
    const left = Math.max(0, Math.round((state.deadline - performance.now()) / 1000));
    const h = Math.floor(left / 3600);
    const m = Math.floor((left % 3600) / 60);
    const s = left % 60;
    const mm = String(m).padStart(h > 0 ? 2 : 1, '0');
    $('countdown').textContent = `${h > 0 ? `${h}:` : ''}${mm}:${String(s).padStart(2, '0')}`;
    $('countdown-box').classList.toggle('countdown-low', left < 300);
    if (left === 0 && isOpen(state.session) && !state.expiryChecked) {
      // Time is up: ask once; the server settles expiry on read.
      state.expiryChecked = true;
      refresh();
    }
  }

  // ---- Applying a newer view of the session ----

  function apply(session) {
    if (!session) return;
    state.session = session;
    setDeadline(session.secondsUntilExpiry);
    if (session.secondsUntilExpiry > 0) state.expiryChecked = false;
    render();
    if (!isOpen(session)) stopLive();
  }

  async function refresh() {
    try {
      const data = await graphql(SESSION_QUERY, { id: page.sessionId });
      apply(data.checkoutSession);
    } catch {
      // A failed refresh keeps the last view; the next poll or message tries again.
    }
  }

  // ---- Live updates: graphql-ws protocol over the browser's WebSocket, polling as a fallback ----

  function setLive(mode, text) {
    const label = $('live-state');
    label.dataset.live = mode;
    label.textContent = text;
  }

  function startLive() {
    let socket;
    try {
      const scheme = location.protocol === 'https:' ? 'wss:' : 'ws:';
      socket = new WebSocket(`${scheme}//${location.host}/graphql`, 'graphql-transport-ws');
    } catch {
      startPolling();
      return;
    }
    let acknowledged = false;
    const ackTimer = setTimeout(() => {
      if (!acknowledged) socket.close();
    }, 5000);
    state.live = { socket, stop: () => {
      clearTimeout(ackTimer);
      if (socket.readyState === WebSocket.OPEN) socket.send(JSON.stringify({ id: '1', type: 'complete' }));
      socket.close(1000);
    } };
    socket.addEventListener('open', () => socket.send(JSON.stringify({ type: 'connection_init', payload: {} })));
    socket.addEventListener('message', (event) => {
      let message;
      try {
        message = JSON.parse(event.data);
      } catch {
        return;
      }
      switch (message.type) {
        case 'connection_ack':
          acknowledged = true;
          clearTimeout(ackTimer);
          socket.send(JSON.stringify({ id: '1', type: 'subscribe', payload: { query: UPDATES, variables: { id: page.sessionId } } }));
          setLive('socket', 'Live updates on');
          break;
        case 'ping':
          socket.send(JSON.stringify({ type: 'pong' }));
          break;
        case 'next':
          if (message.payload && message.payload.data) apply(message.payload.data.checkoutSessionUpdated);
          break;
        case 'error':
        case 'complete':
          socket.close(1000);
          break;
        default:
      }
    });
    socket.addEventListener('close', () => {
      clearTimeout(ackTimer);
      if (state.live && state.live.socket === socket) {
        state.live = null;
        if (state.session && isOpen(state.session)) startPolling();
      }
    });
  }

  function startPolling() {
    setLive('polling', `Checking for updates every ${POLL_MS / 1000} s`);
    const timer = setInterval(refresh, POLL_MS);
    state.live = { stop: () => clearInterval(timer) };
  }

  function stopLive() {
    const live = state.live;
    state.live = null;
    if (live) live.stop();
    setLive('closed', 'This checkout is closed');
  }

  // ---- The payer's actions ----

  async function copy(button) {
    const source = $(button.dataset.copy);
    const text = source.dataset.value || source.textContent;
    try {
      await navigator.clipboard.writeText(text);
    } catch {
      const range = document.createRange();
      range.selectNodeContents(source);
      const selection = getSelection();
      selection.removeAllRanges();
      selection.addRange(range);
      document.execCommand('copy');
    }
    button.textContent = 'Copied';
    setTimeout(() => {
      button.textContent = 'Copy';
    }, 1500);
  }

  async function bind(event) {
    event.preventDefault();
    const session = state.session;
    const network = state.networks.find((n) => n.slug === state.network);
    const error = $('bind-error');
    const submit = $('bind-submit');
    error.hidden = true;
    if (!session || !network || !state.asset) return;
    const input = { txHash: $('tx-hash').value.trim(), chainId: network.chainId, cryptoCurrency: state.asset };
    const payer = $('payer-wallet').value.trim();
    if (payer) input.payerWalletAddress = payer;
    submit.disabled = true;
    submit.textContent = 'Confirming…';
    try {
      const data = await graphql(BIND, { sessionId: session.sessionId, input });
      const result = data.bindTransaction;
      apply({ ...session, boundTxHash: result.boundTxHash, cryptoCurrency: result.cryptoCurrency, totalAmountCrypto: result.totalAmountCrypto, status: result.status, chainId: network.chainId });
      refresh();
    } catch (failure) {
      error.textContent = failure.message;
      error.hidden = false;
      $('tx-hash').setAttribute('aria-invalid', 'true');
    } finally {
      submit.disabled = false;
      submit.textContent = 'Confirm payment';
    }
  }

  // ---- Start ----

  async function start() {
    document.querySelectorAll('button.copy').forEach((button) => button.addEventListener('click', () => copy(button)));
    $('bind-form').addEventListener('submit', bind);
    $('tx-hash').addEventListener('input', () => $('tx-hash').removeAttribute('aria-invalid'));
    setInterval(tick, 1000);
    try {
      const data = await graphql(PAGE_QUERY, { id: page.sessionId });
      state.networks = data.networks;
      apply(data.checkoutSession);
    } catch (failure) {
      $('checkout').setAttribute('aria-busy', 'false');
      $('status').hidden = false;
      $('status').textContent = 'Unavailable';
      $('load-error').textContent = `This checkout could not be loaded: ${failure.message}`;
      $('load-error').hidden = false;
      $('footer').hidden = false;
      setLive('closed', 'Reload the page to try again');
      return;
    }
    if (isOpen(state.session)) startLive();
  }

  start();
})();
