// @ts-check
// Kassa's hosted checkout page, the entry module; no build step, no third-party code, and no arithmetic on money:
// amounts stay the server's strings. Its modules, by job: docs/hosted-pages.md#the-page-scripts.

/** @import { BindResult, Paid } from './types.js' */

import { $, applyBrand, t } from './page.js';
import { chosenOption, isOpen, page, state } from './checkout-view.js';
import { apply, graphql, refresh, setLive, startLive, tick } from './checkout-live.js';
import { initWallet } from './wallet.js';

const { CheckoutPage, BindTransaction } = page.documents;

// ---- The payer's actions ----

/**
 * Copies the text of the element the button names (its data-copy), saying so on the button.
 * @param {HTMLElement} button
 */
async function copy(button) {
  const source = $(button.dataset.copy ?? '');
  const text = source.dataset.value || source.textContent || '';
  try {
    await navigator.clipboard.writeText(text);
  } catch {
    const range = document.createRange();
    range.selectNodeContents(source);
    const selection = getSelection();
    selection?.removeAllRanges();
    selection?.addRange(range);
    document.execCommand('copy');
  }
  button.textContent = t('copy.done');
  setTimeout(() => {
    button.textContent = t('copy.button');
  }, 1500);
}

/**
 * Binds a hash with the asset and network it was paid in: `paid` as chosen when the wallet sent it (the payer may look
 * at another asset meanwhile), else the form's current choice; shows it as being checked.
 * @param {string} txHash
 * @param {string} payerWalletAddress
 * @param {Paid} [paid]
 * @returns {Promise<BindResult>}
 */
async function bindHash(txHash, payerWalletAddress, paid) {
  const session = /** @type {import('./types.js').Session} */ (state.session);
  const chosen = paid || {
    ticker: /** @type {string} */ (state.asset),
    chainId: /** @type {import('./types.js').Network} */ (state.networks.find((n) => n.slug === state.network)).chainId,
  };
  /** @type {{ txHash: string; chainId: number; cryptoCurrency: string; payerWalletAddress?: string }} */
  const input = { txHash, chainId: chosen.chainId, cryptoCurrency: chosen.ticker };
  if (payerWalletAddress) input.payerWalletAddress = payerWalletAddress;
  const data = await graphql(BindTransaction, { sessionId: session.sessionId, input }, 'POST');
  /** @type {BindResult} */
  const result = data.bindTransaction;
  const current = /** @type {import('./types.js').Session} */ (state.session);
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

/**
 * The form: binds the hash the payer pasted, in the asset and on the network chosen.
 * @param {SubmitEvent} event
 */
async function bind(event) {
  event.preventDefault();
  const error = $('bind-error');
  const submit = $('bind-submit', HTMLButtonElement);
  const hash = $('tx-hash', HTMLInputElement);
  error.hidden = true;
  if (!state.session || !state.networks.some((n) => n.slug === state.network) || !state.asset) return;
  submit.disabled = true;
  submit.textContent = t('bind.submitting');
  try {
    await bindHash(hash.value.trim(), $('payer-wallet', HTMLInputElement).value.trim());
    hash.value = '';
  } catch (failure) {
    error.textContent = /** @type {Error} */ (failure).message;
    error.hidden = false;
    hash.setAttribute('aria-invalid', 'true');
  } finally {
    submit.disabled = false;
    submit.textContent = t('bind.submit');
  }
}

// ---- Start ----

async function start() {
  applyBrand(page.brand);
  initWallet({ chosenOption, bindHash, addChain: page.addChain || {} });
  document
    .querySelectorAll('button.copy')
    .forEach((button) => button.addEventListener('click', () => copy(/** @type {HTMLElement} */ (button))));
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
    $('load-error').textContent = t('error.load', { message: /** @type {Error} */ (failure).message });
    $('load-error').hidden = false;
    $('footer').hidden = false;
    setLive('closed', t('live.reload'));
    return;
  }
  if (state.session && isOpen(state.session)) startLive();
}

start();
