import { randomUUID } from 'node:crypto';
import type { DomainContext } from '../context.js';
import { conflict, invalid, notFound } from '../shared/errors.js';
import { Decimal } from '../shared/money.js';
import { isAddress } from 'viem';
import { RECEIVING_MODES, type Organisation, type ReceivingChoice, type ReceivingMode } from './organisation-ports.js';

const ADDRESS_PATTERN = /^0x[a-fA-F0-9]{40}$/;

export interface CreateOrganisationInput {
  readonly name: string;
  /** Receiving wallet; set for `network`, or for every enabled network when no network is given. */
  readonly wallet?: string;
  readonly network?: string;
  /** `deposit` or `shared` (or the full names); when not given, defaultReceivingMode chooses. */
  readonly receiving?: string;
}

/** A new organisation, with why it has its receiving mode. */
export interface CreatedOrganisation extends Organisation {
  readonly receivingReason: string;
}

/** Creates an organisation, optionally with its receiving wallet. */
export async function createOrganisation(
  ctx: DomainContext,
  input: CreateOrganisationInput,
): Promise<CreatedOrganisation> {
  const name = input.name.trim();
  if (!name || name.length > 200) throw invalid('name must be 1 to 200 characters');
  const asked = input.receiving === undefined ? undefined : parseReceivingMode(input.receiving);
  const wallets: Record<string, string> = {};
  if (input.wallet !== undefined) {
    const address = checkAddress(input.wallet);
    for (const slug of networksFor(ctx, input.network)) wallets[slug] = address;
  }
  const id = randomUUID();
  for (const [slug, address] of Object.entries(wallets)) await checkWalletIsFree(ctx, id, slug, address);
  const slugs = Object.keys(wallets).length > 0 ? Object.keys(wallets) : ctx.networks.map((network) => network.slug);
  const choice: ReceivingChoice = asked ? { mode: asked, reason: 'as asked' } : await defaultReceivingMode(ctx, slugs);
  const organisation = await ctx.store.organisations.create({ id, name, wallets, receivingMode: choice.mode });
  return { ...organisation, receivingReason: choice.reason };
}

/**
 * Deposit addresses where the deposit factory is deployed on every one of `networks` (the organisation's wallets'
 * networks, or every enabled one), else the shared wallet (docs/operations.md#receiving-modes).
 */
export async function defaultReceivingMode(ctx: DomainContext, networks: readonly string[]): Promise<ReceivingChoice> {
  if (networks.length === 0) return { mode: 'shared_wallet', reason: 'no network is enabled' };
  const probe = ctx.chain?.depositFactoryDeployed?.bind(ctx.chain);
  const deployed = await Promise.all(networks.map((slug) => (probe ? probe(slug) : Promise.resolve(null))));
  const missing = networks.filter((_, index) => deployed[index] === false);
  const unknown = networks.filter((_, index) => deployed[index] === null);
  if (missing.length === 0 && unknown.length === 0)
    return { mode: 'deposit_addresses', reason: `the deposit factory is deployed on ${networks.join(', ')}` };
  const why = [
    ...(missing.length > 0
      ? [`the deposit factory is not deployed on ${missing.join(', ')} (\`kassa contracts deploy --network <slug>\`)`]
      : []),
    ...(unknown.length > 0 ? [`no node answered on ${unknown.join(', ')} to tell whether the factory is there`] : []),
  ];
  return { mode: 'shared_wallet', reason: why.join('; ') };
}

export async function findOrganisation(ctx: DomainContext, organisationId: string): Promise<Organisation> {
  const organisation = await ctx.store.organisations.findById(organisationId);
  if (!organisation) throw notFound(`Organisation ${organisationId} not found`);
  return organisation;
}

export function listOrganisations(ctx: DomainContext): Promise<Organisation[]> {
  return ctx.store.organisations.list();
}

/** Sets the organisation's receiving wallet on one network (or every enabled one). */
export async function setWallet(
  ctx: DomainContext,
  organisationId: string,
  address: string,
  network?: string,
): Promise<Organisation> {
  const organisation = await ctx.store.organisations.findById(organisationId);
  if (!organisation) throw notFound(`Organisation ${organisationId} not found`);
  const checked = checkAddress(address);
  const slugs = networksFor(ctx, network);
  for (const slug of slugs) await checkWalletIsFree(ctx, organisationId, slug, checked);
  for (const slug of slugs) await ctx.store.organisations.setWallet(organisationId, slug, checked);
  return (await ctx.store.organisations.findById(organisationId))!;
}

