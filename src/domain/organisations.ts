import { randomUUID } from 'node:crypto';
import type { DomainContext } from './context.js';
import { invalid, notFound } from './errors.js';
import type { Organisation } from './ports.js';

const ADDRESS_PATTERN = /^0x[a-fA-F0-9]{40}$/;

export interface CreateOrganisationInput {
  readonly name: string;
  /** Receiving wallet; set for `network`, or for every enabled network when no network is given. */
  readonly wallet?: string;
  readonly network?: string;
}

/** Creates an organisation, optionally with its receiving wallet. */
export async function createOrganisation(ctx: DomainContext, input: CreateOrganisationInput): Promise<Organisation> {
  const name = input.name.trim();
  if (!name || name.length > 200) throw invalid('name must be 1 to 200 characters');
  const wallets: Record<string, string> = {};
  if (input.wallet !== undefined) {
    const address = checkAddress(input.wallet);
    for (const slug of networksFor(ctx, input.network)) wallets[slug] = address;
  }
  return ctx.store.organisations.create({ id: randomUUID(), name, wallets });
}

export function listOrganisations(ctx: DomainContext): Promise<Organisation[]> {
  return ctx.store.organisations.list();
}

/** Sets the organisation's receiving wallet on one network (or every enabled one). */
export async function setWallet(ctx: DomainContext, organisationId: string, address: string, network?: string): Promise<Organisation> {
  const organisation = await ctx.store.organisations.findById(organisationId);
  if (!organisation) throw notFound(`Organisation ${organisationId} not found`);
  const checked = checkAddress(address);
  for (const slug of networksFor(ctx, network)) await ctx.store.organisations.setWallet(organisationId, slug, checked);
  return (await ctx.store.organisations.findById(organisationId))!;
}

function checkAddress(address: string): string {
  if (!ADDRESS_PATTERN.test(address)) throw invalid('wallet address must match ^0x[a-fA-F0-9]{40}$');
  return address.toLowerCase();
}

function networksFor(ctx: DomainContext, network: string | undefined): string[] {
  if (network === undefined) return ctx.networks.map((n) => n.slug);
  if (!ctx.networks.some((n) => n.slug === network)) {
    throw invalid(`network ${network} is not enabled (enabled: ${ctx.networks.map((n) => n.slug).join(', ')})`);
  }
  return [network];
}
