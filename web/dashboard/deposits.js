// The deposits page (docs/dashboard.md#deposits-and-collecting): balances and the receiving mode from
// /dashboard/graphql; "Collect" has the browser wallet (EIP-6963, else window.ethereum) send what Kassa built.

import { can, el, graphql, org, results, table, texts as pageTexts } from './page-context.js';

const texts = { ...pageTexts, ...JSON.parse(document.getElementById('deposit-texts').textContent) };
/** A text with its {placeholders} filled in. */
const t = (key, values = {}) =>
  (key in texts ? texts[key] : key).replace(/\{(\w+)\}/g, (_, name) => String(values[name] ?? ''));
const walletStatus = document.getElementById('wallet-status');
const collects = document.getElementById('collects');
/** The collects sent from this page, newest last: { network, txHash, progress }. */
const sent = [];

/** Amounts per asset added up in whole 10^-8 units (the wire's 8 digits), never as floats: "0.5 ETH, 15.5 USDT". */
function totals(items) {
  const sums = new Map();
  for (const item of items) {
    const [whole, fraction = ''] = item.amount.split('.');
    const units = BigInt(whole) * 100000000n + BigInt((fraction + '00000000').slice(0, 8));
    sums.set(item.asset, (sums.get(item.asset) || 0n) + units);
  }
  return [...sums]
    .sort(([a], [b]) => (a < b ? -1 : 1))
    .map(([asset, units]) => {
      const fraction = (units % 100000000n).toString().padStart(8, '0');
      return plain((units / 100000000n).toString() + '.' + fraction) + ' ' + asset;
    })
    .join(', ');
}

const problem = (message) => el('p', { class: 'problem', role: 'alert' }, message);
const plain = (amount) => amount.replace(/\.?0+$/, '');

const OVERVIEW = `query Deposits($org: ID!) {
  deposits(organisationId: $org) {
    receivingMode
    networks { network chainId depositAddresses holdingAddresses transactions estimatedGas problem
      balances { asset amount addresses } }
  }
}`;

async function showOverview() {
  const data = await graphql(OVERVIEW, { org });
  if (!data) return;
  const form = document.getElementById('receiving-mode');
  for (const input of form.querySelectorAll('input[name=mode]'))
    input.checked = input.value === data.deposits.receivingMode;
  const rows = data.deposits.networks.map((network) => {
    const balances = network.problem
      ? problem(network.problem)
      : network.balances.map((b) => plain(b.amount) + ' ' + b.asset).join(', ') || '–';
    const cells = [
      network.network,
      t('addresses.of', { holding: network.holdingAddresses, total: network.depositAddresses }),
      balances,
      network.transactions > 0 ? network.estimatedGas : '–',
    ];
    if (can('collect_deposits')) {
      const button = el('button', { type: 'button' }, t('collect.button', { network: network.network }));
      button.addEventListener('click', () => collect(network, button));
      cells.push(network.transactions > 0 ? button : t('collect.nothing'));
    }
    return cells;
  });
  const headings = ['column.network', 'column.addresses', 'column.balances', 'column.gas'];
  if (can('collect_deposits')) headings.push('column.action');
  results.replaceChildren(
    table(
      t('waiting.caption'),
      headings.map((h) => t(h)),
      rows,
    ),
  );
  document.body.dataset.loaded = new Date().toISOString();
}

/** The wallets that announce themselves (EIP-6963), else the injected window.ethereum (EIP-1193). */
function findWallet() {
  return new Promise((resolve) => {
    const found = [];
    const announced = (event) => found.push(event.detail);
    window.addEventListener('eip6963:announceProvider', announced);
    window.dispatchEvent(new Event('eip6963:requestProvider'));
    setTimeout(() => {
      window.removeEventListener('eip6963:announceProvider', announced);
      if (found.length > 0) resolve({ name: found[0].info.name, provider: found[0].provider });
      else if (window.ethereum) resolve({ name: 'window.ethereum', provider: window.ethereum });
      else resolve(null);
    }, 250);
  });
}

