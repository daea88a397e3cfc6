// "Pay with wallet" on Kassa's hosted checkout page: when the browser has an EIP-1193 wallet
// (found by EIP-6963 discovery, or the classic window.ethereum), one button connects it,
// switches (or, for the development sandbox, adds) the chain, sends exactly the base units
// the server computed — a native transfer or an ERC-20 transfer(wallet, baseUnits) — and
// binds the transaction hash by itself. Without a wallet nothing of this is shown.
// Plain browser JavaScript, no build step, no third-party code.
'use strict';

(function walletPayment() {
  const providers = new Map();
  let api = null;
  let busy = false;

  const $ = (id) => document.getElementById(id);

  // EIP-6963: every installed wallet announces itself; several can be present at once.
  window.addEventListener('eip6963:announceProvider', (event) => {
    const detail = event.detail;
    if (!detail || !detail.info || !detail.provider || typeof detail.provider.request !== 'function') return;
    providers.set(detail.info.uuid || detail.info.name, detail);
    render();
  });

  /** The wallets found: announced ones, else the classic injected provider. */
  function wallets() {
    if (providers.size > 0) return [...providers.values()];
    if (window.ethereum && typeof window.ethereum.request === 'function')
      return [{ info: { uuid: 'injected', name: '' }, provider: window.ethereum }];
    return [];
  }

  function selectedWallet() {
    const list = wallets();
    const chosen = $('wallet-select').value;
    return list.find((wallet) => (wallet.info.uuid || wallet.info.name) === chosen) || list[0];
  }

  function render() {
    if (!api) return;
    const section = $('wallet-pay');
    const list = wallets();
    const chosen = api.chosenOption();
    section.hidden = list.length === 0 || !chosen;
    if (section.hidden) return;
    const select = $('wallet-select');
    const key = list.map((wallet) => wallet.info.uuid || wallet.info.name).join('|');
    if (select.dataset.key !== key) {
      select.dataset.key = key;
      select.replaceChildren(
        ...list.map((wallet) => {
          const option = document.createElement('option');
          option.value = wallet.info.uuid || wallet.info.name;
          option.textContent = wallet.info.name || api.t('wallet.choose');
          return option;
        }),
      );
    }
    $('wallet-choice').hidden = list.length < 2;
    const name = list.length === 1 ? list[0].info.name : '';
    const button = $('wallet-button');
    if (!busy) button.textContent = name ? api.t('wallet.payWith', { wallet: name }) : api.t('wallet.pay');
    button.disabled = busy;
    const { option, network } = chosen;
    $('wallet-hint').textContent = api.t('wallet.hint', {
      amount: option.amount,
      ticker: option.ticker,
      network: network.name,
    });
  }

  function progress(text) {
    $('wallet-progress').textContent = text;
  }

  function fail(text) {
    progress('');
    const error = $('wallet-error');
    error.textContent = text;
    error.hidden = false;
  }

  /** EIP-1193 error codes, said in words. */
  function describe(error) {
    if (error && error.kassa) return api.t(error.kassa, error.params);
    const code = error && (error.code ?? (error.data && error.data.originalError && error.data.originalError.code));
    if (code === 4001) return api.t('wallet.refused');
    if (code === -32002) return api.t('wallet.pending');
    const message = (error && (error.message || error.reason)) || String(error);
    return api.t('wallet.failed', { message });
  }

  const hex = (value) => `0x${BigInt(value).toString(16)}`;
  const word = (hexDigits) => hexDigits.padStart(64, '0');

  /** ERC-20 transfer(to, amount): selector a9059cbb, then both arguments as 32-byte words. */
  function transferData(to, baseUnits) {
    return `0xa9059cbb${word(to.slice(2).toLowerCase())}${word(BigInt(baseUnits).toString(16))}`;
  }

  async function switchChain(provider, network, option) {
    const wanted = hex(option.chainId);
    if (BigInt(await provider.request({ method: 'eth_chainId' })) === BigInt(option.chainId)) return;
    progress(api.t('wallet.switching', { network: network.name }));
    try {
      await provider.request({ method: 'wallet_switchEthereumChain', params: [{ chainId: wanted }] });
    } catch (error) {
      if (!error || error.code !== 4902) throw error;
      const addable = api.addChain[network.slug];
      if (!addable) throw { kassa: 'wallet.unknownChain', params: { network: network.name, chainId: option.chainId } };
      progress(api.t('wallet.adding', { network: network.name }));
      await provider.request({ method: 'wallet_addEthereumChain', params: [addable] });
    }
    if (BigInt(await provider.request({ method: 'eth_chainId' })) !== BigInt(option.chainId)) {
      throw { kassa: 'wallet.wrongChain', params: { network: network.name, chainId: option.chainId } };
    }
  }

  async function pay() {
    const chosen = api.chosenOption();
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
      progress(api.t('wallet.connecting'));
      const accounts = await provider.request({ method: 'eth_requestAccounts' });
      const from = Array.isArray(accounts) ? accounts[0] : null;
      if (!from) throw { kassa: 'wallet.noAccount' };
      await switchChain(provider, network, option);
      progress(api.t('wallet.confirm'));
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
      progress(api.t('wallet.recording'));
      try {
        await api.bindHash(hash, from, paid);
      } catch (error) {
        throw { kassa: 'wallet.bindFailed', params: { hash, message: error.message } };
      }
      progress(api.t('wallet.sent'));
    } catch (error) {
      fail(describe(error));
    } finally {
      busy = false;
      render();
    }
  }

  window.KassaWallet = {
    init(pageApi) {
      api = pageApi;
      $('wallet-button').addEventListener('click', pay);
      $('wallet-select').addEventListener('change', render);
      window.dispatchEvent(new Event('eip6963:requestProvider'));
      render();
    },
    render,
  };
})();
