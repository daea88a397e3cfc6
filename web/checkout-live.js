// @ts-check
// The checkout page's line to Kassa: GraphQL over HTTP, the session kept current (on the server's clock), the
// graphql-ws subscription over the browser's WebSocket, and polling when that fails.

/** @import { PageDocument, PaymentOption, PolledSession, Session } from './types.js' */

import { $, t } from './page.js';
import { isOpen, page, POLL_MS, render, state } from './checkout-view.js';

// ---- GraphQL over HTTP ----
// Each document goes by its trusted id (queries as short GETs, the mutation as a JSON POST); a 400 to one by id
// (another release, mid-deploy) sends the text instead, as a GET with Apollo's CSRF preflight header.

/**
 * @typedef {object} Answer
 * @property {number} status
 * @property {any} [data]
 * @property {{ message: string }[]} [errors]
 */

/**
 * The document's data, or an Error with the server's messages.
 * @param {PageDocument} document
 * @param {Record<string, unknown>} variables
 * @param {'GET' | 'POST'} [method]
 * @returns {Promise<any>}
 */
export async function graphql(document, variables, method = 'GET') {
  let body = await send(document, variables, method, true);
  if (body.status === 400) body = await send(document, variables, method, false);
  if (body.errors && body.errors.length > 0) throw new Error(body.errors.map((e) => e.message).join('\n'));
  if (!body.data) throw new Error(t('error.server', { status: body.status }));
  return body.data;
}

/**
 * @param {PageDocument} document
 * @param {Record<string, unknown>} variables
 * @param {'GET' | 'POST'} method
 * @param {boolean} byId
 * @returns {Promise<Answer>}
 */
async function send(document, variables, method, byId) {
  /** @type {Record<string, string>} */
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

const { CheckoutSession, CheckoutPoll, CheckoutUpdates } = page.documents;

// ---- Countdown from secondsUntilExpiry (the server's clock, not the device's) ----

/** @param {number} seconds */
function setDeadline(seconds) {
  state.deadline = performance.now() + seconds * 1000;
  tick();
}

/** One second of the countdown; at zero the server is asked once what became of the session. */
export function tick() {
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

/**
 * Shows `session` as the page's current view; stops following it once it is closed.
 * @param {Session | null | undefined} session
 */
export function apply(session) {
  if (!session) return;
  state.session = session;
  setDeadline(session.secondsUntilExpiry);
  if (session.secondsUntilExpiry > 0) state.expiryChecked = false;
  render();
  if (!isOpen(session)) stopLive();
}

/**
 * A refresh asks only what can change (CheckoutPoll): while the options' network, asset and amount are those shown, the
 * rest is what the page holds; when they differ it reads the whole session again.
 */
export async function refresh() {
  try {
    /** @type {PolledSession | null} */
    const polled = (await graphql(CheckoutPoll, { id: page.sessionId })).checkoutSession;
    const held = state.session;
    if (polled && held && sameOptions(held.paymentOptions, polled.paymentOptions))
      apply({ ...held, ...polled, paymentOptions: held.paymentOptions });
    else apply((await graphql(CheckoutSession, { id: page.sessionId })).checkoutSession);
  } catch {
    // A failed refresh keeps the last view; the next poll or message tries again.
  }
}

/**
 * @param {readonly PaymentOption[]} held
 * @param {PolledSession['paymentOptions']} polled
 */
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

/**
 * The footer's word on how the page follows the session.
 * @param {'connecting' | 'socket' | 'polling' | 'closed'} mode
 * @param {string} text
 */
export function setLive(mode, text) {
  const label = $('live-state');
  label.dataset.live = mode;
  label.textContent = text;
}

/** Follows the session over the WebSocket; polls when that cannot be opened or closes. */
export function startLive() {
  /** @type {WebSocket} */
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
