// @ts-check
// What the checkout page holds: its page data, the session as last read, the payer's choice and the live channel.

/** @import { ChosenOption, Network, PayPageData, Session } from './types.js' */

import { readPageData } from './dom.js';

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
