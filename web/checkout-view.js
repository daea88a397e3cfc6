// @ts-check
// The checkout page's view: its state (page data, the session as last read, the payer's choice, the live channel) and
// drawing it. Amounts stay the server's strings: the page does no arithmetic on money.

/** @import { ChosenOption, Network, PaymentOption, PayPageData, Session } from './types.js' */

import { $, cell, confirmationsText, dateFormat, fiat, readPageData, t } from './page.js';
import { renderWallet } from './wallet.js';

export const page = /** @type {PayPageData} */ (readPageData());

export const POLL_MS = 5000;
const OPEN = ['PENDING', 'WAITING_PAYMENT', 'PARTIAL'];

/**
 * @typedef {object} PageState
 * @property {Session | null} session The session as last read.
 * @property {Network[]} networks Every network Kassa knows, for names and confirmations.
 * @property {string | null} asset The chosen asset's ticker.
 * @property {string | null} network The chosen network's slug.
 * @property {number} deadline When the session expires, on performance.now()'s clock.
 * @property {boolean} [expiryChecked] The server was asked once the countdown reached zero.
 * @property {{ socket?: WebSocket; stop: () => void } | null} live The WebSocket or the poll, while open.
 */

/** @type {PageState} */
export const state = { session: null, networks: [], asset: null, network: null, deadline: 0, live: null };

/** @param {Session} session */
export const isOpen = (session) => OPEN.includes(session.status);

/**
 * The payment option the payer has chosen (asset on network), exactly as the server computed it.
 * @returns {ChosenOption | null}
 */
export function chosenOption() {
  const session = state.session;
  if (!session || !isOpen(session) || session.pendingCoversDue || !state.asset || !state.network) return null;
  const option = session.paymentOptions.find((o) => o.ticker === state.asset && o.network === state.network);
  const network = state.networks.find((n) => n.slug === state.network);
  return option && network ? { option, network } : null;
}

// ---- Rendering ----

/** @param {string} status */
const statusText = (status) => t(`status.${status.toLowerCase()}`);
/** @param {string} txState */
const txStateText = (txState) => t(`transactions.${txState.toLowerCase()}`);

/** The whole page from `state`; cheap enough to run on every change. */
export function render() {
  const session = state.session;
  if (!session) return;
  const main = $('checkout');
  main.setAttribute('aria-busy', 'false');
  main.dataset.status = session.status;

  const status = $('status');
  status.hidden = false;
  $('footer').hidden = false;
  status.textContent = isOpen(session) && session.paymentDetected ? t('status.detected') : statusText(session.status);
  status.className = `status status-${session.status.toLowerCase()}`;
  $('title').textContent =
    /** @type {Record<string, string>} */ ({
      PAID: t('pay.titlePaid'),
      EXPIRED: t('pay.titleExpired'),
      FAILED: t('pay.titleFailed'),
    })[session.status] || t('pay.title');

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
  // A deposit address is the session's own: the payer sends and is done, no hash to paste.
  $('bind').hidden = !open || settling || !state.network || page.depositAddress;
  renderTransactions(session);

  const devHint = $('dev-hint');
  devHint.hidden = !(page.developmentHints && open);
  devHint.replaceChildren(
    t('dev.before'),
    cell('code', `npx kassa dev pay ${session.sessionId} --wait`),
    t('dev.after'),
  );
  renderWallet();
}

/** @param {Session} session */
function renderSummary(session) {
  $('summary').hidden = false;
  const body = $('items', HTMLTableElement).tBodies[0];
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

/** @param {Session} session */
function renderOutcome(session) {
  const outcome = $('outcome');
  /** @type {Record<string, [string, string]>} */
  const byStatus = {
    PAID: [
      t('outcome.paidTitle'),
      session.totalAmountCrypto
        ? t('outcome.paidTextAmount', { amount: session.totalAmountCrypto, ticker: session.cryptoCurrency ?? '' })
        : t('outcome.paidText'),
    ],
    EXPIRED: [t('outcome.expiredTitle'), t('outcome.expiredText')],
    FAILED: [t('outcome.failedTitle'), t('outcome.failedText')],
    PARTIAL: [
      t('outcome.partialTitle'),
      t('outcome.partialText', {
        received: session.amountReceived,
        ticker: session.cryptoCurrency ?? '',
        total: session.totalAmountCrypto ?? '',
        rest: owed(session),
      }),
    ],
  };
  const texts = byStatus[session.status] || detected(session);
  const wasHidden = outcome.hidden;
  outcome.hidden = !texts;
  if (!texts) return;
  outcome.className = `outcome outcome-${session.status.toLowerCase()}`;
  $('outcome-title').textContent = texts[0];
  $('outcome-text').textContent = texts[1];
  if (wasHidden && !isOpen(session)) outcome.focus();
}

/**
 * While open: a payment on chain that is not confirmed yet keeps the session open; say so.
 * @param {Session} session
 * @returns {[string, string] | null}
 */
function detected(session) {
  if (!isOpen(session) || !session.paymentDetected) return null;
  const confirmations = session.chainId && state.networks.find((n) => n.chainId === session.chainId);
  const needed = confirmations ? ` (${confirmationsText(confirmations.confirmations)})` : '';
  return [
    t('outcome.detectedTitle'),
    t('outcome.detectedText', { amount: session.amountPending, ticker: session.cryptoCurrency || '', needed }),
  ];
}

/**
 * What is still owed exactly, in the token's units, from the server's payment options.
 * @param {Session} session
 */
function owed(session) {
  const option = session.paymentOptions[0];
  return option ? option.amount : session.amountDue;
}

/**
 * The assets the payer can still choose, each with its amount: every quote, or only the locked asset.
 * @param {Session} session
 */
function assetOptions(session) {
  /** @type {Map<string, { ticker: string; amount: string }>} */
  const seen = new Map();
  for (const option of session.paymentOptions)
    if (!seen.has(option.ticker)) seen.set(option.ticker, { ticker: option.ticker, amount: option.amount });
  return [...seen.values()];
}

/**
 * The session's networks that carry `ticker`, with exactly what to send there.
 * @param {Session} session
 * @param {string} ticker
 * @returns {{ network: Network; option: PaymentOption }[]}
 */
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

/**
 * The payer's bound transactions and what Kassa found about each.
 * @param {Session} session
 */
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

/** @param {Session} session */
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
  const image = $('qr', HTMLImageElement);
  if (image.getAttribute('src') !== qr) image.src = qr;
  $('wallet-link', HTMLAnchorElement).href = asset.uri;
  const confirmations = confirmationsText(network.confirmations);
  $('pay-hint').textContent = asset.native
    ? t('instructions.hintNative', { network: network.name, confirmations })
    : t('instructions.hintToken', { ticker: asset.ticker, network: network.name, confirmations });
  $('address-label').textContent = t(page.depositAddress ? 'instructions.depositAddress' : 'instructions.address');
  $('deposit-hint').hidden = !page.depositAddress;
}

/**
 * Radio buttons as large tappable labels; rebuilt only when the options change.
 * @param {HTMLElement} fieldset
 * @param {string} name
 * @param {{ value: string; label: string; detail: string }[]} choices
 * @param {string | null} selected
 * @param {(value: string) => void} onChoose
 */
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
