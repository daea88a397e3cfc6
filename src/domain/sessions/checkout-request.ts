import { createHash } from 'node:crypto';
import { Decimal } from '../shared/money.js';

/**
 * The create request after the transport checked its shape (docs/api/rest.md#create-rules-and-limits). Prices are
 * exact decimal strings.
 */
export interface CreateCheckoutInput {
  /** The merchant's customer; a payment link's payer may give a Telegram id instead of an email. */
  readonly user: {
    readonly id: string;
    readonly email?: string | null;
    readonly username?: string;
    readonly telegramId?: string | null;
  };
  readonly items: ReadonlyArray<{
    readonly name: string;
    readonly quantity: number;
    readonly unitPrice: string;
    readonly productId?: string;
  }>;
  readonly currency: string;
  readonly metadata?: Readonly<Record<string, unknown>>;
  readonly expiresInMinutes?: number;
}

/**
 * Where a session comes from. Merchant API sessions take the defaults (source "api", no link);
 * a payment link passes its own (src/domain/payment-links.ts).
 */
export interface SessionOrigin {
  readonly source: string;
  readonly fromPaymentLink: boolean;
  readonly productPaymentLinkId: string | null;
  readonly anonymous: boolean;
  readonly requiresPayerIdentity: boolean;
  readonly identityOptions: readonly string[];
  /** The history row's cause of the first status. */
  readonly cause: string;
  /**
   * Tells a retry from another request under one Idempotency-Key; a link's visit hashes only what the payer sent, as
   * the link's merchant may change the rest between a visit and its retry.
   */
  readonly requestHash?: string;
}

export const MERCHANT_API_ORIGIN: SessionOrigin = Object.freeze({
  source: 'api',
  fromPaymentLink: false,
  productPaymentLinkId: null,
  anonymous: false,
  requiresPayerIdentity: false,
  identityOptions: [],
  cause: 'created by merchant API',
});

export const DEFAULT_EXPIRES_IN_MINUTES = 60;

/** A stable hash of the request's meaning: key order and number spelling do not matter. */
export function hashRequest(input: CreateCheckoutInput): string {
  const canonical = {
    // Written as before payment links existed, so stored hashes of merchant requests stay valid.
    user: {
      id: input.user.id,
      email: input.user.email ?? null,
      username: input.user.username ?? null,
      ...(input.user.telegramId ? { telegramId: input.user.telegramId } : {}),
    },
    items: input.items.map((item) => [
      item.name,
      item.quantity,
      new Decimal(item.unitPrice).toFixed(),
      item.productId ?? null,
    ]),
    currency: input.currency.trim().toUpperCase(),
    metadata: sortKeys(input.metadata ?? {}),
    expiresInMinutes: input.expiresInMinutes ?? DEFAULT_EXPIRES_IN_MINUTES,
  };
  return createHash('sha256').update(JSON.stringify(canonical)).digest('hex');
}

function sortKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortKeys);
  if (value && typeof value === 'object') {
    return Object.fromEntries(
      Object.keys(value)
        .sort()
        .map((key) => [key, sortKeys((value as Record<string, unknown>)[key])]),
    );
  }
  return value;
}
