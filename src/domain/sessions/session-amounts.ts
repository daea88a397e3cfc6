import { isTerminal, type CheckoutSession } from './checkout-session.js';
import { Decimal } from '../shared/money.js';

/**
 * What the session still owes in the selected asset: required minus the confirmed total, never
 * below 0, exact (in the token's own units); null until an asset is selected.
 */
export function amountOwed(session: Pick<CheckoutSession, 'totalAmountCrypto' | 'amountReceived'>): Decimal | null {
  if (!session.totalAmountCrypto) return null;
  const due = session.totalAmountCrypto.minus(session.amountReceived);
  return due.greaterThan(0) ? due : new Decimal(0);
}

/**
 * The rest's unique amount while the session is open after a partial payment, else what is owed; null until an asset
 * is selected. A closed session's rest amount was given up with its claims, so it is not shown.
 */
export function amountDue(
  session: Pick<CheckoutSession, 'status' | 'totalAmountCrypto' | 'amountReceived' | 'restAmount'>,
): Decimal | null {
  const owed = amountOwed(session);
  if (owed === null || !owed.greaterThan(0) || isTerminal(session.status)) return owed;
  return session.restAmount?.greaterThanOrEqualTo(owed) ? session.restAmount : owed;
}

/**
 * Compared as the payer is shown both (pending rounded down, due rounded up to 8 digits), as the hosted page then
 * stops inviting the payer to pay again. False until an asset is selected and while nothing is pending.
 */
export function pendingCoversDue(
  session: Pick<CheckoutSession, 'totalAmountCrypto' | 'amountReceived' | 'amountPending'>,
): boolean {
  const due = amountOwed(session);
  if (due === null || !session.amountPending.greaterThan(0)) return false;
  const pending = session.amountPending.toDecimalPlaces(8, Decimal.ROUND_DOWN);
  return pending.greaterThanOrEqualTo(due.toDecimalPlaces(8, Decimal.ROUND_CEIL));
}
