import type { Decimal } from '../shared/money.js';

/** What a payment link may ask the payer for (docs/hosted-pages.md#payment-links). */
export const IDENTITY_OPTIONS = ['email', 'telegram', 'username'] as const;
export type IdentityOption = (typeof IDENTITY_OPTIONS)[number];

/** Why a link does or does not take payers right now. */
export const PAYMENT_LINK_STATES = ['active', 'inactive', 'expired', 'used_up'] as const;
export type PaymentLinkState = (typeof PAYMENT_LINK_STATES)[number];

export interface PaymentLinkItem {
  readonly name: string;
  readonly quantity: number;
  readonly unitPrice: Decimal;
  readonly productId: string | null;
}

/**
 * A reusable link a merchant shares: a fixed basket, or an amount the payer chooses between `amountMin` and
 * `amountMax`. Each paid or still open session of it counts one use (docs/decisions/0016).
 */
export interface PaymentLink {
  readonly id: string;
  readonly organisationId: string;
  readonly name: string;
  readonly currency: string;
  /** The fixed basket; empty for an open amount. */
  readonly items: readonly PaymentLinkItem[];
  /** Both set for an open amount, both null for a fixed basket. */
  readonly amountMin: Decimal | null;
  readonly amountMax: Decimal | null;
  readonly expiresInMinutes: number;
  readonly identityOptions: readonly IdentityOption[];
  readonly anonymous: boolean;
  readonly maxUses: number | null;
  /** Sessions of the link paid or still open: an open one holds its use until it expires. */
  readonly uses: number;
  readonly active: boolean;
  readonly expiresAt: Date | null;
  readonly metadata: Readonly<Record<string, unknown>>;
  readonly createdAt: Date;
  readonly updatedAt: Date;
}

/** Whether the link takes payers at `now`, and if not, why. Inactive wins over expired over used up. */
export function paymentLinkState(
  link: Pick<PaymentLink, 'active' | 'expiresAt' | 'maxUses' | 'uses'>,
  now: Date,
): PaymentLinkState {
  if (!link.active) return 'inactive';
  if (link.expiresAt !== null && link.expiresAt.getTime() <= now.getTime()) return 'expired';
  if (link.maxUses !== null && link.uses >= link.maxUses) return 'used_up';
  return 'active';
}

/** A link asks for an identity unless it is anonymous. */
export const requiresPayerIdentity = (link: Pick<PaymentLink, 'anonymous' | 'identityOptions'>): boolean =>
  !link.anonymous && link.identityOptions.length > 0;

/** The fixed basket's total; null for an open amount. */
export function fixedTotal(link: Pick<PaymentLink, 'items'>): Decimal | null {
  if (link.items.length === 0) return null;
  return link.items.reduce(
    (sum, item) => sum.plus(item.unitPrice.times(item.quantity)),
    link.items[0]!.unitPrice.times(0),
  );
}

/** What may change on an existing link (PATCH, `kassa links deactivate`). */
export interface PaymentLinkPatch {
  readonly name?: string;
  readonly active?: boolean;
  readonly maxUses?: number | null;
  readonly expiresAt?: Date | null;
  readonly metadata?: Readonly<Record<string, unknown>>;
}

/** Storage of payment links (src/db/payment-links/payment-link.store.ts). */
export interface PaymentLinkStore {
  insert(link: PaymentLink): Promise<void>;
  findById(id: string): Promise<PaymentLink | null>;
  /** The organisation's links, newest first. */
  listForOrganisation(organisationId: string): Promise<PaymentLink[]>;
  update(id: string, patch: PaymentLinkPatch, at: Date): Promise<PaymentLink | null>;
  /**
   * The installation's secret key of payer ids (payerId): random, made on first use by whichever
   * instance needs it first, then the same for every instance on the database and never changed.
   */
  payerIdKey(): Promise<Buffer>;
}
