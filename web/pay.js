// Kassa's hosted checkout page. Plain browser JavaScript, no build step and no
// third-party code: it reads the session over GraphQL (/graphql), follows it live
// over a graphql-ws WebSocket (polling when that fails) and binds the payer's
// transaction. Amounts stay strings, exactly as the server computes them
// (paymentOptions: amount in the token's own units, base units, payment URI; amountDue;
// pendingCoversDue): the page does no arithmetic on money.
'use strict';

(function checkoutPage() {
  const page = JSON.parse(document.getElementById('kassa-page-data').textContent);
  const texts = page.messages || {};
  const locale = page.lang || 'en';

  // ---- Texts: one catalogue per language (web/i18n/<lang>.json), chosen by the server ----

  /** The catalogue's text for `key` with `{name}` filled in; a missing text shows as ⟦key⟧ (tests look for it). */
  function t(key, params) {
    const text = texts[key];
    if (typeof text !== 'string') return `⟦${key}⟧`;
    return params ? text.replace(/\{(\w+)\}/g, (whole, name) => (name in params ? String(params[name]) : whole)) : text;
  }
  const plurals = new Intl.PluralRules(locale);
  const confirmationsText = (count) =>
    t(plurals.select(count) === 'one' ? 'confirmations.one' : 'confirmations.other', { count });

  // The page's GraphQL documents, each with its id and text (src/graphql/page-documents.ts, given in the page data).
  const { CheckoutPage, CheckoutSession, CheckoutPoll, CheckoutUpdates, BindTransaction } = page.documents;

  const POLL_MS = 5000;
  const OPEN = ['PENDING', 'WAITING_PAYMENT', 'PARTIAL'];
  const statusText = (status) => t(`status.${status.toLowerCase()}`);
  const txStateText = (state) => t(`transactions.${state.toLowerCase()}`);

  const $ = (id) => document.getElementById(id);
  const state = { session: null, networks: [], asset: null, network: null, deadline: 0, live: null };

  // ---- GraphQL over HTTP ----
  // Each document goes by its id (a trusted document the server knows): queries as GET, the query string about 100
  // bytes and answered from the server's kept answers without reading a body; the mutation as a JSON POST. A 400 to
  // a request by id sends the text: the server does not know the id (PERSISTED_QUERY_NOT_FOUND: another release,
  // mid-deploy), or knows no ids at all (an earlier release refuses the GET as a possible CSRF and the POST for its
  // missing query). The text goes as a GET with Apollo's preflight header past its CSRF prevention.

  async function graphql(document, variables, method = 'GET') {
    let body = await send(document, variables, method, true);
    if (body.status === 400) body = await send(document, variables, method, false);
    if (body.errors && body.errors.length > 0) throw new Error(body.errors.map((e) => e.message).join('\n'));
    if (!body.data) throw new Error(t('error.server', { status: body.status }));
    return body.data;
  }

  async function send(document, variables, method, byId) {
    const question = byId ? { documentId: document.id } : { query: document.text };
    const response =
      method === 'POST'
        ? await fetch('/graphql', {
            method: 'POST',
            headers: { 'content-type': 'application/json', accept: 'application/json' },
            body: JSON.stringify({ ...question, variables }),
          })
        : await fetch(`/graphql?${new URLSearchParams({ ...question, variables: JSON.stringify(variables) })}`, {
            headers: byId
              ? { accept: 'application/json' }
              : { 'apollo-require-preflight': 'true', accept: 'application/json' },
            cache: 'no-store',
          });
    let body;
    try {
      body = await response.json();
    } catch {
      throw new Error(t('error.server', { status: response.status }));
    }
    if (!response.ok && !(body && body.errors)) throw new Error(t('error.server', { status: response.status }));
    return { ...body, status: response.status };
  }

  // ---- Amounts: strings in, strings out ----

  // The locale's separators, applied to the server's exact digits (never through a float).
  const separators = (() => {
    const parts = new Intl.NumberFormat(locale).formatToParts(11111.5);
    const part = (type, fallback) => (parts.find((p) => p.type === type) || { value: fallback }).value;
    return { group: part('group', ','), decimal: part('decimal', '.') };
  })();

  /** "1234.50000000" → "1,234.50" (en) or "1.234,50" (de): at least 2 and at most 8 decimals, trailing zeros cut. */
  function fiat(amount) {
    const [whole, fraction = ''] = amount.split('.');
    const cut = fraction.replace(/0+$/, '').padEnd(2, '0');
    return `${whole.replace(/\B(?=(\d{3})+(?!\d))/g, separators.group)}${separators.decimal}${cut}`;
  }

  const dateFormat = new Intl.DateTimeFormat(locale, { dateStyle: 'medium', timeStyle: 'short' });

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
    status.textContent = isOpen(session) && session.paymentDetected ? t('status.detected') : statusText(session.status);
    status.className = `status status-${session.status.toLowerCase()}`;
    $('title').textContent =
      { PAID: t('pay.titlePaid'), EXPIRED: t('pay.titleExpired'), FAILED: t('pay.titleFailed') }[session.status] ||
      t('pay.title');

    renderSummary(session);
    renderOutcome(session);

    const open = isOpen(session);
    // A payment on its way that covers what is owed: do not invite the payer to pay twice.
    const settling = open && session.pendingCoversDue;
    $('countdown-box').hidden = !open;
    $('pay-by').hidden = !open;
    if (open) $('pay-by').textContent = t('countdown.payBy', { date: dateFormat.format(new Date(session.expiresAt)) });
    $('pay').hidden = !open || settling;
    if (open && !settling) renderPayment(session);
    $('bind').hidden = !open || settling || !state.network;
    renderTransactions(session);

    const devHint = $('dev-hint');
    devHint.hidden = !(page.developmentHints && open);
    devHint.replaceChildren(
      t('dev.before'),
      cell('code', `npx kassa dev pay ${session.sessionId} --wait`),
      t('dev.after'),
    );
    if (window.KassaWallet) window.KassaWallet.render();
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
    const texts =
      {
        PAID: [
          t('outcome.paidTitle'),
          session.totalAmountCrypto
            ? t('outcome.paidTextAmount', { amount: session.totalAmountCrypto, ticker: session.cryptoCurrency })
            : t('outcome.paidText'),
        ],
        EXPIRED: [t('outcome.expiredTitle'), t('outcome.expiredText')],
        FAILED: [t('outcome.failedTitle'), t('outcome.failedText')],
        PARTIAL: [
          t('outcome.partialTitle'),
          t('outcome.partialText', {
            received: session.amountReceived,
            ticker: session.cryptoCurrency,
            total: session.totalAmountCrypto,
            rest: owed(session),
          }),
        ],
      }[session.status] || detected(session);
    const wasHidden = outcome.hidden;
    outcome.hidden = !texts;
    if (!texts) return;
    outcome.className = `outcome outcome-${session.status.toLowerCase()}`;
    $('outcome-title').textContent = texts[0];
    $('outcome-text').textContent = texts[1];
    if (wasHidden && !isOpen(session)) outcome.focus();
  }

  /** While open: a payment on chain that is not confirmed yet keeps the session open; say so. */
  function detected(session) {
    if (!isOpen(session) || !session.paymentDetected) return null;
    const confirmations = session.chainId && state.networks.find((n) => n.chainId === session.chainId);
    const needed = confirmations ? ` (${confirmationsText(confirmations.confirmations)})` : '';
    return [
      t('outcome.detectedTitle'),
      t('outcome.detectedText', { amount: session.amountPending, ticker: session.cryptoCurrency || '', needed }),
    ];
  }

  /** What is still owed exactly, in the token's units, from the server's payment options. */
  function owed(session) {
    const option = session.paymentOptions[0];
    return option ? option.amount : session.amountDue;
  }

  /** The assets the payer can still choose, each with its amount: every quote, or only the locked asset. */
  function assetOptions(session) {
    const seen = new Map();
    for (const option of session.paymentOptions)
      if (!seen.has(option.ticker)) seen.set(option.ticker, { ticker: option.ticker, amount: option.amount });
    return [...seen.values()];
  }

  /** The session's networks that carry `ticker`, with exactly what to send there. */
  function networksFor(session, ticker) {
    return session.paymentOptions
      .filter((option) => option.ticker === ticker)
      .map((option) => ({
        network: state.networks.find((n) => n.slug === option.network) || {
          slug: option.network,
          name: option.network,
          chainId: option.chainId,
          confirmations: 1,
        },
        option,
      }));
  }

  /** The payer's bound transactions and what Kassa found about each. */
  function renderTransactions(session) {
    const list = $('bound-list');
    const shown = isOpen(session) ? session.transactions : [];
    $('bound').hidden = shown.length === 0;
    const latest = shown[shown.length - 1];
    $('bound-hash').textContent = latest ? latest.txHash : '';
    list.replaceChildren(
      ...shown.map((tx) => {
        const item = document.createElement('li');
        item.dataset.state = tx.state;
        item.append(cell('code', tx.txHash, 'break'), ' ', cell('span', txStateText(tx.state), 'tx-state'));
        if (tx.reason)
          item.append(cell('p', t('transactions.notAccepted', { reason: tx.reason }), 'notice notice-error'));
        return item;
      }),
    );
  }

  function renderPayment(session) {
    const options = assetOptions(session);
    if (!options.some((option) => option.ticker === state.asset))
      state.asset = options.length === 1 ? options[0].ticker : null;
    renderChoices(
      $('assets'),
      'asset',
      options.map((option) => ({
        value: option.ticker,
        label: option.ticker,
        detail: option.amount,
      })),
      state.asset,
      (value) => {
        state.asset = value;
        state.network = null;
        render();
      },
    );

    const networks = state.asset ? networksFor(session, state.asset) : [];
    if (!networks.some((entry) => entry.network.slug === state.network))
      state.network = networks[0] ? networks[0].network.slug : null;
    $('networks').hidden = !state.asset;
    renderChoices(
      $('networks'),
      'network',
      networks.map((entry) => ({
        value: entry.network.slug,
        label: entry.network.name,
        detail: t(entry.option.native ? 'choose.nativeDetail' : 'choose.tokenDetail', {
          chainId: entry.network.chainId,
        }),
      })),
      state.network,
      (value) => {
        state.network = value;
        render();
      },
    );

    const chosen = networks.find((entry) => entry.network.slug === state.network);
    $('instructions').hidden = !chosen;
    if (!chosen) return;

    const { network, option: asset } = chosen;
    $('amount').textContent = `${asset.amount} ${asset.ticker}`;
    $('amount').dataset.value = asset.amount;
    $('wallet').textContent = asset.walletAddress;
    $('network-name').textContent = t('instructions.networkName', { name: network.name, chainId: network.chainId });
    $('token-row').hidden = asset.native;
    $('token-contract').textContent = asset.native ? '' : asset.contractAddress;
    $('decimals-row').hidden = asset.native;
    $('token-decimals').textContent = asset.native ? '' : String(asset.decimals);
    // The amount is in the image's URL so that a new amount (a partial payment's rest, a new quote) loads a new image:
    // the server draws the session's current request whatever it says, and ignores it otherwise.
    const qr = `/pay/${encodeURIComponent(session.sessionId)}/qr.svg?network=${encodeURIComponent(network.slug)}&asset=${encodeURIComponent(asset.ticker)}&amount=${encodeURIComponent(asset.amount)}`;
    if ($('qr').getAttribute('src') !== qr) $('qr').src = qr;
    $('wallet-link').href = asset.uri;
    const confirmations = confirmationsText(network.confirmations);
    $('pay-hint').textContent = asset.native
      ? t('instructions.hintNative', { network: network.name, confirmations })
      : t('instructions.hintToken', { ticker: asset.ticker, network: network.name, confirmations });
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
    $('countdown-label').textContent = left === 0 ? t('countdown.up') : t('countdown.left');
    $('countdown-box').classList.toggle('countdown-low', left < 300);
    if (left === 0 && isOpen(state.session)) {
      // Time is up: the server decides. A payment sent in time keeps the checkout open until it confirms.
      $('countdown').textContent = state.session.paymentDetected ? t('countdown.waiting') : t('countdown.checking');
      if (!state.expiryChecked) {
        state.expiryChecked = true;
        refresh();
      }
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

  // A refresh asks only what can change (CheckoutPoll: under a quarter of the whole session's bytes, every POLL_MS on a
  // phone without the WebSocket). A payment option is given by its network, asset and amount: while those are the
  // ones shown, the rest of each option (wallet, contract, base units, URI) is what the page holds; when they differ
  // (an asset selected, a partial payment's rest, a new quote) it reads the whole session again.
  async function refresh() {
    try {
      const polled = (await graphql(CheckoutPoll, { id: page.sessionId })).checkoutSession;
      const held = state.session;
      if (polled && held && sameOptions(held.paymentOptions, polled.paymentOptions))
        apply({ ...held, ...polled, paymentOptions: held.paymentOptions });
      else apply((await graphql(CheckoutSession, { id: page.sessionId })).checkoutSession);
    } catch {
      // A failed refresh keeps the last view; the next poll or message tries again.
    }
  }

  function sameOptions(held, polled) {
    return (
      held.length === polled.length &&
      held.every(
        (option, i) =>
          option.network === polled[i].network &&
          option.ticker === polled[i].ticker &&
          option.amount === polled[i].amount,
      )
    );
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
    state.live = {
      socket,
      stop: () => {
        clearTimeout(ackTimer);
        if (socket.readyState === WebSocket.OPEN) socket.send(JSON.stringify({ id: '1', type: 'complete' }));
        socket.close(1000);
      },
    };
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
          socket.send(
            JSON.stringify({
              id: '1',
              type: 'subscribe',
              payload: { query: CheckoutUpdates.text, variables: { id: page.sessionId } },
            }),
          );
          setLive('socket', t('live.socket'));
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
    setLive('polling', t('live.polling', { seconds: POLL_MS / 1000 }));
    const timer = setInterval(refresh, POLL_MS);
    state.live = { stop: () => clearInterval(timer) };
  }

  function stopLive() {
    const live = state.live;
    state.live = null;
    if (live) live.stop();
    setLive('closed', t('live.closed'));
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
    button.textContent = t('copy.done');
    setTimeout(() => {
      button.textContent = t('copy.button');
    }, 1500);
  }

  /**
   * Binds a transaction hash to the session with the asset and network it was paid in: `paid`
   * ({ ticker, chainId }) as chosen when the payment was sent (the wallet captures it then: the
   * payer may look at another asset while the wallet is open), else the current choice (the form).
   * Shows it as being checked.
   */
  async function bindHash(txHash, payerWalletAddress, paid) {
    const session = state.session;
    const chosen = paid || {
      ticker: state.asset,
      chainId: state.networks.find((n) => n.slug === state.network).chainId,
    };
    const input = { txHash, chainId: chosen.chainId, cryptoCurrency: chosen.ticker };
    if (payerWalletAddress) input.payerWalletAddress = payerWalletAddress;
    const data = await graphql(BindTransaction, { sessionId: session.sessionId, input }, 'POST');
    const result = data.bindTransaction;
    const current = state.session;
    const known = current.transactions.some((tx) => tx.txHash === result.boundTxHash);
    const transactions = known
      ? current.transactions
      : [
          ...current.transactions,
          {
            txHash: result.boundTxHash,
            chainId: chosen.chainId,
            cryptoCurrency: result.cryptoCurrency,
            state: 'UNVERIFIED',
            reason: null,
          },
        ];
    apply({ ...current, status: result.status, transactions });
    refresh();
    return result;
  }

  async function bind(event) {
    event.preventDefault();
    const error = $('bind-error');
    const submit = $('bind-submit');
    error.hidden = true;
    if (!state.session || !state.networks.some((n) => n.slug === state.network) || !state.asset) return;
    submit.disabled = true;
    submit.textContent = t('bind.submitting');
    try {
      await bindHash($('tx-hash').value.trim(), $('payer-wallet').value.trim());
      $('tx-hash').value = '';
    } catch (failure) {
      error.textContent = failure.message;
      error.hidden = false;
      $('tx-hash').setAttribute('aria-invalid', 'true');
    } finally {
      submit.disabled = false;
      submit.textContent = t('bind.submit');
    }
  }

  /** The payment option the payer has chosen (asset on network), exactly as the server computed it. */
  function chosenOption() {
    const session = state.session;
    if (!session || !isOpen(session) || session.pendingCoversDue || !state.asset || !state.network) return null;
    const option = session.paymentOptions.find((o) => o.ticker === state.asset && o.network === state.network);
    const network = state.networks.find((n) => n.slug === state.network);
    return option && network ? { option, network } : null;
  }

  // ---- Start ----

  async function start() {
    // The merchant's colour (CSSOM: allowed by the CSP, unlike inline styles); the server picked a readable text colour.
    if (page.brand) {
      document.documentElement.style.setProperty('--brand', page.brand.color);
      document.documentElement.style.setProperty('--brand-ink', page.brand.ink);
    }
    if (window.KassaWallet) window.KassaWallet.init({ t, chosenOption, bindHash, addChain: page.addChain || {} });
    document.querySelectorAll('button.copy').forEach((button) => button.addEventListener('click', () => copy(button)));
    $('bind-form').addEventListener('submit', bind);
    $('tx-hash').addEventListener('input', () => $('tx-hash').removeAttribute('aria-invalid'));
    setInterval(tick, 1000);
    try {
      const data = await graphql(CheckoutPage, { id: page.sessionId });
      state.networks = data.networks;
      apply(data.checkoutSession);
    } catch (failure) {
      $('checkout').setAttribute('aria-busy', 'false');
      $('status').hidden = false;
      $('status').textContent = t('status.unavailable');
      $('load-error').textContent = t('error.load', { message: failure.message });
      $('load-error').hidden = false;
      $('footer').hidden = false;
      setLive('closed', t('live.reload'));
      return;
    }
    if (isOpen(state.session)) startLive();
  }

  start();
})();
