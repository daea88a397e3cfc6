import 'reflect-metadata';
import { printSchema, type GraphQLSchema } from 'graphql';
import { buildSchema, type AuthChecker } from 'type-graphql';
import { roleIn } from '../../domain/dashboard/sign-in.js';
import { requirePermission, PERMISSIONS, type DashboardPermission } from '../../domain/dashboard/roles.js';
import { invalid } from '../../domain/shared/errors.js';
import { Decimal } from '../../domain/shared/money.js';
import { DateTimeScalar, DecimalScalar } from '../scalars.js';
import type { MerchantContext } from './context.js';
import { MerchantSessionResolver } from './session.resolver.js';
import { MerchantWebhookResolver } from './webhook.resolver.js';
import { MerchantDepositResolver } from './deposit.resolver.js';
import { MerchantRefundResolver, MerchantSessionRefundsResolver } from './refund.resolver.js';

/**
 * `@Authorized(permission)`: the person's role in the organisation the operation names (its `organisationId`
 * argument) must have the permission. Not a member: NOT_FOUND, as for an organisation that does not exist.
 */
export const merchantAuthChecker: AuthChecker<MerchantContext> = ({ args, context }, permissions) => {
  const organisationId = (args as { organisationId?: unknown }).organisationId;
  if (typeof organisationId !== 'string') throw invalid('organisationId is required');
  const role = roleIn(context.principal, organisationId);
  for (const permission of permissions) {
    if (!(permission in PERMISSIONS)) throw new Error(`unknown permission ${permission}`);
    requirePermission(role, permission as DashboardPermission);
  }
  return true;
};

let built: Promise<GraphQLSchema> | null = null;

/**
 * The merchant schema served at /dashboard/graphql, built apart from the payer's (src/graphql/schema.ts): no type
 * or field of one is reachable from the other.
 */
export function merchantSchema(): Promise<GraphQLSchema> {
  built ??= buildSchema({
    resolvers: [
      MerchantSessionResolver,
      MerchantWebhookResolver,
      MerchantDepositResolver,
      MerchantRefundResolver,
      MerchantSessionRefundsResolver,
    ],
    scalarsMap: [
      { type: Date, scalar: DateTimeScalar },
      { type: Decimal, scalar: DecimalScalar },
    ],
    authChecker: merchantAuthChecker,
    validate: false,
  });
  return built;
}

export async function printMerchantSchema(): Promise<string> {
  return `${printSchema(await merchantSchema())}\n`;
}
