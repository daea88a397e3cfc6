import type { Decimal } from './money.js';
import { formatAmount } from './money.js';

/** What a payment link may ask the payer for (README "Payment links"). */
export const IDENTITY_OPTIONS = ['email', 'telegram', 'username'] as const;
export type IdentityOption = (typeof IDENTITY_OPTIONS)[number];

/** Why a link does or does not take payers right now. */
export type PaymentLinkState = 'active' | 'inactive' | 'expired' | 'used_up';

export interface PaymentLinkItem {
  readonly name: string;
  readonly quantity: number;
  readonly unitPrice: Decimal;
  readonly productId: string | null;
}

/**
 * A reusable link a merchant shares (issue 12): a fixed basket (`items`), or an open
 * amount the payer chooses from `amountMin` to `amountMax`. Each visit that creates a
 * checkout session counts one use.
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
  readonly uses: number;
  readonly active: boolean;
  readonly expiresAt: Date | null;
  readonly metadata: Readonly<Record<string, unknown>>;
  readonly createdAt: Date;
  readonly updatedAt: Date;
}

/** Whether the link takes payers at `now`, and if not, why. Inactive wins over expired over used up. */
export function paymentLinkState(link: Pick<PaymentLink, 'active' | 'expiresAt' | 'maxUses' | 'uses'>, now: Date): PaymentLinkState {
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
  return link.items.reduce((sum, item) => sum.plus(item.unitPrice.times(item.quantity)), link.items[0]!.unitPrice.times(0));
}

/** The merchant's view of a link (REST, CLI --json). */
export interface PaymentLinkView {
  payment_link_id: string;
  organisation_id: string;
  url: string;
  name: string;
  currency: string;
  items: Array<{ name: string; quantity: number; unit_price: string; total_price: string; product_id: string | null }> | null;
  amount_fiat: { min: string; max: string } | null;
  total_amount_fiat: string | null;
  expires_in_minutes: number;
  identity_options: string[];
  anonymous: boolean;
  requires_payer_identity: boolean;
  max_uses: number | null;
  uses: number;
  active: boolean;
  state: PaymentLinkState;
  expires_at: string | null;
  metadata: Record<string, unknown>;
  created_at: string;
  updated_at: string;
}

/** `url` is `{checkout_base_url}/l/<payment_link_id>`. */
export function toPaymentLinkView(link: PaymentLink, checkoutBaseUrl: string, now: Date): PaymentLinkView {
  const total = fixedTotal(link);
  return {
    payment_link_id: link.id,
    organisation_id: link.organisationId,
    url: paymentLinkUrl(checkoutBaseUrl, link.id),
    name: link.name,
    currency: link.currency,
    items:
      link.items.length === 0
        ? null
        : link.items.map((item) => ({
            name: item.name,
            quantity: item.quantity,
            unit_price: formatAmount(item.unitPrice),
            total_price: formatAmount(item.unitPrice.times(item.quantity)),
            product_id: item.productId,
          })),
    amount_fiat: link.amountMin && link.amountMax ? { min: formatAmount(link.amountMin), max: formatAmount(link.amountMax) } : null,
    total_amount_fiat: total ? formatAmount(total) : null,
    expires_in_minutes: link.expiresInMinutes,
    identity_options: [...link.identityOptions],
    anonymous: link.anonymous,
    requires_payer_identity: requiresPayerIdentity(link),
    max_uses: link.maxUses,
    uses: link.uses,
    active: link.active,
    state: paymentLinkState(link, now),
    expires_at: link.expiresAt?.toISOString() ?? null,
    metadata: { ...link.metadata },
    created_at: link.createdAt.toISOString(),
    updated_at: link.updatedAt.toISOString(),
  };
}

export const paymentLinkUrl = (checkoutBaseUrl: string, id: string) => `${checkoutBaseUrl}/l/${id}`;

/** What may change on an existing link (PATCH, `kassa links deactivate`). */
export interface PaymentLinkPatch {
  readonly name?: string;
  readonly active?: boolean;
  readonly maxUses?: number | null;
  readonly expiresAt?: Date | null;
  readonly metadata?: Readonly<Record<string, unknown>>;
}

/** Storage of payment links (src/db/payment-link.store.ts). */
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
