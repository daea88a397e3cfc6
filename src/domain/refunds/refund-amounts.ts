import { conflict, invalid } from '../shared/errors.js';
import { Decimal, WIRE_DECIMALS } from '../shared/money.js';
import type { AssetTicker } from '../shared/assets.js';
import { OPEN_STATUSES } from '../sessions/checkout-session.js';
import { HOLDING_STATUSES, type RefundKind } from './refund.js';
import type { ReceivedAsset, RefundableSession } from './refund-ports.js';

/**
 * How much a refund returns (docs/decisions/0032): pure rules over a session's confirmed payments and its refunds that
 * hold an amount. Amounts are rounded down to min(8, decimals) places: a refund never sends more than came in.
 */

/** The places a refund amount in an asset of `decimals` may have. */
export const refundPlaces = (decimals: number): number => Math.min(WIRE_DECIMALS, decimals);

/** What a source has left to refund: received minus the refunds of that asset and network that hold an amount. */
export function leftToRefund(session: RefundableSession, source: ReceivedAsset): Decimal {
  const held = session.refunds
    .filter((refund) => HOLDING_STATUSES.includes(refund.status))
    .filter((refund) => refund.network === source.network && refund.asset === source.asset)
    .reduce((sum, refund) => sum.plus(refund.amount), new Decimal(0));
  return source.amount.minus(held);
}

/**
 * The payments a refund returns: the one source (asset and network) the session received confirmed money in that the
 * request names; either may be left out when only one source fits.
 */
export function chooseSource(
  session: RefundableSession,
  wanted: { readonly cryptoCurrency?: AssetTicker; readonly network?: string },
): ReceivedAsset {
  if (OPEN_STATUSES.includes(session.status))
    throw conflict(
      `Checkout session ${session.id} is ${session.status}: refund it once it is paid, expired or failed`,
      'session_not_refundable',
    );
  const sources = session.received.filter((source) => source.amount.gt(0));
  const fitting = sources.filter(
    (source) =>
      (wanted.cryptoCurrency === undefined || source.asset === wanted.cryptoCurrency) &&
      (wanted.network === undefined || source.network === wanted.network),
  );
  if (fitting.length === 0) {
    const what = [wanted.cryptoCurrency, wanted.network && `on ${wanted.network}`].filter(Boolean).join(' ');
    throw conflict(
      `Checkout session ${session.id} received nothing confirmed${what ? ` in ${what}` : ''} to refund`,
      'session_not_refundable',
    );
  }
  if (fitting.length > 1) {
    const names = fitting.map((source) => `${source.asset} on ${source.network}`).join(', ');
    throw invalid([`crypto_currency and network must name one of what the session received: ${names}`]);
  }
  return fitting[0]!;
}

export interface AmountRequest {
  readonly kind: RefundKind;
  /** The token amount asked (kind part); a fiat basis converts before this point. */
  readonly amount?: Decimal;
}

/**
 * The amount of a refund of `kind` from `source`, given the session's other refunds; refuses more than is left (409
 * refund_exceeds_received) and an excess refund of a session not overpaid in that asset (409 not_overpaid).
 */
export function refundAmount(
  session: RefundableSession,
  source: ReceivedAsset,
  decimals: number,
  request: AmountRequest,
): Decimal {
  const places = refundPlaces(decimals);
  const left = leftToRefund(session, source);
  const available = Decimal.max(left, 0).toDecimalPlaces(places, Decimal.ROUND_DOWN);
  const tooMuch = (asked: Decimal) =>
    conflict(
      `A refund of ${asked.toFixed()} ${source.asset} would exceed what session ${session.id} received on ` +
        `${source.network}: ${source.amount.toFixed()} received, ${available.toFixed()} left to refund`,
      'refund_exceeds_received',
    );
  if (request.kind === 'part') {
    const asked = request.amount;
    if (!asked || asked.lte(0)) throw invalid(['amount must be greater than 0']);
    if (asked.decimalPlaces() > places)
      throw invalid([`amount must have at most ${places} decimal places in ${source.asset} on ${source.network}`]);
    if (asked.gt(available)) throw tooMuch(asked);
    return asked;
  }
  if (request.kind === 'excess') {
    const excess = excessOf(session, source);
    if (excess === null)
      throw conflict(
        `Checkout session ${session.id} was not paid more than its price in ${source.asset} on ${source.network}`,
        'not_overpaid',
      );
    // The excess goes first: whatever the session's refunds already hold counts against it.
    const held = source.amount.minus(left);
    const amount = Decimal.min(excess.minus(held).toDecimalPlaces(places, Decimal.ROUND_DOWN), available);
    if (amount.lte(0)) throw tooMuch(excess);
    return amount;
  }
  if (available.lte(0)) throw tooMuch(left.gt(0) ? left : source.amount);
  return available;
}

/** What an overpaid session received above its price in `source`'s asset and chain; null when nothing. */
export function excessOf(session: RefundableSession, source: ReceivedAsset): Decimal | null {
  const price = session.totalAmountCrypto;
  if (!session.overpaid || price === null || session.cryptoCurrency !== source.asset) return null;
  if (session.chainId !== null && session.chainId !== source.chainId) return null;
  const excess = source.amount.minus(price);
  return excess.gt(0) ? excess : null;
}

/** Converts a fiat amount at a unit price to the asset, rounded down to its places. */
export function fiatToToken(amountFiat: Decimal, unitPriceFiat: Decimal, decimals: number): Decimal {
  return amountFiat.div(unitPriceFiat).toDecimalPlaces(refundPlaces(decimals), Decimal.ROUND_DOWN);
}
