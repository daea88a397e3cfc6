import type { DomainContext } from '../../context.js';
import { setPaymentPolicy, parseReceivingMode } from '../../organisations/organisations.js';
import type { ReceivingMode } from '../../organisations/organisation-ports.js';
import { conflict, invalid, notFound, unavailable } from '../../shared/errors.js';
import { fromBaseUnits, type Decimal } from '../../shared/money.js';
import { requirePermission } from '../roles.js';
import { roleIn, type Principal } from '../sign-in.js';
import type { CollectProgress, DepositChain, DepositSurvey, PlannedCollect } from './deposit-ports.js';

/**
 * The dashboard's deposits page (docs/dashboard.md#deposits-and-collecting): the receiving mode, the money waiting at
 * deposit addresses read on chain as `kassa collect --dry-run` reads it, and collects the merchant's wallet signs.
 */

export interface DepositBalanceTotal {
  readonly asset: string;
  readonly amount: Decimal;
  readonly baseUnits: bigint;
  /** How many addresses hold some of it. */
  readonly addresses: number;
}

export interface DepositNetworkOverview {
  readonly network: string;
  readonly chainId: number;
  readonly depositAddresses: number;
  readonly holdingAddresses: number;
  readonly balances: readonly DepositBalanceTotal[];
  readonly transactions: number;
  readonly estimatedGas: bigint;
  /** Why the chain could not be read; the rest is then empty. */
  readonly problem: string | null;
}

export interface DepositsOverview {
  readonly receivingMode: ReceivingMode;
  readonly networks: readonly DepositNetworkOverview[];
}

const TX_HASH = /^0x[0-9a-fA-F]{64}$/;

function requireChain(ctx: DomainContext): DepositChain {
  if (!ctx.deposits) throw unavailable('This Kassa reads no chain: deposits cannot be read or collected here');
  return ctx.deposits;
}

function requireNetwork(ctx: DomainContext, network: string): void {
  if (!ctx.networks.some((n) => n.slug === network))
    throw invalid(`network ${network} is not enabled (enabled: ${ctx.networks.map((n) => n.slug).join(', ')})`);
}

async function organisationOf(ctx: DomainContext, organisationId: string) {
  const organisation = await ctx.store.organisations.findById(organisationId);
  if (!organisation || organisation.deleted) throw notFound(`Organisation ${organisationId} not found`);
  return organisation;
}

function totals(survey: DepositSurvey): DepositBalanceTotal[] {
  const byAsset = new Map<string, { decimals: number; units: bigint; addresses: number }>();
  for (const holding of survey.holdings)
    for (const balance of holding.balances) {
      const total = byAsset.get(balance.asset) ?? { decimals: balance.decimals, units: 0n, addresses: 0 };
      byAsset.set(balance.asset, { ...total, units: total.units + balance.units, addresses: total.addresses + 1 });
    }
  return [...byAsset].map(([asset, total]) => ({
    asset,
    amount: fromBaseUnits(total.units, total.decimals),
    baseUnits: total.units,
    addresses: total.addresses,
  }));
}

/** The receiving mode and, per enabled network, what waits at the deposit addresses (role `read`). */
export async function readDeposits(
  ctx: DomainContext,
  principal: Principal,
  organisationId: string,
): Promise<DepositsOverview> {
  requirePermission(roleIn(principal, organisationId), 'read');
  const organisation = await organisationOf(ctx, organisationId);
  const chain = requireChain(ctx);
  const networks = await Promise.all(
    ctx.networks.map(async (network): Promise<DepositNetworkOverview> => {
      try {
        const survey = await chain.survey(organisationId, network.slug);
        return {
          network: network.slug,
          chainId: network.chainId,
          depositAddresses: survey.depositAddresses,
          holdingAddresses: survey.holdings.length,
          balances: totals(survey),
          transactions: survey.collects.length,
          estimatedGas: survey.collects.reduce((sum, collect) => sum + collect.gas, 0n),
          problem: null,
        };
      } catch (error) {
        // A node's URL may carry a provider's key: never shown.
        const reason = (error as Error).message.split('\n')[0]!.replace(/\b[a-z]+:\/\/\S+/gi, '(node)');
        const problem = `${network.slug} could not be read: ${reason}`;
        return {
          network: network.slug,
          chainId: network.chainId,
          depositAddresses: 0,
          holdingAddresses: 0,
          balances: [],
          transactions: 0,
          estimatedGas: 0n,
          problem,
        };
      }
    }),
  );
  return { receivingMode: organisation.receivingMode, networks };
}

