// @ts-check
// The refund claim page: shows what is refunded, checks the payer's address as they type, lets the wallet that paid
// sign a message naming the refund and the address (EIP-191), and sends the address once.

/** @import { ClaimAnswer, RefundPageData } from './refund-types.js' */

import { $, applyBrand, dateFormat, readPageData, t } from './page.js';

const data = /** @type {RefundPageData} */ (readPageData());
const network = data.network;

/**
 * @typedef {object} WalletProvider An EIP-1193 provider: one request method.
 * @property {(args: { method: string; params?: unknown[] }) => Promise<any>} request
 */

/** @type {WalletProvider | null} */
let announced = null;
/** @type {{ signature: string; signer: string; destination: string } | null} */
let proof = null;
let busy = false;

// Other chains' formats, so a payer who pastes one is told which network it belongs to (src/domain/refunds).
/** @type {Array<[string, RegExp]>} */
const FOREIGN_FORMATS = [
  ['ens', /^[a-z0-9-]+(\.[a-z0-9-]+)*\.eth$/i],
  ['bitcoin', /^(bc1[02-9ac-hj-np-z]{11,71}|[13][1-9A-HJ-NP-Za-km-z]{25,34})$/],
  ['litecoin', /^(ltc1[02-9ac-hj-np-z]{11,71}|[LM][1-9A-HJ-NP-Za-km-z]{26,33})$/],
  ['tron', /^T[1-9A-HJ-NP-Za-km-z]{33}$/],
  ['cosmos', /^[a-z]{2,10}1[02-9ac-hj-np-z]{38,58}$/],
  ['solana', /^[1-9A-HJ-NP-Za-km-z]{32,44}$/],
];

/**
 * What is wrong with an entry, in the page's language; null when it looks like an address of this network (the
 * server checks the checksum and the rest).
 * @param {string} entry
 * @returns {string | null}
 */
function addressProblem(entry) {
  const text = entry.trim();
  const params = { network: network.name };
  if (text === '') return t('refund.errorEmpty');
  if (!/^0x[0-9a-fA-F]{40}$/.test(text)) {
    const foreign = FOREIGN_FORMATS.find(([, pattern]) => pattern.test(text));
    if (foreign) return t('refund.errorOtherNetwork', { ...params, format: t(`refund.format.${foreign[0]}`) });
    return t('refund.errorFormat', params);
  }
  if (/^0x0{40}$/.test(text)) return t('refund.errorZero');
  return null;
}

/** @param {string | null} text */
function showError(text) {
  const error = $('claim-error');
  error.textContent = text ?? '';
  error.hidden = text === null;
  $('claim-address').setAttribute('aria-invalid', String(text !== null));
}

/** The wallet in the browser: an EIP-6963 announcement, else the injected one. */
function wallet() {
  /** @type {WalletProvider | undefined} */
  const injected = /** @type {any} */ (window).ethereum;
  if (announced) return announced;
  return injected && typeof injected.request === 'function' ? injected : null;
}

window.addEventListener('eip6963:announceProvider', (event) => {
  const detail = /** @type {CustomEvent} */ (event).detail;
  if (detail && detail.provider && typeof detail.provider.request === 'function') announced ??= detail.provider;
  $('claim-wallet').hidden = false;
});

/** @param {string} text UTF-8 text as 0x hex, the form personal_sign takes. */
const utf8Hex = (text) =>
  `0x${[...new TextEncoder().encode(text)].map((byte) => byte.toString(16).padStart(2, '0')).join('')}`;

/** Connects the wallet, fills the address with its account when empty, and signs the proof for that address. */
async function prove() {
  const provider = wallet();
  if (!provider || busy) return;
  const state = $('claim-proof-state');
  busy = true;
  showError(null);
  try {
    state.textContent = t('refund.walletConnecting');
    const accounts = await provider.request({ method: 'eth_requestAccounts' });
    const account = Array.isArray(accounts) && typeof accounts[0] === 'string' ? accounts[0] : null;
    if (!account) throw new Error('no account');
    const input = $('claim-address', HTMLInputElement);
    if (input.value.trim() === '') input.value = account;
    const problem = addressProblem(input.value);
    if (problem) {
      state.textContent = '';
      showError(problem);
      return;
    }
    const destination = input.value.trim().toLowerCase();
    state.textContent = t('refund.walletSigning');
    const message = data.proofTemplate.replace('{destination}', destination);
    const signature = await provider.request({ method: 'personal_sign', params: [utf8Hex(message), account] });
    proof = { signature: String(signature), signer: account.toLowerCase(), destination };
    state.textContent = t('refund.walletSigned', { address: account });
  } catch (error) {
    const code = /** @type {{ code?: unknown }} */ (error)?.code;
    const message = /** @type {Error} */ (error)?.message ?? String(error);
    state.textContent = code === 4001 ? t('refund.walletRefused') : t('refund.walletFailed', { message });
  } finally {
    busy = false;
  }
}

/** @param {SubmitEvent} event */
async function submit(event) {
  event.preventDefault();
  if (busy) return;
  const input = $('claim-address', HTMLInputElement);
  const problem = addressProblem(input.value);
  if (problem) {
    showError(problem);
    input.focus();
    return;
  }
  const address = input.value.trim();
  const signature = proof && proof.destination === address.toLowerCase() ? proof.signature : null;
  const button = $('claim-submit', HTMLButtonElement);
  busy = true;
  button.disabled = true;
  button.textContent = t('refund.submitting');
  showError(null);
  try {
    const response = await fetch(`/r/${data.refundId}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ address, signature }),
    });
    const body = await response.json().catch(() => null);
    if (!response.ok) {
      const messages = body && body.message;
      showError(t('refund.errorServer', { message: Array.isArray(messages) ? messages.join('\n') : String(messages) }));
      return;
    }
    done(/** @type {ClaimAnswer} */ (body));
  } catch {
    showError(t('refund.errorNetwork'));
  } finally {
    busy = false;
    button.disabled = false;
    button.textContent = t('refund.submit');
  }
}

/** @param {ClaimAnswer} answer */
function done(answer) {
  $('claim-form').hidden = true;
  const amount = `${data.amount} ${data.asset}`;
  const params = { shop: data.shop, amount, address: answer.destination, network: network.name };
  const signed = answer.proof_address ? ` ${t('refund.doneSigned', { signer: answer.proof_address })}` : '';
  $('claim-done-text').textContent = `${t('refund.doneText', params)}${signed}`;
  const section = $('claim-done');
  section.hidden = false;
  section.focus();
}

applyBrand(data.brand);
$('refund-expires').textContent = dateFormat.format(new Date(data.claimExpiresAt));
$('claim-address-label').textContent = t('refund.addressLabel', { network: network.name });
$('claim-address-hint').textContent = t('refund.addressHint', {
  network: network.name,
  asset: data.asset,
  chainId: network.chainId,
});
$('claim-address').addEventListener('input', () => showError(null));
$('claim-form').addEventListener('submit', submit);
$('claim-wallet-button').addEventListener('click', prove);
$('claim-wallet').hidden = wallet() === null;
$('claim-form').hidden = false;
window.dispatchEvent(new Event('eip6963:requestProvider'));
