// The sessions list and one session's page (docs/dashboard.md#the-pages): the filters from the URL, the table, and a
// session's details, items, quotes and timeline.
import { can, csrf, el, graphql, lang, org, results, statusText, t, table, when } from './page-context.js';
import { redeliverButton } from './webhooks.js';

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

export async function showSessions() {
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

function describe(entry) {
  const parts = [t('timeline.' + entry.kind.toLowerCase())];
  const add = (text) => text && parts.push(text);
  if (entry.kind === 'STATUS_CHANGED')
    add((entry.fromStatus ? statusText(entry.fromStatus) + ' → ' : '') + statusText(entry.toStatus));
  if (entry.kind === 'QUOTE_CHANGED') add(entry.asset + ' ' + entry.amount);
  if (entry.kind === 'BIND' || entry.kind === 'TRANSFER') add(entry.txHash + ' (' + entry.network + ')');
  if (entry.kind === 'TRANSFER') {
    add(entry.amount + ' ' + entry.asset);
    add(t('timeline.block') + ' ' + entry.blockNumber + ', ' + entry.confirmations + ' ' + t('timeline.confirmations'));
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

export async function showSession() {
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