const PREPARE = `mutation Prepare($org: ID!, $network: String!) {
  prepareDepositCollect(organisationId: $org, network: $network) { chainId to data value gas sessionIds }
}`;
const REPORT = `mutation Report($org: ID!, $network: String!, $hash: String!) {
  reportDepositCollect(organisationId: $org, network: $network, txHash: $hash) {
    state confirmations confirmationsRequired collected { sessionId asset amount } }
}`;
const PROGRESS = `query Progress($org: ID!, $network: String!, $hash: String!) {
  depositCollect(organisationId: $org, network: $network, txHash: $hash) {
    state confirmations confirmationsRequired collected { sessionId asset amount } }
}`;
const FINAL = ['confirmed', 'reverted', 'nothing'];

async function collect(network, button) {
  button.disabled = true;
  try {
    const wallet = await findWallet();
    if (!wallet) {
      walletStatus.replaceChildren(problem(t('wallet.none')));
      return;
    }
    walletStatus.replaceChildren(el('p', {}, t('wallet.using', { name: wallet.name })));
    const data = await graphql(PREPARE, { org, network: network.network });
    if (!data) return;
    const transactions = data.prepareDepositCollect;
    const [from] = await wallet.provider.request({ method: 'eth_requestAccounts' });
    const chainId = '0x' + network.chainId.toString(16);
    if ((await wallet.provider.request({ method: 'eth_chainId' })) !== chainId) {
      walletStatus.append(el('p', {}, t('wallet.switch', { chainId: network.chainId })));
      await wallet.provider.request({ method: 'wallet_switchEthereumChain', params: [{ chainId }] });
    }
    for (const [index, tx] of transactions.entries()) {
      walletStatus.append(el('p', {}, t('wallet.sign', { n: index + 1, count: transactions.length })));
      const hash = await wallet.provider.request({
        method: 'eth_sendTransaction',
        params: [{ from, to: tx.to, data: tx.data, value: tx.value, gas: tx.gas }],
      });
      const reported = await graphql(REPORT, { org, network: network.network, hash });
      const entry = { network: network.network, txHash: hash, progress: reported && reported.reportDepositCollect };
      sent.push(entry);
      showCollects();
      follow(entry);
    }
    walletStatus.replaceChildren(el('p', {}, t('wallet.using', { name: wallet.name })));
  } catch (error) {
    walletStatus.append(problem(t('wallet.refused', { message: error.message || String(error) })));
  } finally {
    button.disabled = false;
  }
}

/** Reads the collect again until it is final; then the balances again. */
function follow(entry) {
  if (!entry.progress || FINAL.includes(entry.progress.state)) {
    showOverview().catch((error) => results.replaceChildren(problem(error.message)));
    return;
  }
  setTimeout(async () => {
    try {
      const data = await graphql(PROGRESS, { org, network: entry.network, hash: entry.txHash });
      if (data) entry.progress = data.depositCollect;
      showCollects();
    } catch (error) {
      walletStatus.append(problem(error.message));
    }
    follow(entry);
  }, 1000);
}

function showCollects() {
  const rows = sent.map((entry) => {
    const progress = entry.progress || { state: 'unknown', confirmations: 0, confirmationsRequired: 0, collected: [] };
    const state = t('state.' + progress.state, {
      confirmations: progress.confirmations,
      required: progress.confirmationsRequired,
    });
    const collected = totals(progress.collected) || '–';
    return [
      entry.network,
      el('code', {}, entry.txHash),
      el('span', { 'data-state': progress.state }, state),
      collected,
    ];
  });
  const headings = ['column.network', 'column.tx', 'column.state', 'column.collected'].map((h) => t(h));
  collects.replaceChildren(table(t('collects.caption'), headings, rows));
}

function modeForm() {
  const form = document.getElementById('receiving-mode');
  const status = document.getElementById('mode-status');
  if (!can('manage_wallet')) return;
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    const chosen = form.querySelector('input[name=mode]:checked');
    if (!chosen) return;
    graphql('mutation Mode($org: ID!, $mode: String!) { setReceivingMode(organisationId: $org, mode: $mode) }', {
      org,
      mode: chosen.value,
    })
      .then((data) => data && status.replaceChildren(el('p', {}, t('mode.saved'))))
      .catch((error) => {
        status.replaceChildren(problem(error.message));
        return showOverview();
      });
  });
}

/** Called by views.js for the deposits view. */
export function show() {
  modeForm();
  return showOverview();
}
