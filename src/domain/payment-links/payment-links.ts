import { randomUUID } from 'node:crypto';
import type { DomainContext } from '../context.js';
import { isIso4217 } from '../rates/currencies.js';
import { invalid, notFound, unprocessable } from '../shared/errors.js';
import { Decimal } from '../shared/money.js';
import { brandingOf } from '../organisations/branding.js';
import type { Branding } from '../organisations/branding-ports.js';
import {
  paymentLinkState,
  type IdentityOption,
  type PaymentLink,
  type PaymentLinkPatch,
  type PaymentLinkState,
} from './payment-link.js';
import { isUuid } from '../shared/uuid.js';

/** A link as the merchant asks for it, after the transport checked its shape (src/rest/payment-links.schema.ts). */
export interface CreatePaymentLinkInput {
  readonly name: string;
  readonly currency: string;
  /** A fixed basket… */
  readonly items?: ReadonlyArray<{
    readonly name: string;
    readonly quantity: number;
    readonly unitPrice: string;
    readonly productId?: string;
  }>;
  /** …or an open amount the payer chooses (exact decimal strings). */
  readonly amountFiat?: { readonly min: string; readonly max: string };
  readonly expiresInMinutes?: number;
  readonly identityOptions?: readonly IdentityOption[];
  readonly anonymous?: boolean;
  readonly maxUses?: number | null;
  readonly active?: boolean;
  readonly expiresAt?: Date | null;
  readonly metadata?: Readonly<Record<string, unknown>>;
}

export const DEFAULT_LINK_SESSION_MINUTES = 60;

/**
 * Creates a payment link; refuses (400) a currency the rates do not price or an expiry in the past, and (422) an
 * organisation without a receiving wallet, whose payers could never pay.
 */
export async function createPaymentLink(
  ctx: DomainContext,
  organisationId: string,
  input: CreatePaymentLinkInput,
): Promise<PaymentLink> {
  const organisation = await ctx.store.organisations.findById(organisationId);
  if (!organisation) throw notFound(`Organisation ${organisationId} not found`);
  if (organisation.deleted) throw unprocessable('Organisation has been deleted', 'organisation_deleted');
  const now = ctx.clock();
  const currency = input.currency.trim().toUpperCase();
  const problems: string[] = [];
  if (!isIso4217(currency) || !ctx.rates.supportsCurrency(currency)) {
    problems.push(`currency ${input.currency} is not supported: use an ISO 4217 code the rates source prices`);
  }
  if (input.expiresAt && input.expiresAt.getTime() <= now.getTime()) problems.push('expires_at must be in the future');
  // A basket that sums to 0 could never be paid: every visit would be refused as create refuses it.
  const basket = (input.items ?? []).reduce(
    (sum, item) => sum.plus(new Decimal(item.unitPrice).times(item.quantity)),
    new Decimal(0),
  );
  if ((input.items ?? []).length > 0 && basket.isZero()) problems.push('total amount must be greater than 0');
  if (problems.length > 0) throw invalid(problems);
  if (!ctx.networks.some((network) => organisation.wallets[network.slug])) {
    throw unprocessable(
      `Organisation has no receiving wallet on any enabled network (${ctx.networks.map((n) => n.slug).join(', ')}); ` +
        `set one with \`kassa wallets set\``,
      'no_wallet',
    );
  }
  const identityOptions = [...new Set(input.identityOptions ?? [])];
  const link: PaymentLink = {
    id: randomUUID(),
    organisationId,
    name: input.name.trim(),
    currency,
    items: (input.items ?? []).map((item) => ({
      name: item.name,
      quantity: item.quantity,
      unitPrice: new Decimal(item.unitPrice),
      productId: item.productId ?? null,
    })),
    amountMin: input.amountFiat ? new Decimal(input.amountFiat.min) : null,
    amountMax: input.amountFiat ? new Decimal(input.amountFiat.max) : null,
    expiresInMinutes: input.expiresInMinutes ?? DEFAULT_LINK_SESSION_MINUTES,
    identityOptions,
    anonymous: input.anonymous ?? identityOptions.length === 0,
    maxUses: input.maxUses ?? null,
    uses: 0,
    active: input.active ?? true,
    expiresAt: input.expiresAt ?? null,
    metadata: input.metadata ?? {},
    createdAt: now,
    updatedAt: now,
  };
  await ctx.store.paymentLinks.insert(link);
  return link;
}

/** The organisation's links, newest first. */
export function listPaymentLinks(ctx: DomainContext, organisationId: string): Promise<PaymentLink[]> {
  return ctx.store.paymentLinks.listForOrganisation(organisationId);
}

/** One of the organisation's links; another organisation's is "not found", as for webhook endpoints. */
export async function getPaymentLink(ctx: DomainContext, organisationId: string, id: string): Promise<PaymentLink> {
  const link = await findPaymentLink(ctx, id);
  if (link.organisationId !== organisationId) throw linkNotFound(id);
  return link;
}

/** Renames, (de)activates, changes the limits or the metadata of one of the organisation's links. */
export async function updatePaymentLink(
  ctx: DomainContext,
  organisationId: string,
  id: string,
  patch: PaymentLinkPatch,
): Promise<PaymentLink> {
  await getPaymentLink(ctx, organisationId, id);
  const now = ctx.clock();
  if (patch.expiresAt && patch.expiresAt.getTime() <= now.getTime())
    throw invalid(['expires_at must be in the future']);
  const updated = await ctx.store.paymentLinks.update(
    id,
    { ...patch, ...(patch.name !== undefined ? { name: patch.name.trim() } : {}) },
    now,
  );
  if (!updated) throw linkNotFound(id);
  return updated;
}

/** Any link by id (the public page and its sessions): 400 for a malformed id, 404 for an unknown one. */
export async function findPaymentLink(ctx: DomainContext, id: string): Promise<PaymentLink> {
  if (!isUuid(id)) throw invalid(['id must be a UUID']);
  const link = await ctx.store.paymentLinks.findById(id.toLowerCase());
  if (!link) throw linkNotFound(id);
  return link;
}

/** What a payer may know of a link: all of it while it takes payers, else only that it does not, and why. */
export type PayerPaymentLink =
  | { readonly state: 'active'; readonly link: PaymentLink; readonly branding: Branding | null }
  | { readonly state: Exclude<PaymentLinkState, 'active'>; readonly id: string };

/**
 * A link as its payers see it: the link and its merchant while it takes payers; an inactive, expired or used-up one
 * only its id and state, as the /l page shows it.
 */
export async function paymentLinkForPayer(ctx: DomainContext, id: string): Promise<PayerPaymentLink> {
  const link = await findPaymentLink(ctx, id);
  const state = paymentLinkState(link, ctx.clock());
  if (state !== 'active') return { state, id: link.id };
  return { state, link, branding: await brandingOf(ctx, link.organisationId) };
}

const linkNotFound = (id: string) => notFound(`Payment link ${id} not found`);
