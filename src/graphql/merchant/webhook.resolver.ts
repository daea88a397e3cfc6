import { Arg, Authorized, Ctx, ID, Mutation, Query, Resolver } from 'type-graphql';
import { listDashboardWebhooks, redeliverFailedFromDashboard } from '../../domain/dashboard/webhooks.js';
import type { MerchantContext } from './context.js';
import { FailedWebhooksRedelivery, MerchantWebhookEndpoint } from './webhook.types.js';

/** The merchant schema's webhooks (docs/dashboard.md#webhooks): endpoints with deliveries, redeliver the failed. */
@Resolver()
export class MerchantWebhookResolver {
  @Authorized('read')
  @Query(() => [MerchantWebhookEndpoint], {
    description: "The organisation's webhook endpoints, each with its latest deliveries.",
  })
  async webhookEndpoints(
    @Arg('organisationId', () => ID) organisationId: string,
    @Ctx() { domain, principal }: MerchantContext,
  ): Promise<MerchantWebhookEndpoint[]> {
    return (await listDashboardWebhooks(domain, principal, organisationId)) as unknown as MerchantWebhookEndpoint[];
  }

  @Authorized('redeliver_webhooks')
  @Mutation(() => FailedWebhooksRedelivery, {
    description: "Sends every failed delivery to the organisation's enabled endpoints again (role support and up).",
  })
  async redeliverFailedWebhooks(
    @Arg('organisationId', () => ID) organisationId: string,
    @Ctx() { domain, principal, clientAddress }: MerchantContext,
  ): Promise<FailedWebhooksRedelivery> {
    return { deliveryIds: await redeliverFailedFromDashboard(domain, principal, organisationId, clientAddress) };
  }
}
