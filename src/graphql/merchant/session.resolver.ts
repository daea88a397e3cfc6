import { Arg, Authorized, Ctx, ID, Int, Mutation, Query, Resolver } from 'type-graphql';
import { redeliverFromDashboard } from '../../domain/dashboard/webhooks/webhook-redelivery.js';
import { listSessions, readSessionStory } from '../../domain/dashboard/session-list.js';
import type { MerchantContext } from './context.js';
import {
  DashboardViewer,
  MerchantSessionDetail,
  MerchantSessionPage,
  SessionFilterInput,
  WebhookRedelivery,
  type MerchantSession,
} from './session.types.js';

/**
 * The merchant schema's queries: each names its organisation, and `@Authorized` names the permission
 * (docs/dashboard.md#roles) that src/graphql/merchant/auth-checker.ts checks against the person's role there.
 */
@Resolver()
export class MerchantSessionResolver {
  @Query(() => DashboardViewer, { description: 'Who is signed in, and their organisations and roles.' })
  viewer(@Ctx() { principal }: MerchantContext): DashboardViewer {
    return {
      id: principal.userId,
      email: principal.email,
      organisations: principal.memberships.map((m) => ({
        id: m.organisationId,
        name: m.organisationName,
        role: m.role,
      })),
    };
  }

  @Authorized('read')
  @Query(() => MerchantSessionPage, {
    description: "A page of the organisation's sessions, newest first (keyset: pass nextCursor as after).",
  })
  async sessions(
    @Arg('organisationId', () => ID) organisationId: string,
    @Arg('filter', () => SessionFilterInput, { nullable: true }) filter: SessionFilterInput | undefined,
    @Arg('first', () => Int, { nullable: true }) first: number | undefined,
    @Arg('after', () => String, { nullable: true }) after: string | undefined,
    @Ctx() { domain, principal }: MerchantContext,
  ): Promise<MerchantSessionPage> {
    const page = await listSessions(domain, principal, organisationId, {
      filter: filter && { ...filter },
      first: first ?? undefined,
      after: after ?? undefined,
    });
    return { nodes: page.sessions as MerchantSession[], nextCursor: page.nextCursor };
  }

  @Authorized('read')
  @Query(() => MerchantSessionDetail, { description: 'One session of the organisation with its timeline.' })
  async session(
    @Arg('organisationId', () => ID) organisationId: string,
    @Arg('id', () => ID) id: string,
    @Ctx() { domain, principal }: MerchantContext,
  ): Promise<MerchantSessionDetail> {
    return (await readSessionStory(domain, principal, organisationId, id)) as unknown as MerchantSessionDetail;
  }

  @Authorized('redeliver_webhooks')
  @Mutation(() => WebhookRedelivery, {
    description: "Sends one of the organisation's webhook deliveries again, due at once (role support and up).",
  })
  async redeliverWebhook(
    @Arg('organisationId', () => ID) organisationId: string,
    @Arg('deliveryId', () => ID) deliveryId: string,
    @Ctx() { domain, principal, clientAddress }: MerchantContext,
  ): Promise<WebhookRedelivery> {
    return redeliverFromDashboard(domain, principal, organisationId, deliveryId, clientAddress);
  }
}
