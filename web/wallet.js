// @ts-check
// "Pay with wallet": with an EIP-1193 wallet in the browser (EIP-6963 or window.ethereum), one button connects it,
// switches (or adds) the chain, sends exactly the server's base units and binds the hash; without one, nothing shows.

/** @import { AddChainParameter, BindResult, ChosenOption, Paid } from './types.js' */

import { $, t } from './page.js';

/**
 * @typedef {object} WalletProvider An EIP-1193 provider: one request method.
 * @property {(args: { method: string; params?: unknown[] }) => Promise<any>} request
 *
 * @typedef {object} Wallet A wallet found in the browser, as EIP-6963 announces it.
 * @property {{ uuid?: string; name: string }} info
 * @property {WalletProvider} provider
 *
 * @typedef {object} PageApi What the checkout page lends the wallet.
 * @property {() => ChosenOption | null} chosenOption
 * @property {(txHash: string, payerWalletAddress: string, paid: Paid) => Promise<BindResult>} bindHash
 * @property {Readonly<Record<string, AddChainParameter>>} addChain
 */

/** @type {Map<string, Wallet>} */
const providers = new Map();
/** @type {PageApi | null} */
let api = null;
let busy = false;

// EIP-6963: every installed wallet announces itself; several can be present at once.
window.addEventListener('eip6963:announceProvider', (event) => {
  /** @type {Wallet | undefined} */
  const detail = /** @type {CustomEvent} */ (event).detail;
  if (!detail || !detail.info || !detail.provider || typeof detail.provider.request !== 'function') return;
  providers.set(detail.info.uuid || detail.info.name, detail);
  render();
});

/**
 * The wallets found: announced ones, else the classic injected provider.
 * @returns {Wallet[]}
 */
function wallets() {
  if (providers.size > 0) return [...providers.values()];
  /** @type {WalletProvider | undefined} */
  const injected = /** @type {any} */ (window).ethereum;
  if (injected && typeof injected.request === 'function')
    return [{ info: { uuid: 'injected', name: '' }, provider: injected }];
  return [];
}

function selectedWallet() {
  const list = wallets();
  const chosen = $('wallet-select', HTMLSelectElement).value;
  return list.find((wallet) => (wallet.info.uuid || wallet.info.name) === chosen) || list[0];
}

/** Shows the button when a wallet is there and the payer has chosen what to pay; hides it otherwise. */
function render() {
  if (!api) return;
  const section = $('wallet-pay');
  const list = wallets();
  const chosen = api.chosenOption();
  section.hidden = list.length === 0 || !chosen;
  if (!chosen || section.hidden) return;
  const select = $('wallet-select', HTMLSelectElement);
  const key = list.map((wallet) => wallet.info.uuid || wallet.info.name).join('|');
  if (select.dataset.key !== key) {
    select.dataset.key = key;
    select.replaceChildren(
      ...list.map((wallet) => {
        const option = document.createElement('option');
        option.value = wallet.info.uuid || wallet.info.name;
        option.textContent = wallet.info.name || t('wallet.choose');
        return option;
      }),
    );
  }
  $('wallet-choice').hidden = list.length < 2;
  const name = list.length === 1 ? list[0].info.name : '';
  const button = $('wallet-button', HTMLButtonElement);
  if (!busy) button.textContent = name ? t('wallet.payWith', { wallet: name }) : t('wallet.pay');
  button.disabled = busy;
  const { option, network } = chosen;
  $('wallet-hint').textContent = t('wallet.hint', {
    amount: option.amount,
    ticker: option.ticker,
    network: network.name,
  });
}

/** @param {string} text */
function progress(text) {
  $('wallet-progress').textContent = text;
}

/** @param {string} text */
function fail(text) {
  progress('');
  const error = $('wallet-error');
  error.textContent = text;
  error.hidden = false;
}

/**
 * EIP-1193 error codes, said in words.
 * @param {any} error
 * @returns {string}
 */
function describe(error) {
  if (error && error.kassa) return t(error.kassa, error.params);
  const code = error && (error.code ?? (error.data && error.data.originalError && error.data.originalError.code));
  if (code === 4001) return t('wallet.refused');
  if (code === -32002) return t('wallet.pending');
  const message = (error && (error.message || error.reason)) || String(error);
  return t('wallet.failed', { message });
}

