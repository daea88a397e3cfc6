import { Arg, Authorized, Ctx, ID, Mutation, Query, Resolver } from 'type-graphql';
import {
  collectProgressFromDashboard,
  prepareCollectFromDashboard,
  readDeposits,
  reportCollectFromDashboard,
  setReceivingModeFromDashboard,
} from '../../domain/dashboard/deposits/deposits.js';
import type { CollectProgress as Progress } from '../../domain/dashboard/deposits/deposit-ports.js';
import type { MerchantContext } from './context.js';
import { CollectProgress, Deposits, UnsignedCollect } from './deposit.types.js';

const progressView = (progress: Progress): CollectProgress => ({
  ...progress,
  blockNumber: progress.blockNumber === null ? null : progress.blockNumber.toString(),
  collected: progress.collected.map((item) => ({ ...item })),
});

/** The merchant schema's deposits (docs/dashboard.md#deposits-and-collecting): balances, mode, collects. */
@Resolver()
export class MerchantDepositResolver {
  @Authorized('read')
  @Query(() => Deposits, {
    description: 'The receiving mode and, per network, what waits at the deposit addresses (read on chain).',
  })
  async deposits(
    @Arg('organisationId', () => ID) organisationId: string,
    @Ctx() { domain, principal }: MerchantContext,
  ): Promise<Deposits> {
    const overview = await readDeposits(domain, principal, organisationId);
    return {
      receivingMode: overview.receivingMode,
      networks: overview.networks.map((network) => ({
        ...network,
        balances: network.balances.map((balance) => ({ ...balance, baseUnits: balance.baseUnits.toString() })),
        estimatedGas: network.estimatedGas.toString(),
      })),
    };
  }

  @Authorized('manage_wallet')
  @Mutation(() => String, {
    description: 'Sets the receiving mode (deposit or shared) for sessions created from now on (owner); audited.',
  })
  async setReceivingMode(
    @Arg('organisationId', () => ID) organisationId: string,
    @Arg('mode', () => String) mode: string,
    @Ctx() { domain, principal, clientAddress }: MerchantContext,
  ): Promise<string> {
    return setReceivingModeFromDashboard(domain, principal, organisationId, mode, clientAddress);
  }

  @Authorized('collect_deposits')
  @Mutation(() => [UnsignedCollect], {
    description: "The collect transactions for the merchant's wallet to sign and send (admin and owner).",
  })
  async prepareDepositCollect(
    @Arg('organisationId', () => ID) organisationId: string,
    @Arg('network', () => String) network: string,
    @Ctx() { domain, principal }: MerchantContext,
  ): Promise<UnsignedCollect[]> {
    const collects = await prepareCollectFromDashboard(domain, principal, organisationId, network);
    return collects.map((collect) => ({
      network: collect.network,
      chainId: collect.chainId,
      destination: collect.destination,
      sessionIds: [...collect.sessionIds],
      to: collect.to,
      data: collect.data,
      value: '0x0',
      gas: `0x${collect.gasLimit.toString(16)}`,
    }));
  }

  @Authorized('collect_deposits')
  @Mutation(() => CollectProgress, {
    description: 'Reports a collect the wallet sent; Kassa follows it until confirmed and records it (audited).',
  })
  async reportDepositCollect(
    @Arg('organisationId', () => ID) organisationId: string,
    @Arg('network', () => String) network: string,
    @Arg('txHash', () => String) txHash: string,
    @Ctx() { domain, principal, clientAddress }: MerchantContext,
  ): Promise<CollectProgress> {
    return progressView(
      await reportCollectFromDashboard(domain, principal, organisationId, network, txHash, clientAddress),
    );
  }

  @Authorized('read')
  @Query(() => CollectProgress, { description: 'Where a collect stands; recorded once confirmed.' })
  async depositCollect(
    @Arg('organisationId', () => ID) organisationId: string,
    @Arg('network', () => String) network: string,
    @Arg('txHash', () => String) txHash: string,
    @Ctx() { domain, principal }: MerchantContext,
  ): Promise<CollectProgress> {
    return progressView(await collectProgressFromDashboard(domain, principal, organisationId, network, txHash));
  }
}
