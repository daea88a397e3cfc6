import type { AssetTicker } from '../shared/assets.js';
import type { Decimal } from '../shared/money.js';

/** Refunds (docs/api/refunds.md): what a refund is and the states it moves through. */

export const REFUND_KINDS = ['full', 'excess', 'part'] as const;
export type RefundKind = (typeof REFUND_KINDS)[number];

export const REFUND_BASES = ['token', 'fiat'] as const;
export type RefundBasis = (typeof REFUND_BASES)[number];

export const REFUND_STATUSES = [
  'awaiting_destination',
  'ready',
  'sent',
  'confirmed',
  'cancelled',
  'expired',
  'failed',
] as const;
export type RefundStatus = (typeof REFUND_STATUSES)[number];

export const DESTINATION_SOURCES = ['merchant', 'claim', 'claim_signed'] as const;
export type DestinationSource = (typeof DESTINATION_SOURCES)[number];

/** A refund in these states holds its amount: the refunds of a session in them never exceed what it received. */
export const HOLDING_STATUSES: readonly RefundStatus[] = ['awaiting_destination', 'ready', 'sent', 'confirmed'];

/** Before the transfer is sent: the merchant may still cancel. */
export const CANCELLABLE_STATUSES: readonly RefundStatus[] = ['awaiting_destination', 'ready'];

/**
 * The allowed status changes (docs/api/refunds.md#states). `confirmed → sent` is a reorganisation removing the
 * mined transfer; `sent → sent` is not a change (a sighting of the transfer updates the row without one).
 */
export const REFUND_TRANSITIONS: Readonly<Record<RefundStatus, readonly RefundStatus[]>> = {
  awaiting_destination: ['ready', 'cancelled', 'expired'],
  ready: ['sent', 'cancelled'],
  sent: ['confirmed', 'failed'],
  confirmed: ['sent'],
  cancelled: [],
  expired: [],
  failed: [],
};

export function canMove(from: RefundStatus, to: RefundStatus): boolean {
  return REFUND_TRANSITIONS[from].includes(to);
}

/** The fiat basis: the amount asked in the session's currency and the rate of the moment it was converted at. */
export interface FiatBasis {
  readonly currency: string;
  readonly amountFiat: Decimal;
  readonly unitPriceFiat: Decimal;
  readonly rateSource: string;
  readonly ratedAt: Date;
}

/** The payer's EIP-191 proof that the wallet which paid chose the destination (claim_signed). */
export interface DestinationProof {
  readonly message: string;
  readonly signature: string;
  /** The wallet that signed, lower-case: one the session was paid from. */
  readonly address: string;
}

/** The transfer that carries the refund, as sent and as mined. */
export interface RefundTransfer {
  readonly txHash: string | null;
  /** The sending address, lower-case, when known. */
  readonly sentFrom: string | null;
  readonly sentAt: Date | null;
  readonly blockNumber: bigint | null;
  readonly blockHash: string | null;
  /** The Transfer log's index; -1 for a native-coin transfer. */
  readonly logIndex: number | null;
  readonly minedAt: Date | null;
  readonly confirmations: number;
  readonly confirmedAt: Date | null;
}

export interface Refund {
  readonly id: string;
  readonly organisationId: string;
  readonly sessionId: string;
  readonly kind: RefundKind;
  readonly basis: RefundBasis;
  readonly status: RefundStatus;
  /** Where the money came in and goes back: the network's slug and EIP-155 id, the asset and its token. */
  readonly network: string;
  readonly chainId: string;
  readonly asset: AssetTicker;
  /** Lower-case; null for the native coin. */
  readonly tokenAddress: string | null;
  readonly decimals: number;
  /** Exact, at most min(8, decimals) fractional digits; `baseUnits` is the same in the asset's smallest unit. */
  readonly amount: Decimal;
  readonly baseUnits: bigint;
  readonly fiat: FiatBasis | null;
  /** Lower-case; null while awaiting_destination. */
  readonly destination: string | null;
  readonly destinationSource: DestinationSource | null;
  readonly destinationAt: Date | null;
  readonly proof: DestinationProof | null;
  /** When the claim link stops taking an address; null when the merchant gave the destination. */
  readonly claimExpiresAt: Date | null;
  readonly transfer: RefundTransfer;
  readonly failureReason: string | null;
  readonly note: string | null;
  readonly idempotencyKey: string | null;
  readonly requestHash: string | null;
  readonly createdAt: Date;
  readonly updatedAt: Date;
}

export const NO_TRANSFER: RefundTransfer = {
  txHash: null,
  sentFrom: null,
  sentAt: null,
  blockNumber: null,
  blockHash: null,
  logIndex: null,
  minedAt: null,
  confirmations: 0,
  confirmedAt: null,
};

/** The payer's claim page: `{checkout_base_url}/r/<refund id>`; null when the merchant gave the destination. */
export function claimUrl(refund: Pick<Refund, 'id' | 'claimExpiresAt'>, checkoutBaseUrl: string): string | null {
  return refund.claimExpiresAt === null ? null : `${checkoutBaseUrl}/r/${refund.id}`;
}

/** Whether the claim link still takes an address at `now`. */
export function claimOpen(refund: Pick<Refund, 'status' | 'claimExpiresAt'>, now: Date): boolean {
  return (
    refund.status === 'awaiting_destination' &&
    refund.claimExpiresAt !== null &&
    refund.claimExpiresAt.getTime() > now.getTime()
  );
}
