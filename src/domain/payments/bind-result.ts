import type { AssetTicker } from '../shared/assets.js';
import type { CheckoutSession } from '../sessions/checkout-session.js';
import type { Decimal } from '../shared/money.js';

/**
 * What one bind call did (docs/api/rest.md#bind-rules), for the transports' views; kept apart so views need not
 * import the use-case.
 */
export interface BindResult {
  readonly session: CheckoutSession;
  readonly txHash: string;
  readonly cryptoCurrency: AssetTicker;
  /** What the session requires in that asset. */
  readonly totalAmountCrypto: Decimal;
  readonly idempotent: boolean;
}
