import { getMetadataStorage } from 'type-graphql';
import { describe, expect, it } from 'vitest';
import { printGraphqlSchema } from '../../src/graphql/schema.js';
import { merchantSchema, printMerchantSchema } from '../../src/graphql/merchant/schema.js';
import { MerchantSessionResolver } from '../../src/graphql/merchant/session.resolver.js';
import { MerchantWebhookResolver } from '../../src/graphql/merchant/webhook.resolver.js';
import { MerchantDepositResolver } from '../../src/graphql/merchant/deposit.resolver.js';
import { MerchantRefundResolver } from '../../src/graphql/merchant/refund.resolver.js';

/** The merchant schema (docs/dashboard.md#merchant-graphql) is built apart from the payer's, and guarded. */
describe('the merchant GraphQL schema', () => {
  it("shares no type or field with the payer's beyond the enums and scalars", async () => {
    const publicSdl = await printGraphqlSchema();
    const merchantSdl = await printMerchantSchema();
    for (const name of [
      'MerchantSession',
      'TimelineEntry',
      'SessionFilterInput',
      'DashboardViewer',
      'payerEmail',
      'MerchantWebhookEndpoint',
      'redeliverFailedWebhooks',
      'MerchantRefund',
    ])
      expect(publicSdl).not.toContain(name);
    expect(merchantSdl).not.toContain('bindTransaction');
    expect(merchantSdl).not.toContain('checkoutSession(');
  });

  it('every operation that names an organisation is @Authorized with a permission', async () => {
    const schema = await merchantSchema();
    const fields = { ...schema.getQueryType()!.getFields(), ...schema.getMutationType()!.getFields() };
    const authorized = new Set(
      getMetadataStorage()
        .authorizedFields.filter((field) =>
          [MerchantSessionResolver, MerchantWebhookResolver, MerchantDepositResolver, MerchantRefundResolver].includes(
            field.target as never,
          ),
        )
        .map((field) => `${field.fieldName}:${field.roles.join(',')}`),
    );
    const withOrganisation = Object.values(fields).filter((field) =>
      field.args.some((arg) => arg.name === 'organisationId'),
    );
    const permissions: Record<string, string> = {
      session: 'read',
      sessions: 'read',
      redeliverWebhook: 'redeliver_webhooks',
      webhookEndpoints: 'read',
      redeliverFailedWebhooks: 'redeliver_webhooks',
      webhookDelivery: 'read',
      addWebhookEndpoint: 'manage_webhooks',
      setWebhookEndpointEnabled: 'manage_webhooks',
      rotateWebhookSecret: 'manage_webhooks',
      sendWebhookTestEvent: 'manage_webhooks',
      deposits: 'read',
      depositCollect: 'read',
      setReceivingMode: 'manage_wallet',
      prepareDepositCollect: 'collect_deposits',
      reportDepositCollect: 'collect_deposits',
      refunds: 'read',
      refund: 'read',
      createRefund: 'manage_refunds',
      cancelRefund: 'manage_refunds',
    };
    expect(withOrganisation.map((field) => field.name).sort()).toEqual(Object.keys(permissions).sort());
    for (const field of withOrganisation) expect(authorized).toContain(`${field.name}:${permissions[field.name]}`);
  });
});