/**
 * Sets the receiving mode for sessions created from now on (role `manage_wallet`), with `kassa orgs policy`'s rule:
 * deposit mode is refused on a network of the organisation's wallets where the factory is not deployed. Audited.
 */
export async function setReceivingModeFromDashboard(
  ctx: DomainContext,
  principal: Principal,
  organisationId: string,
  mode: string,
  address: string,
): Promise<ReceivingMode> {
  requirePermission(roleIn(principal, organisationId), 'manage_wallet');
  const receivingMode = parseReceivingMode(mode);
  const organisation = await organisationOf(ctx, organisationId);
  if (receivingMode === 'deposit_addresses') {
    const chain = requireChain(ctx);
    const used = ctx.networks.filter((network) => organisation.wallets[network.slug]);
    const deployed = await Promise.all(used.map((network) => chain.factoryDeployed(network.slug)));
    const silent = used.filter((_, index) => deployed[index] === null).map((network) => network.slug);
    const missing = used.filter((_, index) => deployed[index] === false).map((network) => network.slug);
    if (missing.length > 0)
      throw conflict(
        `The deposit factory is not deployed on ${missing.join(', ')}, so money paid to deposit addresses there ` +
          `could not be collected: run ` +
          missing.map((slug) => `\`kassa contracts deploy --network ${slug}\``).join(' and ') +
          ' first (docs/operations.md#deposit-contracts)',
      );
    if (silent.length > 0)
      throw unavailable(
        `No node answered on ${silent.join(', ')}: cannot tell whether the deposit factory is deployed there`,
      );
  }
  const changed = await setPaymentPolicy(ctx, organisationId, { receiving: receivingMode });
  await ctx.store.dashboard.audit({
    organisationId,
    userId: principal.userId,
    action: 'organisation.receiving_mode_set',
    details: { receiving_mode: changed.receivingMode },
    address,
  });
  return changed.receivingMode;
}

export interface UnsignedCollect extends PlannedCollect {
  readonly network: string;
  readonly chainId: number;
  /** What the wallet should offer as its gas limit: the estimate and a fifth more, as `kassa collect` sends it. */
  readonly gasLimit: bigint;
}

/**
 * The collect transactions for the merchant's wallet to sign and send (role `collect_deposits`): to the factory,
 * no value, each for one destination; whoever sends them, the money goes only to that destination.
 */
export async function prepareCollectFromDashboard(
  ctx: DomainContext,
  principal: Principal,
  organisationId: string,
  network: string,
): Promise<UnsignedCollect[]> {
  requirePermission(roleIn(principal, organisationId), 'collect_deposits');
  requireNetwork(ctx, network);
  await organisationOf(ctx, organisationId);
  const survey = await requireChain(ctx).survey(organisationId, network);
  return survey.collects.map((collect) => ({
    ...collect,
    network,
    chainId: survey.chainId,
    gasLimit: collect.gas + collect.gas / 5n,
  }));
}

function checkTxHash(txHash: string): string {
  if (!TX_HASH.test(txHash)) throw invalid('txHash must be a transaction hash (0x and 64 hex digits)');
  return txHash.toLowerCase();
}

/**
 * The page reports the hash the wallet sent (role `collect_deposits`, audited); Kassa follows it until confirmed and
 * records what it moved per session, as `kassa collect --record` does.
 */
export async function reportCollectFromDashboard(
  ctx: DomainContext,
  principal: Principal,
  organisationId: string,
  network: string,
  txHash: string,
  address: string,
): Promise<CollectProgress> {
  requirePermission(roleIn(principal, organisationId), 'collect_deposits');
  requireNetwork(ctx, network);
  const hash = checkTxHash(txHash);
  await organisationOf(ctx, organisationId);
  const chain = requireChain(ctx);
  await ctx.store.dashboard.audit({
    organisationId,
    userId: principal.userId,
    action: 'deposits.collect_sent',
    details: { network, tx_hash: hash },
    address,
  });
  const progress = await chain.progress(organisationId, network, hash);
  if (progress.state === 'unknown' || progress.state === 'pending' || progress.state === 'confirming')
    chain.follow(organisationId, network, hash);
  return progress;
}

/** Where a collect stands (role `read`); reading it records the collect once it is confirmed. */
export async function collectProgressFromDashboard(
  ctx: DomainContext,
  principal: Principal,
  organisationId: string,
  network: string,
  txHash: string,
): Promise<CollectProgress> {
  requirePermission(roleIn(principal, organisationId), 'read');
  requireNetwork(ctx, network);
  const hash = checkTxHash(txHash);
  await organisationOf(ctx, organisationId);
  return requireChain(ctx).progress(organisationId, network, hash);
}
