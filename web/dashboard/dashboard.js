// The dashboard's pages (docs/dashboard.md#the-pages): filters from the URL, data from /dashboard/graphql with the CSRF
// token, tables built with DOM calls (no HTML from data); the server wrote the frame, form and texts.
(function () {
  const texts = JSON.parse(document.getElementById('texts').textContent);
  const t = (key) => (key in texts ? texts[key] : key);
  const csrf = document.querySelector('meta[name="kassa-csrf"]').content;
  const lang = document.documentElement.lang;
  const org = document.body.dataset.org;
  const permissions = (document.body.dataset.permissions || '').split(' ');
  const can = (permission) => permissions.includes(permission);
  const results = document.getElementById('results');

  async function graphql(query, variables) {
    const response = await fetch('/dashboard/graphql', {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', 'X-CSRF-Token': csrf },
      body: JSON.stringify({ query, variables }),
    });
    if (response.status === 401) {
      location.assign('/dashboard/sign-in');
      return null;
    }
    const body = await response.json();
    if (body.errors) throw new Error(body.errors.map((e) => e.message).join('; '));
    return body.data;
  }

  function el(tag, attributes, ...children) {
    const node = document.createElement(tag);
    for (const [name, value] of Object.entries(attributes || {})) node.setAttribute(name, value);
    for (const child of children)
      if (child !== null && child !== undefined)
        node.append(typeof child === 'string' || typeof child === 'number' ? String(child) : child);
    return node;
  }

  const when = (iso) => iso.replace('T', ' ').slice(0, 19) + ' UTC';
  const statusText = (status) => t('status.' + status.toLowerCase());

  function showProblem(message) {
    results.replaceChildren(el('p', { class: 'problem', role: 'alert' }, t('error.load') + ' (' + message + ')'));
  }

  /** A table in a region that scrolls sideways on a narrow screen and can be reached by keyboard to do so. */
  function table(caption, headings, rows) {
    const head = el('tr', {}, ...headings.map((h) => el('th', { scope: 'col' }, h)));
    const body = el('tbody', {}, ...rows.map((cells) => el('tr', {}, ...cells.map((cell) => el('td', {}, cell)))));
    const wrap = el('div', { class: 'scroll', role: 'region', tabindex: '0', 'aria-label': caption });
    wrap.append(el('table', {}, el('caption', {}, caption), el('thead', {}, head), body));
    return wrap;
  }

  /** The URL's filters as the API's SessionFilterInput (the same names the CSV export reads). */
  function filterFromUrl(params) {
    const filter = {};
    const statuses = params.getAll('status').filter(Boolean);
    if (statuses.length) filter.statuses = statuses.map((s) => s.toUpperCase());
    const one = (name) => (params.get(name) || '').trim() || undefined;
    const day = (value, plus) => value && new Date(Date.parse(value + 'T00:00:00Z') + plus * 86400000).toISOString();
    if (one('asset')) filter.asset = one('asset');
    if (one('network')) filter.network = one('network');
    if (one('from')) filter.createdFrom = day(one('from'), 0);
    if (one('to')) filter.createdBefore = day(one('to'), 1);
    if (one('currency')) filter.fiatCurrency = one('currency');
    if (one('min')) filter.fiatMin = one('min');
    if (one('max')) filter.fiatMax = one('max');
    if (one('payer')) filter.payer = one('payer');
    if (one('tx')) filter.txHash = one('tx');
    if (one('link')) filter.paymentLinkId = one('link');
    if (one('wallet')) filter.payerWallet = one('wallet');
    if (one('meta')) filter.metadata = one('meta');
    return filter;
  }

  const LIST = `query List($org: ID!, $filter: SessionFilterInput, $after: String) {
    sessions(organisationId: $org, filter: $filter, first: 50, after: $after) {
      nodes { id status fiatCurrency totalAmountFiat cryptoCurrency payerEmail payerId createdAt }
      nextCursor
    }
  }`;

  async function showSessions() {
    const params = new URLSearchParams(location.search);
    const data = await graphql(LIST, { org, filter: filterFromUrl(params), after: params.get('after') || null });
    if (!data) return;
    const page = data.sessions;
    if (page.nodes.length === 0) {
      results.replaceChildren(el('p', {}, t('sessions.none')));
      return;
    }
    const rows = page.nodes.map((s) => {
      const href = '/dashboard/sessions/' + s.id + '?org=' + encodeURIComponent(org) + '&lang=' + lang;
      return [
        el('a', { href, 'aria-label': t('column.session') + ' ' + s.id }, s.id.slice(0, 8)),
        when(s.createdAt),
        statusText(s.status),
        s.totalAmountFiat.replace(/\.?0+$/, '') + ' ' + s.fiatCurrency,
        s.cryptoCurrency || '–',
        s.payerEmail || s.payerId,
      ];
    });
    const headings = ['column.session', 'column.created', 'column.status', 'column.total', 'column.asset'];
    const parts = [table(t('sessions.caption'), [...headings, 'column.payer'].map(t), rows)];
    const nav = el('p', { class: 'pages' });
    if (params.get('after')) {
      const first = new URLSearchParams(params);
      first.delete('after');
      nav.append(el('a', { href: '?' + first.toString() }, t('sessions.first')), ' ');
    }
    if (page.nextCursor) {
      const next = new URLSearchParams(params);
      next.set('after', page.nextCursor);
      nav.append(el('a', { href: '?' + next.toString(), rel: 'next' }, t('sessions.next')));
    }
    parts.push(nav);
    results.replaceChildren(...parts);
  }

  const STORY = `query Story($org: ID!, $id: ID!) {
    session(organisationId: $org, id: $id) {
      id status fiatCurrency totalAmountFiat cryptoCurrency totalAmountCrypto amountReceived payerEmail payerId
      createdAt expiresAt metadata
      items { name quantity unitPrice totalPrice }
      quotes { ticker amount unitPriceFiat }
      timeline {
        at kind fromStatus toStatus cause txHash network asset amount outcome reason blockNumber confirmations late
        attribution eventType endpointUrl attempt httpStatus deliveryId
      }
    }
  }`;

  const REDELIVER = `mutation Redeliver($org: ID!, $delivery: ID!) {
    redeliverWebhook(organisationId: $org, deliveryId: $delivery) { deliveryId }
  }`;

  /** A button that sends the delivery again; what came of it is said beside it. */
  function redeliverButton(deliveryId) {
    const status = el('span', { class: 'note', role: 'status' });
    const button = el('button', { type: 'button', class: 'small' }, t('timeline.redeliver'));
    button.addEventListener('click', () => {
      button.disabled = true;
      graphql(REDELIVER, { org, delivery: deliveryId })
        .then(() => (status.textContent = t('timeline.redelivered')))
        .catch((error) => (status.textContent = error.message))
        .finally(() => (button.disabled = false));
    });
    return el('span', {}, ' ', button, ' ', status);
  }

  function describe(entry) {
    const parts = [t('timeline.' + entry.kind.toLowerCase())];
    const add = (text) => text && parts.push(text);
    if (entry.kind === 'STATUS_CHANGED')
      add((entry.fromStatus ? statusText(entry.fromStatus) + ' → ' : '') + statusText(entry.toStatus));
    if (entry.kind === 'QUOTE_CHANGED') add(entry.asset + ' ' + entry.amount);
    if (entry.kind === 'BIND' || entry.kind === 'TRANSFER') add(entry.txHash + ' (' + entry.network + ')');
    if (entry.kind === 'TRANSFER') {
      add(entry.amount + ' ' + entry.asset);
      add(
        t('timeline.block') + ' ' + entry.blockNumber + ', ' + entry.confirmations + ' ' + t('timeline.confirmations'),
      );
      if (entry.late) add(t('timeline.late'));
      if (entry.attribution) add(t('timeline.countedBy') + ' ' + entry.attribution);
    }
    if (entry.kind === 'WEBHOOK_ATTEMPT') {
      add(entry.eventType + ' #' + entry.attempt);
      add(entry.httpStatus ? t('timeline.http') + ' ' + entry.httpStatus : t('timeline.noAnswer'));
    }
    if (entry.outcome && entry.kind !== 'WEBHOOK_ATTEMPT') add(entry.outcome);
    add(entry.cause);
    // A refused attempt's error is "HTTP <status>", said already.
    if (!(entry.kind === 'WEBHOOK_ATTEMPT' && entry.reason === 'HTTP ' + entry.httpStatus)) add(entry.reason);
    return parts.join(' · ');
  }

  async function showSession() {
    const data = await graphql(STORY, { org, id: document.body.dataset.session });
    if (!data) return;
    const s = data.session;
    const details = el('dl', { class: 'details' });
    const fact = (label, value) => details.append(el('dt', {}, label), el('dd', {}, value));
    fact(t('column.status'), statusText(s.status));
    fact(t('column.total'), s.totalAmountFiat + ' ' + s.fiatCurrency);
    fact(t('column.asset'), s.cryptoCurrency ? s.totalAmountCrypto + ' ' + s.cryptoCurrency : '–');
    fact(t('session.received'), s.amountReceived);
    fact(t('column.payer'), (s.payerEmail ? s.payerEmail + ' · ' : '') + s.payerId);
    fact(t('column.created'), when(s.createdAt));
    fact(t('session.expires'), when(s.expiresAt));
    fact(t('session.metadata'), el('code', {}, s.metadata));
    const items = s.items.map((i) => [i.name, i.quantity, i.unitPrice, i.totalPrice]);
    const quotes = s.quotes.map((q) => [q.ticker, q.amount, q.unitPriceFiat + ' ' + s.fiatCurrency]);
    // One button per delivery, on its latest attempt.
    const lastAttempt = new Map();
    s.timeline.forEach((entry, index) => entry.deliveryId && lastAttempt.set(entry.deliveryId, index));
    const timeline = el(
      'ol',
      { class: 'timeline' },
      ...s.timeline.map((entry, index) =>
        el(
          'li',
          {},
          el('time', { datetime: entry.at }, when(entry.at)),
          ' ',
          describe(entry),
          entry.deliveryId && lastAttempt.get(entry.deliveryId) === index ? redeliverButton(entry.deliveryId) : null,
        ),
      ),
    );
    results.replaceChildren(
      el('h2', {}, t('session.details')),
      details,
      el('h2', {}, t('session.items')),
      table(t('session.items'), ['item.name', 'item.quantity', 'item.unitPrice', 'item.total'].map(t), items),
      el('h2', {}, t('session.quotes')),
      table(t('session.quotes'), ['quote.asset', 'quote.amount', 'quote.rate'].map(t), quotes),
      el('h2', {}, t('session.timeline')),
      timeline,
    );
    await import('/dashboard/assets/refunds.js').then((m) =>
      m.showRefunds({ results, org, session: s, csrf, can, el, lang }),
    );
  }

  const WEBHOOKS = `query Webhooks($org: ID!) {
    webhookEndpoints(organisationId: $org) {
      id url events enabled
      deliveries { id eventType status attempts httpStatus error responseExcerpt createdAt }
    }
  }`;

  const REDELIVER_FAILED = `mutation RedeliverFailed($org: ID!) {
    redeliverFailedWebhooks(organisationId: $org) { deliveryIds }
  }`;

  const ENDPOINT_CHANGE = 'endpoint { id url enabled } secret previousSecretExpiresAt';
  const ADD_ENDPOINT = `mutation Add($org: ID!, $url: String!, $events: [String!]) {
    addWebhookEndpoint(organisationId: $org, url: $url, events: $events) { ${ENDPOINT_CHANGE} }
  }`;
  const SET_ENABLED = `mutation SetEnabled($org: ID!, $id: ID!, $enabled: Boolean!) {
    setWebhookEndpointEnabled(organisationId: $org, id: $id, enabled: $enabled) { ${ENDPOINT_CHANGE} }
  }`;
  const ROTATE = `mutation Rotate($org: ID!, $id: ID!) {
    rotateWebhookSecret(organisationId: $org, id: $id) { ${ENDPOINT_CHANGE} }
  }`;
  const ANSWER = 'response responseTruncated responseSize responseHeaders { name value }';
  const TEST_EVENT = `mutation Test($org: ID!, $id: ID!) {
    sendWebhookTestEvent(organisationId: $org, id: $id) { httpStatus latencyMs error ${ANSWER} }
  }`;
  const DELIVERY = `query Delivery($org: ID!, $id: ID!) {
    webhookDelivery(organisationId: $org, id: $id) {
      requestBody attempts { attempt httpStatus latencyMs error at ${ANSWER} }
    }
  }`;

  /** A secret shown once: said in a status region with the reminder that it will not be shown again. */
  function showSecret(target, secret) {
    target.replaceChildren(
      el('p', { class: 'secret' }, t('webhooks.secretOnce') + ' ', el('code', { class: 'select' }, secret)),
    );
  }

  /** "Redeliver every failed delivery": how many were queued is said beside it, then the list is read again. */
  function redeliverFailedButton() {
    const status = el('span', { class: 'note', role: 'status' });
    const button = el('button', { type: 'button', id: 'redeliver-failed' }, t('webhooks.redeliverFailed'));
    button.addEventListener('click', () => {
      button.disabled = true;
      graphql(REDELIVER_FAILED, { org })
        .then((data) => {
          const count = data ? data.redeliverFailedWebhooks.deliveryIds.length : 0;
          return showWebhooks().then(() => {
            const again = document.querySelector('#redeliver-failed + span');
            if (again) again.textContent = t('webhooks.redeliveredFailed').replace('{count}', String(count));
          });
        })
        .catch((error) => {
          status.textContent = error.message;
          button.disabled = false;
        });
    });
    return el('p', {}, button, ' ', status);
  }

  /** Disable or enable, and rotate the secret: what came of it is said in the endpoint's status line. */
  function endpointActions(endpoint) {
    const status = el('div', { class: 'note', role: 'status' });
    const toggle = el(
      'button',
      { type: 'button', class: 'small' },
      t(endpoint.enabled ? 'webhooks.disable' : 'webhooks.enable'),
    );
    toggle.addEventListener('click', () => {
      toggle.disabled = true;
      graphql(SET_ENABLED, { org, id: endpoint.id, enabled: !endpoint.enabled })
        .then(() => showWebhooks())
        .catch((error) => {
          status.textContent = error.message;
          toggle.disabled = false;
        });
    });
    const rotate = el('button', { type: 'button', class: 'small' }, t('webhooks.rotate'));
    rotate.addEventListener('click', () => {
      rotate.disabled = true;
      graphql(ROTATE, { org, id: endpoint.id })
        .then((data) => data && showSecret(status, data.rotateWebhookSecret.secret))
        .catch((error) => (status.textContent = error.message))
        .finally(() => (rotate.disabled = false));
    });
    const test = el('button', { type: 'button', class: 'small' }, t('webhooks.test'));
    test.addEventListener('click', () => {
      test.disabled = true;
      graphql(TEST_EVENT, { org, id: endpoint.id })
        .then((data) => {
          if (!data) return;
          const r = data.sendWebhookTestEvent;
          const answer = r.httpStatus === null ? t('timeline.noAnswer') : t('timeline.http') + ' ' + r.httpStatus;
          const why = r.error && r.error !== 'HTTP ' + r.httpStatus ? ' · ' + r.error : '';
          status.replaceChildren(
            t('webhooks.tested') + ' ' + answer + ' · ' + r.latencyMs + ' ms' + why,
            ...(r.httpStatus === null ? [] : answerOf(r, false)),
          );
        })
        .catch((error) => (status.textContent = error.message))
        .finally(() => (test.disabled = false));
    });
    return el('div', { class: 'actions' }, toggle, ' ', rotate, ' ', test, status);
  }

  /** A receiver's answer as kept: the body (whole up to 64 KiB, else said cut), then its headers if asked. */
  function answerOf(a, withHeaders = true) {
    const parts = [el('pre', { tabindex: '0' }, a.response || t('delivery.emptyResponse'))];
    if (a.responseTruncated) {
      const size = a.responseSize === null ? '' : ' ' + t('delivery.ofBytes').replace('{size}', String(a.responseSize));
      parts.push(el('p', { class: 'note' }, t('delivery.truncated') + size));
    }
    if (withHeaders && a.responseHeaders) {
      const lines = a.responseHeaders.map((h) => h.name + ': ' + h.value).join('\n');
      parts.push(
        el(
          'details',
          { class: 'headers' },
          el('summary', {}, t('delivery.headers') + ' (' + a.responseHeaders.length + ')'),
          el('pre', { tabindex: '0' }, lines),
        ),
      );
    }
    return parts;
  }

  /** A delivery's request body and every attempt's answer, read when first opened. */
  function deliveryDetails(delivery) {
    const details = el('details', {}, el('summary', {}, t('delivery.details')));
    details.addEventListener('toggle', () => {
      if (!details.open || details.dataset.loaded) return;
      details.dataset.loaded = 'true';
      graphql(DELIVERY, { org, id: delivery.id })
        .then((data) => {
          if (!data) return;
          const d = data.webhookDelivery;
          const attempts = d.attempts.map((a) =>
            el(
              'li',
              {},
              el('time', { datetime: a.at }, when(a.at)),
              ' #' + a.attempt + ' · ',
              a.httpStatus === null ? t('timeline.noAnswer') : t('timeline.http') + ' ' + a.httpStatus,
              ' · ' + a.latencyMs + ' ms',
              a.error && a.error !== 'HTTP ' + a.httpStatus ? ' · ' + a.error : '',
              ...answerOf(a),
            ),
          );
          details.append(
            el('h3', {}, t('delivery.request')),
            el('pre', { tabindex: '0' }, JSON.stringify(JSON.parse(d.requestBody), null, 2)),
            el('h3', {}, t('delivery.responses')),
            attempts.length ? el('ol', { class: 'attempts' }, ...attempts) : el('p', {}, t('delivery.noAttempt')),
          );
        })
        .catch((error) => details.append(el('p', { class: 'problem' }, error.message)));
    });
    return details;
  }

  function addEndpointForm() {
    const form = document.getElementById('add-endpoint');
    if (!form) return;
    const secret = document.getElementById('endpoint-secret');
    form.addEventListener('submit', (event) => {
      event.preventDefault();
      const data = new FormData(form);
      const button = form.querySelector('button');
      button.disabled = true;
      graphql(ADD_ENDPOINT, { org, url: String(data.get('url')), events: data.getAll('events').map(String) })
        .then((answer) => {
          if (!answer) return;
          form.reset();
          return showWebhooks().then(() => showSecret(secret, answer.addWebhookEndpoint.secret));
        })
        .catch((error) => secret.replaceChildren(el('p', { class: 'problem' }, error.message)))
        .finally(() => (button.disabled = false));
    });
  }

  async function showWebhooks() {
    const data = await graphql(WEBHOOKS, { org });
    if (!data) return;
    const endpoints = data.webhookEndpoints;
    if (endpoints.length === 0) {
      results.replaceChildren(el('p', {}, t('webhooks.none')));
      return;
    }
    const parts = [];
    const canRedeliver = can('redeliver_webhooks');
    if (canRedeliver) parts.push(redeliverFailedButton());
    for (const endpoint of endpoints) {
      const section = el('section', { class: 'endpoint', 'aria-label': endpoint.url });
      section.append(
        el('h2', {}, endpoint.url),
        el(
          'p',
          {},
          t(endpoint.enabled ? 'webhooks.enabled' : 'webhooks.disabled'),
          ' · ',
          t('webhooks.events') + ': ',
          endpoint.events.length ? endpoint.events.join(', ') : t('webhooks.allEvents'),
        ),
      );
      if (can('manage_webhooks')) section.append(endpointActions(endpoint));
      if (endpoint.deliveries.length === 0) section.append(el('p', {}, t('webhooks.noDeliveries')));
      else {
        const rows = endpoint.deliveries.map((d) => [
          d.eventType,
          t('delivery.' + d.status),
          d.attempts,
          d.httpStatus === null ? '–' : d.httpStatus,
          el('code', {}, d.responseExcerpt || d.error || ''),
          when(d.createdAt),
          deliveryDetails(d),
          ...(canRedeliver ? [redeliverButton(d.id)] : []),
        ]);
        const headings = ['delivery.event', 'delivery.status', 'delivery.attempts', 'delivery.http'];
        headings.push('delivery.response', 'delivery.created', 'delivery.more');
        if (canRedeliver) headings.push('delivery.action');
        section.append(table(t('webhooks.deliveries') + ' · ' + endpoint.url, headings.map(t), rows));
      }
      parts.push(section);
    }
    results.replaceChildren(...parts);
  }

  /** The dashboard's JSON routes for links, keys and settings; a refusal's message is thrown. */
  async function api(method, path, body) {
    const response = await fetch('/dashboard/api/organisations/' + encodeURIComponent(org) + path, {
      method,
      headers:
        body === undefined ? { 'X-CSRF-Token': csrf } : { 'Content-Type': 'application/json', 'X-CSRF-Token': csrf },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    if (response.status === 401) {
      location.assign('/dashboard/sign-in');
      return null;
    }
    const answer = await response.json();
    if (!response.ok) throw new Error(answer.message || String(response.status));
    return answer;
  }

  /** A button that runs `action`; a refusal is said in `status`. */
  function actionButton(label, status, action) {
    const button = el('button', { type: 'button', class: 'small' }, label);
    button.addEventListener('click', () => {
      button.disabled = true;
      action()
        .catch((error) => (status.textContent = error.message))
        .finally(() => (button.disabled = false));
    });
    return button;
  }

  const decimal = (text) => Number(String(text).trim());

  async function showLinks() {
    const answer = await api('GET', '/payment-links');
    if (!answer) return;
    if (answer.data.length === 0) {
      results.replaceChildren(el('p', {}, t('links.none')));
      return;
    }
    const manage = can('manage_links');
    const rows = answer.data.map((link) => {
      const status = el('span', { class: 'note', role: 'status' });
      const short = (amount) => amount.replace(/\.?0+$/, '');
      const amount = link.total_amount_fiat
        ? short(link.total_amount_fiat) + ' ' + link.currency
        : short(link.amount_fiat.min) + '–' + short(link.amount_fiat.max) + ' ' + link.currency;
      const qr = el('img', {
        src:
          '/dashboard/api/organisations/' +
          encodeURIComponent(org) +
          '/payment-links/' +
          link.payment_link_id +
          '/qr.svg',
        alt: t('links.qrOf') + ' ' + link.name,
        width: '96',
        height: '96',
      });
      const cells = [
        link.name,
        t('state.' + link.state),
        amount,
        link.max_uses === null ? String(link.uses) : link.uses + ' / ' + link.max_uses,
        el('a', { href: link.url }, link.url),
        qr,
      ];
      if (manage) {
        const patch = (body) => api('PATCH', '/payment-links/' + link.payment_link_id, body).then(() => showLinks());
        const toggle = actionButton(t(link.active ? 'links.deactivate' : 'links.activate'), status, () =>
          patch({ active: !link.active }),
        );
        const nameId = 'edit-name-' + link.payment_link_id;
        const usesId = 'edit-uses-' + link.payment_link_id;
        const name = el('input', { id: nameId, name: 'name', type: 'text', value: link.name, maxlength: '200' });
        const uses = el('input', {
          id: usesId,
          name: 'max_uses',
          type: 'number',
          min: '1',
          value: link.max_uses ?? '',
        });
        const edit = el(
          'form',
          { class: 'edit' },
          el('label', { for: nameId }, t('links.name')),
          name,
          el('label', { for: usesId }, t('links.maxUses')),
          uses,
          el('button', { type: 'submit', class: 'small' }, t('links.save')),
        );
        edit.addEventListener('submit', (event) => {
          event.preventDefault();
          const maxUses = uses.value.trim() === '' ? null : Number(uses.value);
          patch({ name: name.value, max_uses: maxUses }).catch((error) => (status.textContent = error.message));
        });
        cells.push(el('span', {}, toggle, el('details', {}, el('summary', {}, t('links.edit')), edit), status));
      }
      return cells;
    });
    const headings = ['links.name', 'links.state', 'links.amount', 'links.uses', 'links.url', 'links.qr'];
    if (manage) headings.push('links.actions');
    results.replaceChildren(table(t('links.caption'), headings.map(t), rows));
  }

  function createLinkForm() {
    const form = document.getElementById('create-link');
    if (!form) return;
    const status = document.getElementById('link-status');
    form.addEventListener('submit', (event) => {
      event.preventDefault();
      const value = (id) => document.getElementById(id).value.trim();
      const body = { name: value('f-link-name'), currency: value('f-link-currency') };
      if (value('f-link-price'))
        body.items = [{ name: body.name, quantity: 1, unit_price: decimal(value('f-link-price')) }];
      if (value('f-link-min') || value('f-link-max'))
        body.amount_fiat = { min: decimal(value('f-link-min')), max: decimal(value('f-link-max')) };
      if (value('f-link-uses')) body.max_uses = Number(value('f-link-uses'));
      api('POST', '/payment-links', body)
        .then((link) => {
          if (!link) return;
          form.reset();
          return showLinks().then(() =>
            status.replaceChildren(t('links.created') + ' ', el('a', { href: link.url }, link.url)),
          );
        })
        .catch((error) => status.replaceChildren(el('p', { class: 'problem' }, error.message)));
    });
  }

  async function showKeys() {
    const answer = await api('GET', '/api-keys');
    if (!answer) return;
    if (answer.data.length === 0) {
      results.replaceChildren(el('p', {}, t('keys.none')));
      return;
    }
    const manage = can('manage_keys');
    const rows = answer.data.map((key) => {
      const status = el('span', { class: 'note', role: 'status' });
      const cells = [
        el('code', {}, key.api_key),
        t('keys.' + key.state),
        when(key.created_at),
        key.last_used_at ? when(key.last_used_at) : t('keys.never'),
      ];
      if (manage)
        cells.push(
          key.state === 'active'
            ? el(
                'span',
                {},
                actionButton(t('keys.revoke'), status, () =>
                  api('POST', '/api-keys/' + key.id + '/revoke').then(() => showKeys()),
                ),
                status,
              )
            : '–',
        );
      return cells;
    });
    const headings = ['keys.key', 'keys.state', 'keys.created', 'keys.lastUsed'];
    if (manage) headings.push('keys.actions');
    results.replaceChildren(table(t('keys.caption'), headings.map(t), rows));
  }

  function createKeyForm() {
    const form = document.getElementById('create-key');
    if (!form) return;
    const status = document.getElementById('key-status');
    form.addEventListener('submit', (event) => {
      event.preventDefault();
      api('POST', '/api-keys')
        .then((issued) => {
          if (!issued) return;
          return showKeys().then(() =>
            status.replaceChildren(
              el(
                'p',
                { class: 'secret' },
                t('keys.secretOnce') + ' ',
                el('code', {}, issued.api_key),
                ' ',
                el('code', {}, issued.api_secret),
              ),
            ),
          );
        })
        .catch((error) => status.replaceChildren(el('p', { class: 'problem' }, error.message)));
    });
  }

  async function showSettings() {
    const settings = await api('GET', '/settings');
    if (!settings) return;
    const form = document.getElementById('settings');
    const status = document.getElementById('settings-status');
    const fields = ['brand_color', 'underpayment_tolerance_percent', 'late_payment_window_minutes'];
    for (const name of fields) form.elements[name].value = settings[name] === null ? '' : String(settings[name]);
    results.replaceChildren();
    if (form.dataset.bound) return;
    form.dataset.bound = 'true';
    form.addEventListener('submit', (event) => {
      event.preventDefault();
      const body = {};
      for (const name of fields) body[name] = form.elements[name].value.trim();
      api('PATCH', '/settings', body)
        .then((saved) => saved && (status.textContent = t('settings.saved')))
        .catch((error) => status.replaceChildren(el('p', { class: 'problem' }, error.message)));
    });
  }

  const VIEWS = {
    links: () => {
      createLinkForm();
      return showLinks();
    },
    keys: () => {
      createKeyForm();
      return showKeys();
    },
    settings: showSettings,
    deposits: () => import('/dashboard/assets/deposits.js').then((page) => page.show()),
    session: showSession,
    webhooks: () => {
      addEndpointForm();
      return showWebhooks();
    },
  };
  const name = document.body.dataset.view;
  const view = VIEWS[name] || showSessions;
  view().catch((error) => showProblem(error.message));

  /**
   * Live updates (docs/dashboard.md#live-updates): the server names the organisation's sessions that changed; the
   * list's first page and an open session are read again (a later page stays as it is, so keyset pages hold).
   */
  function live(refresh, wanted) {
    const source = new EventSource('/dashboard/api/organisations/' + encodeURIComponent(org) + '/live');
    let again = null;
    const later = () => {
      again ??= setTimeout(() => {
        again = null;
        refresh()
          .then(() => (document.body.dataset.updated = new Date().toISOString()))
          .catch((error) => showProblem(error.message));
      }, 100);
    };
    source.addEventListener('sessions', (event) => wanted(JSON.parse(event.data)) && later());
    source.addEventListener('reset', later);
    addEventListener('pagehide', () => source.close());
  }
  if (name === 'sessions' && !new URLSearchParams(location.search).get('after')) live(showSessions, () => true);
  if (name === 'session') live(showSession, (ids) => ids.includes(document.body.dataset.session));
})();
