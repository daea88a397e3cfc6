import { Arg, Args, Ctx, FieldResolver, ID, Mutation, Query, Resolver, Root, Subscription } from 'type-graphql';
import type { SubscribeResolverData } from 'type-graphql';
import { bindPayerTransaction } from '../domain/payments/bind-transaction.js';
import type { CheckoutSession as DomainSession } from '../domain/sessions/checkout-session.js';
import { boundTransactionsOf, checkSessionId, getCheckoutSession } from '../domain/sessions/get-checkout-session.js';
import type { GraphqlContext } from './context.js';
import { BindResult, BindTransactionArgs } from './bind-transaction.types.js';
import { BoundTransaction, CheckoutSession } from './checkout-session.types.js';
import { toGraphqlBindResult, toGraphqlSession, toGraphqlTransactions } from './views.js';

/**
 * The payer's operations; each translates and calls the domain function REST calls. Domain
 * errors are mapped once for every resolver, in formatGraphqlError (src/graphql/errors.ts).
 */
@Resolver(() => CheckoutSession)
export class CheckoutSessionResolver {
  @Query(() => CheckoutSession, {
    nullable: true,
    description:
      'A checkout session by its id, as the payer sees it. Errors: BAD_USER_INPUT for a malformed id, NOT_FOUND for ' +
      'an unknown one.',
  })
  async checkoutSession(
    @Arg('id', () => ID) id: string,
    @Ctx() { domain, trace }: GraphqlContext,
  ): Promise<CheckoutSession> {
    const session = await getCheckoutSession(domain, id);
    const now = domain.clock();
    if (trace) {
      trace.sessions.push(session);
      trace.readAt ??= now;
    }
    return toGraphqlSession(session, domain, now);
  }

  @Mutation(() => BindResult, {
    description:
      "Binds the payer's broadcast transaction to the session and locks its crypto currency " +
      '(docs/api/rest.md#bind-rules): the same rules and messages as REST POST /checkout-sessions/{id}/bind-tx. ' +
      'Binding the same transaction again answers idempotent: true.',
  })
  async bindTransaction(
    @Args(() => BindTransactionArgs) { sessionId, input }: BindTransactionArgs,
    @Ctx() { domain, clientAddress }: GraphqlContext,
  ): Promise<BindResult> {
    // Counted here, as each bind runs, with its resolved arguments: aliases and variable defaults count as they
    // execute.
    const result = await bindPayerTransaction(domain, { sessionId, clientAddress }, () => ({
      tx_hash: input.txHash,
      chain_id: input.chainId,
      crypto_currency: input.cryptoCurrency,
      payer_wallet_address: input.payerWalletAddress,
    }));
    return toGraphqlBindResult(result);
  }

  @Subscription(() => CheckoutSession, {
    description:
      'The session now, then again whenever its status, payments or binding change (whichever Kassa instance changed ' +
      'it). Errors as for checkoutSession.',
    subscribe: ({ args, context }: SubscribeResolverData<unknown, { id: string }, GraphqlContext>) =>
      context.updates.subscribe(checkSessionId(args.id)),
  })
  checkoutSessionUpdated(
    @Root() session: DomainSession,
    @Arg('id', () => ID) _id: string,
    @Ctx() { domain }: GraphqlContext,
  ): CheckoutSession {
    return toGraphqlSession(session, domain, domain.clock());
  }

  @FieldResolver(() => [BoundTransaction], {
    description:
      'The transactions bound to this session, oldest first, with what Kassa found: a rejected one says why.',
  })
  async transactions(@Root() session: CheckoutSession, @Ctx() { domain }: GraphqlContext): Promise<BoundTransaction[]> {
    return toGraphqlTransactions(await boundTransactionsOf(domain, session.sessionId));
  }
}