export interface PaymentPolicyChange {
  /** Percent, 0–100, at most 2 fractional digits. */
  readonly underpaymentTolerancePercent?: string;
  /** Minutes after expiry during which transfers are still recorded as late payments (0–525600). */
  readonly latePaymentWindowMinutes?: string;
  /** `deposit` or `shared` (or the full names): for sessions created from now on; existing ones keep theirs. */
  readonly receiving?: string;
}

/** The receiving mode a CLI or API names: `deposit` / `deposit_addresses`, `shared` / `shared_wallet`. */
export function parseReceivingMode(text: string): ReceivingMode {
  const mode = { deposit: 'deposit_addresses', shared: 'shared_wallet' }[text.trim()] ?? text.trim();
  if (!(RECEIVING_MODES as readonly string[]).includes(mode))
    throw invalid(`receiving mode must be deposit or shared (deposit_addresses or shared_wallet), not ${text}`);
  return mode as ReceivingMode;
}

/** Sets the organisation's payment policy (`kassa orgs policy`, docs/operations.md#cli-reference). */
export async function setPaymentPolicy(
  ctx: DomainContext,
  organisationId: string,
  change: PaymentPolicyChange,
): Promise<Organisation> {
  const problems: string[] = [];
  let tolerance: Decimal | undefined;
  let window: number | undefined;
  let receivingMode: ReceivingMode | undefined;
  if (change.underpaymentTolerancePercent !== undefined) {
    const text = change.underpaymentTolerancePercent;
    if (!/^\d{1,3}(\.\d{1,2})?$/.test(text) || new Decimal(text).greaterThan(100))
      problems.push('underpayment tolerance must be a percentage from 0 to 100 with at most 2 decimals');
    else tolerance = new Decimal(text);
  }
  if (change.latePaymentWindowMinutes !== undefined) {
    const text = change.latePaymentWindowMinutes;
    if (!/^\d{1,6}$/.test(text) || Number(text) > 525_600)
      problems.push('late-payment window must be a whole number of minutes from 0 to 525600');
    else window = Number(text);
  }
  if (change.receiving !== undefined) {
    try {
      receivingMode = parseReceivingMode(change.receiving);
    } catch {
      problems.push(`receiving mode must be deposit or shared, not ${change.receiving}`);
    }
  }
  if (problems.length > 0) throw invalid(problems);
  if (!(await ctx.store.organisations.findById(organisationId)))
    throw notFound(`Organisation ${organisationId} not found`);
  await ctx.store.organisations.setPaymentPolicy(organisationId, {
    underpaymentTolerancePercent: tolerance,
    latePaymentWindowMinutes: window,
    receivingMode,
  });
  return (await ctx.store.organisations.findById(organisationId))!;
}

/**
 * A wallet belongs to one organisation per network, so a transfer matches one organisation's sessions
 * (docs/decisions/0015-a-wallet-belongs-to-one-organisation.md); a unique index holds it against races.
 */
async function checkWalletIsFree(
  ctx: DomainContext,
  organisationId: string,
  network: string,
  address: string,
): Promise<void> {
  const owner = await ctx.store.organisations.walletOwner(network, address);
  if (owner && owner !== organisationId) throw walletTaken(address, network);
}

export function walletTaken(address: string, network: string) {
  return conflict(
    `wallet ${address} already receives payments for another organisation on ${network}: each organisation needs its ` +
      `own receiving wallet`,
  );
}

/**
 * A mixed-case address must carry a valid EIP-55 checksum, so a typo is caught before funds are lost; the zero
 * address is refused, as nobody can spend what is sent there.
 */
function checkAddress(address: string): string {
  if (!ADDRESS_PATTERN.test(address)) throw invalid('wallet address must match ^0x[a-fA-F0-9]{40}$');
  if (/[a-f]/.test(address.slice(2)) && /[A-F]/.test(address.slice(2)) && !isAddress(address, { strict: true })) {
    throw invalid(
      `wallet address ${address} has an invalid EIP-55 checksum (mixed case): check it, or give it all in lower case`,
    );
  }
  if (/^0x0{40}$/i.test(address)) throw invalid('wallet address must not be the zero address');
  return address.toLowerCase();
}

function networksFor(ctx: DomainContext, network: string | undefined): string[] {
  if (network === undefined) return ctx.networks.map((n) => n.slug);
  if (!ctx.networks.some((n) => n.slug === network)) {
    throw invalid(`network ${network} is not enabled (enabled: ${ctx.networks.map((n) => n.slug).join(', ')})`);
  }
  return [network];
}