/** @param {string | number} value */
const hex = (value) => `0x${BigInt(value).toString(16)}`;
/** @param {string} hexDigits */
const word = (hexDigits) => hexDigits.padStart(64, '0');

/**
 * ERC-20 transfer(to, amount): selector a9059cbb, then both arguments as 32-byte words.
 * @param {string} to
 * @param {string} baseUnits
 */
function transferData(to, baseUnits) {
  return `0xa9059cbb${word(to.slice(2).toLowerCase())}${word(BigInt(baseUnits).toString(16))}`;
}

/**
 * Brings the wallet to the option's chain: switches, or adds the development sandbox it does not know.
 * @param {WalletProvider} provider
 * @param {import('./types.js').Network} network
 * @param {import('./types.js').PaymentOption} option
 * @param {Readonly<Record<string, AddChainParameter>>} addChain
 */
async function switchChain(provider, network, option, addChain) {
  const wanted = hex(option.chainId);
  if (BigInt(await provider.request({ method: 'eth_chainId' })) === BigInt(option.chainId)) return;
  progress(t('wallet.switching', { network: network.name }));
  try {
    await provider.request({ method: 'wallet_switchEthereumChain', params: [{ chainId: wanted }] });
  } catch (error) {
    if (!error || /** @type {{ code?: unknown }} */ (error).code !== 4902) throw error;
    const addable = addChain[network.slug];
    if (!addable) throw { kassa: 'wallet.unknownChain', params: { network: network.name, chainId: option.chainId } };
    progress(t('wallet.adding', { network: network.name }));
    await provider.request({ method: 'wallet_addEthereumChain', params: [addable] });
  }
  if (BigInt(await provider.request({ method: 'eth_chainId' })) !== BigInt(option.chainId)) {
    throw { kassa: 'wallet.wrongChain', params: { network: network.name, chainId: option.chainId } };
  }
}

/** The button: connect, switch chain, send exactly the server's base units, bind the hash. */
async function pay() {
  const lent = api;
  if (!lent) return;
  const chosen = lent.chosenOption();
  const wallet = selectedWallet();
  if (!chosen || !wallet || busy) return;
  const { option, network } = chosen;
  // What this payment is in, fixed now: the payer may choose another asset while the wallet is open.
  const paid = { ticker: option.ticker, chainId: option.chainId };
  const provider = wallet.provider;
  busy = true;
  render();
  $('wallet-error').hidden = true;
  try {
    progress(t('wallet.connecting'));
    const accounts = await provider.request({ method: 'eth_requestAccounts' });
    const from = Array.isArray(accounts) ? accounts[0] : null;
    if (!from) throw { kassa: 'wallet.noAccount' };
    await switchChain(provider, network, option, lent.addChain);
    progress(t('wallet.confirm'));
    // Exactly the server's base units: never recomputed here, never through a float.
    const transaction = option.native
      ? { from, to: option.walletAddress, value: hex(option.baseUnits) }
      : {
          from,
          to: option.contractAddress,
          value: '0x0',
          data: transferData(option.walletAddress, option.baseUnits),
        };
    const hash = await provider.request({ method: 'eth_sendTransaction', params: [transaction] });
    progress(t('wallet.recording'));
    try {
      await lent.bindHash(hash, from, paid);
    } catch (error) {
      throw { kassa: 'wallet.bindFailed', params: { hash, message: /** @type {Error} */ (error).message } };
    }
    progress(t('wallet.sent'));
  } catch (error) {
    fail(describe(error));
  } finally {
    busy = false;
    render();
  }
}

/**
 * Starts the wallet button with what the page lends it, and asks the installed wallets to announce themselves.
 * @param {PageApi} pageApi
 */
export function initWallet(pageApi) {
  api = pageApi;
  $('wallet-button').addEventListener('click', pay);
  $('wallet-select').addEventListener('change', render);
  window.dispatchEvent(new Event('eip6963:requestProvider'));
  render();
}

export { render as renderWallet };
