// The webhooks page (docs/dashboard.md#webhooks): each endpoint with its deliveries, the actions the role may take,
// and a delivery's request and answers; the session page's timeline uses its "Redeliver" button.
import { can, el, graphql, org, results, t, table, when } from './page-context.js';

const REDELIVER = `mutation Redeliver($org: ID!, $delivery: ID!) {
  redeliverWebhook(organisationId: $org, deliveryId: $delivery) { deliveryId }
}`;

/** A button that sends the delivery again; what came of it is said beside it. */
export function redeliverButton(deliveryId) {
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

/** The webhooks view: the "Add endpoint" form, then the endpoints. */
export function showWebhooksPage() {
  addEndpointForm();
  return showWebhooks();
}
