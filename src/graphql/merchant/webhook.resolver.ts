import { Arg, Authorized, Ctx, ID, Mutation, Query, Resolver } from 'type-graphql';
import {
  addWebhookFromDashboard,
  listDashboardWebhooks,
  readDeliveryFromDashboard,
  redeliverFailedFromDashboard,
  rotateWebhookSecretFromDashboard,
  sendTestEventFromDashboard,
  setWebhookEnabledFromDashboard,
  type DashboardResponse,
} from '../../domain/dashboard/webhooks/webhooks.js';
import { unavailable } from '../../domain/shared/errors.js';
import type { MerchantContext } from './context.js';
import {
  FailedWebhooksRedelivery,
  MerchantWebhookDeliveryDetail,
  MerchantWebhookEndpoint,
  MerchantWebhookEndpointChange,
  MerchantWebhookTestResult,
} from './webhook.types.js';

/** The answer's headers as a list of { name, value }, as the schema gives them. */
function withHeaderList<T extends DashboardResponse>(kept: T) {
  const headers = kept.responseHeaders;
  return {
    ...kept,
    responseHeaders: headers ? Object.entries(headers).map(([name, value]) => ({ name, value })) : null,
  };
}

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

  @Authorized('read')
  @Query(() => MerchantWebhookDeliveryDetail, {
    description: "One delivery with its request body and every attempt's answer; another organisation's: NOT_FOUND.",
  })
  async webhookDelivery(
    @Arg('organisationId', () => ID) organisationId: string,
    @Arg('id', () => ID) id: string,
    @Ctx() { domain, principal }: MerchantContext,
  ): Promise<MerchantWebhookDeliveryDetail> {
    const delivery = await readDeliveryFromDashboard(domain, principal, organisationId, id);
    return { ...delivery, attempts: delivery.attempts.map(withHeaderList) } as MerchantWebhookDeliveryDetail;
  }

  @Authorized('manage_webhooks')
  @Mutation(() => MerchantWebhookEndpointChange, {
    description: 'Adds an endpoint (role developer and up); its signing secret is shown only in this answer.',
  })
  async addWebhookEndpoint(
    @Arg('organisationId', () => ID) organisationId: string,
    @Arg('url', () => String) url: string,
    @Arg('events', () => [String], { nullable: true, description: 'Empty or absent: every event.' })
    events: string[] | undefined,
    @Ctx() { domain, principal, clientAddress }: MerchantContext,
  ): Promise<MerchantWebhookEndpointChange> {
    const change = await addWebhookFromDashboard(
      domain,
      principal,
      organisationId,
      { url, events: events ?? [] },
      clientAddress,
    );
    return change as MerchantWebhookEndpointChange;
  }

  @Authorized('manage_webhooks')
  @Mutation(() => MerchantWebhookEndpointChange, {
    description: 'Disables or enables an endpoint (role developer and up).',
  })
  async setWebhookEndpointEnabled(
    @Arg('organisationId', () => ID) organisationId: string,
    @Arg('id', () => ID) id: string,
    @Arg('enabled', () => Boolean) enabled: boolean,
    @Ctx() { domain, principal, clientAddress }: MerchantContext,
  ): Promise<MerchantWebhookEndpointChange> {
    const change = await setWebhookEnabledFromDashboard(domain, principal, organisationId, id, enabled, clientAddress);
    return change as MerchantWebhookEndpointChange;
  }

  @Authorized('manage_webhooks')
  @Mutation(() => MerchantWebhookEndpointChange, {
    description: 'Issues a new signing secret, shown only in this answer; the old one signs too for the overlap.',
  })
  async rotateWebhookSecret(
    @Arg('organisationId', () => ID) organisationId: string,
    @Arg('id', () => ID) id: string,
    @Ctx() { domain, principal, clientAddress }: MerchantContext,
  ): Promise<MerchantWebhookEndpointChange> {
    const change = await rotateWebhookSecretFromDashboard(domain, principal, organisationId, id, clientAddress);
    return change as MerchantWebhookEndpointChange;
  }

  @Authorized('manage_webhooks')
  @Mutation(() => MerchantWebhookTestResult, {
    description: 'Sends the endpoint a signed test event (type kassa.test) at once and answers what it replied.',
  })
  async sendWebhookTestEvent(
    @Arg('organisationId', () => ID) organisationId: string,
    @Arg('id', () => ID) id: string,
    @Ctx() { domain, principal, clientAddress, postWebhook }: MerchantContext,
  ): Promise<MerchantWebhookTestResult> {
    if (!postWebhook) throw unavailable('This Kassa sends no webhooks');
    return withHeaderList(
      await sendTestEventFromDashboard(domain, principal, organisationId, id, postWebhook, clientAddress),
    );
  }
}
