import type { AssetTicker } from '../shared/assets.js';
import type { Decimal } from '../shared/money.js';

/** Session statuses (docs/api/rest.md#statuses); `pending` is reserved for sessions not yet payable. */
export const CHECKOUT_SESSION_STATUSES = [
  'pending',
  'waiting_payment',
  'partial',
  'paid',
  'expired',
  'failed',
] as const;
export type CheckoutSessionStatus = (typeof CHECKOUT_SESSION_STATUSES)[number];

export const TERMINAL_STATUSES: readonly CheckoutSessionStatus[] = ['paid', 'expired', 'failed'];
export const OPEN_STATUSES: readonly CheckoutSessionStatus[] = ['pending', 'waiting_payment', 'partial'];

export interface CheckoutLineItem {
  readonly name: string;
  readonly quantity: number;
  readonly unitPrice: Decimal;
  readonly totalPrice: Decimal;
  readonly productId: string | null;
}

/** A locked quote for one asset (docs/api/rest.md#crypto-options), with where its rate came from. */
export interface CryptoQuote {
  readonly ticker: AssetTicker;
  readonly assetId: string;
  readonly unitPriceFiat: Decimal;
  /** What the payer must send: `baseAmount` made unique among the open sessions on the same wallets. */
  readonly amount: Decimal;
  /** total / unit price, rounded up to a whole number of `amountStep`s. */
  readonly baseAmount: Decimal;
  /** The asset's smallest quoted unit on the session's networks (see `amountStep`). */
  readonly amountStep: Decimal;
  /** amount = baseAmount + offsetSteps × amountStep. */
  readonly offsetSteps: number;
  readonly rateSource: string;
  readonly ratedAt: Date;
  /** The rounding rule applied to `amount`, recorded for audit. */
  readonly rounding: string;
}

/** The organisation's receiving wallet on one network, as it was when the session was created. */
export interface SessionNetwork {
  readonly network: string;
  readonly chainId: string;
  readonly walletAddress: string;
}

export interface PaymentPolicy {
  /** Underpayment tolerance in percent (0–100). */
  readonly underpaymentTolerancePercent: Decimal;
  /** How long after expiry transfers are still recorded as late payments. */
  readonly latePaymentWindowMinutes: number;
}

export interface CheckoutUser {
  readonly id: string;
  readonly email: string | null;
  readonly telegramId: string | null;
  readonly username: string | null;
}

/** A checkout session as the domain sees it. */
export interface CheckoutSession {
  readonly id: string;
  readonly organisationId: string;
  readonly organisationName: string | null;
  readonly organisationDeleted: boolean;
  readonly ownerUserId: string | null;
  readonly status: CheckoutSessionStatus;
  readonly source: string;
  readonly fromPaymentLink: boolean;
  readonly anonymous: boolean;
  readonly requiresPayerIdentity: boolean;
  readonly identityOptions: readonly string[];
  readonly productPaymentLinkId: string | null;
  readonly fiatCurrency: string;
  readonly totalAmountFiat: Decimal;
  readonly cryptoCurrency: AssetTicker | null;
  readonly totalAmountCrypto: Decimal | null;
  readonly networks: readonly SessionNetwork[];
  readonly quotes: readonly CryptoQuote[];
  readonly items: readonly CheckoutLineItem[];
  readonly expiresAt: Date;
  readonly overpaid: boolean;
  readonly boundTxHash: string | null;
  readonly boundAt: Date | null;
  /** When the bound transaction (the first bound transaction found valid) was verified; null until then. */
  readonly boundTxCheckedAt: Date | null;
  readonly payerWalletAddress: string | null;
  readonly chainId: string | null;
  readonly failureReason: string | null;
  /** Confirmed total received in the selected asset on the bound chain (0 until the watcher credits a payment). */
  readonly amountReceived: Decimal;
  /** The part of `amountReceived` mined at or after expires_at: late, it changes no status. */
  readonly amountReceivedLate: Decimal;
  /** Credited to the session, seen on chain, not yet confirmed. */
  readonly amountPending: Decimal;
  /**
   * After a partial payment, the unique amount asked for the rest (docs/payment-rules.md, rule 4); null when none is
   * asked, and then the plain difference is.
   */
  readonly restAmount: Decimal | null;
  /** When the current quotes were made; they are honoured for KASSA_QUOTE_TTL_MINUTES. */
  readonly quotedAt: Date;
  /** The organisation's payment policy (`kassa orgs policy`, docs/payment-rules.md, rule 5), read with the session. */
  readonly paymentPolicy: PaymentPolicy;
  readonly user: CheckoutUser;
  readonly metadata: Readonly<Record<string, unknown>>;
  readonly createdAt: Date;
  readonly updatedAt: Date;
}

export function isTerminal(status: CheckoutSessionStatus): boolean {
  return TERMINAL_STATUSES.includes(status);
}

/**
 * The receiving wallet shown to the payer: the wallet on the chain the payer
 * bound, otherwise the wallet on the first of the session's networks.
 */
export function receivingWallet(session: Pick<CheckoutSession, 'networks' | 'chainId'>): string {
  const bound = session.chainId ? session.networks.find((n) => n.chainId === session.chainId) : undefined;
  return (bound ?? session.networks[0])?.walletAddress ?? '';
}
