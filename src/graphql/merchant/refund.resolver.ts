import { Arg, Authorized, Ctx, FieldResolver, ID, Mutation, Query, Resolver, Root } from 'type-graphql';
import {
  cancelRefundFromDashboard,
  createRefundFromDashboard,
  listRefundsForDashboard,
  readRefundForDashboard,
} from '../../domain/dashboard/merchant-admin.js';
import type { Refund } from '../../domain/refunds/refund.js';
import { claimUrl } from '../../domain/refunds/refund.js';
import type { MerchantContext } from './context.js';
import { CreateRefundInput, MerchantRefund } from './refund.types.js';
import { MerchantSessionDetail } from './session.types.js';

/** The REST refund's fields in camelCase. */
function toMerchantRefund(refund: Refund, checkoutBaseUrl: string): MerchantRefund {
  return {
    id: refund.id,
    sessionId: refund.sessionId,
    kind: refund.kind as MerchantRefund['kind'],
    basis: refund.basis as MerchantRefund['basis'],
    status: refund.status as MerchantRefund['status'],
    network: refund.network,
    chainId: refund.chainId,
    cryptoCurrency: refund.asset as MerchantRefund['cryptoCurrency'],
    tokenAddress: refund.tokenAddress,
    amount: refund.amount,
    baseUnits: refund.baseUnits.toString(),
    fiatCurrency: refund.fiat?.currency ?? null,
    amountFiat: refund.fiat?.amountFiat ?? null,
    unitPriceFiat: refund.fiat?.unitPriceFiat ?? null,
    destination: refund.destination,
    destinationSource: refund.destinationSource as MerchantRefund['destinationSource'],
    proofAddress: refund.proof?.address ?? null,
    claimUrl: claimUrl(refund, checkoutBaseUrl),
    claimExpiresAt: refund.claimExpiresAt,
    txHash: refund.transfer.txHash,
    blockNumber: refund.transfer.blockNumber?.toString() ?? null,
    confirmations: refund.transfer.confirmations,
    failureReason: refund.failureReason,
    note: refund.note,
    createdAt: refund.createdAt,
    updatedAt: refund.updatedAt,
  };
}

/** Refunds on the merchant schema (docs/api/refunds.md#graphql): reading needs `read`, changing `manage_refunds`. */
@Resolver()
export class MerchantRefundResolver {
  @Authorized('read')
  @Query(() => [MerchantRefund], { description: "A session's refunds, oldest first." })
  async refunds(
    @Arg('organisationId', () => ID) organisationId: string,
    @Arg('sessionId', () => ID) sessionId: string,
    @Ctx() { domain, principal }: MerchantContext,
  ): Promise<MerchantRefund[]> {
    const refunds = await listRefundsForDashboard(domain, principal, organisationId, sessionId);
    return refunds.map((refund) => toMerchantRefund(refund, domain.checkoutBaseUrl));
  }

  @Authorized('read')
  @Query(() => MerchantRefund, { description: "One refund; another organisation's: NOT_FOUND." })
  async refund(
    @Arg('organisationId', () => ID) organisationId: string,
    @Arg('id', () => ID) id: string,
    @Ctx() { domain, principal }: MerchantContext,
  ): Promise<MerchantRefund> {
    return toMerchantRefund(
      await readRefundForDashboard(domain, principal, organisationId, id),
      domain.checkoutBaseUrl,
    );
  }

  @Authorized('manage_refunds')
  @Mutation(() => MerchantRefund, { description: 'Refunds a session, as POST /checkout-sessions/:id/refunds.' })
  async createRefund(
    @Arg('organisationId', () => ID) organisationId: string,
    @Arg('sessionId', () => ID) sessionId: string,
    @Arg('input', () => CreateRefundInput) input: CreateRefundInput,
    @Ctx() { domain, principal, clientAddress }: MerchantContext,
  ): Promise<MerchantRefund> {
    const refund = await createRefundFromDashboard(
      domain,
      principal,
      organisationId,
      sessionId.toLowerCase(),
      {
        kind: input.kind,
        basis: input.basis ?? undefined,
        amount: input.amount ?? undefined,
        amountFiat: input.amountFiat ?? undefined,
        cryptoCurrency: input.cryptoCurrency ?? undefined,
        network: input.network ?? undefined,
        destination: input.destination ?? undefined,
        claimExpiresInMinutes: input.claimExpiresInMinutes ?? undefined,
        note: input.note ?? undefined,
      },
      clientAddress,
    );
    return toMerchantRefund(refund, domain.checkoutBaseUrl);
  }

  @Authorized('manage_refunds')
  @Mutation(() => MerchantRefund, { description: 'Cancels a refund not yet sent.' })
  async cancelRefund(
    @Arg('organisationId', () => ID) organisationId: string,
    @Arg('id', () => ID) id: string,
    @Ctx() { domain, principal, clientAddress }: MerchantContext,
  ): Promise<MerchantRefund> {
    const refund = await cancelRefundFromDashboard(domain, principal, organisationId, id, clientAddress);
    return toMerchantRefund(refund, domain.checkoutBaseUrl);
  }
}

/** A session's refunds on its detail (the `session` query checked the role already). */
@Resolver(() => MerchantSessionDetail)
export class MerchantSessionRefundsResolver {
  @FieldResolver(() => [MerchantRefund], { description: "The session's refunds, oldest first." })
  async refunds(@Root() session: MerchantSessionDetail, @Ctx() { domain }: MerchantContext): Promise<MerchantRefund[]> {
    const refunds = await domain.store.refunds.listOfSession(session.id);
    return refunds.map((refund) => toMerchantRefund(refund, domain.checkoutBaseUrl));
  }
}
