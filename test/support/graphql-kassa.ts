import { createClient, type Client } from 'graphql-ws';
import WebSocket from 'ws';
import type { Test } from 'supertest';
import { expect } from 'vitest';
import type { TestKassa } from './kassa.js';

/** Helpers of the GraphQL end-to-end suites (test/e2e/graphql-*.test.ts): real HTTP and real WebSocket. */

/** Every field of the CheckoutSession type, as the hosted page would ask for it. */
export const SESSION_FIELDS = `
  sessionId status source fromPaymentLink anonymous requiresPayerIdentity identityOptions productPaymentLinkId
  totalAmountCrypto cryptoCurrency cryptoOptions { ticker id unitPriceFiat amount }
  fiatCurrency totalAmountFiat walletAddress supportedNetworks expiresAt secondsUntilExpiry overpaid
  boundTxHash chainId amountPending paymentDetected
  items { name quantity unitPrice totalPrice }`;

export const SESSION_QUERY = `query Session($id: ID!) { checkoutSession(id: $id) { ${SESSION_FIELDS} } }`;

export const BIND_MUTATION = `mutation Bind($sessionId: ID!, $input: BindTransactionInput!) {
  bindTransaction(sessionId: $sessionId, input: $input) { sessionId boundTxHash cryptoCurrency totalAmountCrypto status idempotent }
}`;

export const UPDATES_SUBSCRIPTION = `subscription Updates($id: ID!) {
  checkoutSessionUpdated(id: $id) { ${SESSION_FIELDS} transactions { txHash chainId cryptoCurrency state reason } } }`;

/** The transaction bound as `txHash` in a pushed session, if it is there yet. */
export function boundIn(session: Record<string, any> | undefined, txHash: string): Record<string, any> | undefined {
  return session?.transactions?.find((t: { txHash: string }) => t.txHash === txHash);
}

/** POST /graphql with a JSON body, as Apollo Client sends it. */
export function postGraphql(kassa: Pick<TestKassa, 'http'>, query: string, variables?: Record<string, unknown>): Test {
  return kassa.http.post('/graphql').set('Content-Type', 'application/json').send(JSON.stringify({ query, variables }));
}

/** Runs an operation that must succeed and returns its data. */
export async function graphqlData(
  kassa: Pick<TestKassa, 'http'>,
  query: string,
  variables?: Record<string, unknown>,
): Promise<Record<string, any>> {
  const response = await postGraphql(kassa, query, variables);
  expect(response.status, JSON.stringify(response.body)).toBe(200);
  expect(response.body.errors, JSON.stringify(response.body.errors)).toBeUndefined();
  return response.body.data as Record<string, any>;
}

/** Fragments that would betray internals (stack frames, source paths, driver errors). */
export const INTERNALS =
  /\bat [\w.<>]+ \(|node_modules|\.[cm]?[jt]s:\d+|Prisma|"stack"|stacktrace|ECONN|\bSELECT |\bINSERT |\bUPDATE |\bP\d{4}\b/;

/** Runs an operation that must fail with exactly one error of `code`; returns that error. */
export async function graphqlError(
  kassa: Pick<TestKassa, 'http'>,
  query: string,
  variables: Record<string, unknown> | undefined,
  code: string,
  options: { status?: number } = {},
): Promise<{ message: string; extensions: Record<string, any> }> {
  const response = await postGraphql(kassa, query, variables);
  expect(response.status, JSON.stringify(response.body)).toBe(options.status ?? 200);
  expect(response.headers['content-type']).toMatch(/^application\/(graphql-response\+)?json/);
  expect(response.body.errors, JSON.stringify(response.body)).toHaveLength(1);
  const [error] = response.body.errors;
  expect(error.extensions?.code, JSON.stringify(error)).toBe(code);
  expect(JSON.stringify(response.body)).not.toMatch(INTERNALS);
  return error;
}

/** One `next` payload of a subscription (errors as sent: formatted). */
export interface Received {
  data?: Record<string, any> | null;
  errors?: ReadonlyArray<{ message: string; extensions?: Record<string, any> }>;
}

/** A live subscription over a real WebSocket (graphql-ws protocol) with everything it received so far. */
export interface LiveSubscription {
  readonly results: Received[];
  readonly completed: Promise<void>;
  readonly closeCodes: number[];
  /** Waits until a received result matches (5 s by default), and returns it. */
  waitFor(match: (result: Received) => boolean, timeoutMs?: number): Promise<Received>;
  /** Completes this subscription only (its socket stays open). */
  unsubscribe(): void;
  /** Closes the whole socket. */
  dispose(): Promise<void>;
}

/** One graphql-ws client, one WebSocket: every `subscribe` on it shares the socket. */
export interface LiveSocket {
  readonly closeCodes: number[];
  subscribe(query: string, variables: Record<string, unknown>): LiveSubscription;
  dispose(): Promise<void>;
}

export function openSocket(kassa: Pick<TestKassa, 'url'>): LiveSocket {
  const closeCodes: number[] = [];
  const client: Client = createClient({
    url: `${kassa.url.replace(/^http/, 'ws')}/graphql`,
    webSocketImpl: WebSocket,
    retryAttempts: 0,
    lazy: true,
    on: { closed: (event) => void closeCodes.push((event as { code: number }).code) },
  });
  const dispose = () => client.dispose() as Promise<void>;
  return {
    closeCodes,
    dispose,
    subscribe(query, variables) {
      const results: Received[] = [];
      let finish!: () => void;
      let fail!: (error: unknown) => void;
      const completed = new Promise<void>((resolve, reject) => {
        finish = resolve;
        fail = reject;
      });
      completed.catch(() => {});
      const unsubscribe = client.subscribe<Record<string, any>>(
        { query, variables },
        {
          next: (result) => void results.push(result),
          error: (error) => {
            results.push({
              errors: Array.isArray(error) ? error : [{ message: String((error as Error)?.message ?? error) }],
            });
            fail(error);
          },
          complete: () => finish(),
        },
      );
      return {
        results,
        completed,
        closeCodes,
        async waitFor(match, timeoutMs = 5000) {
          const deadline = Date.now() + timeoutMs;
          for (;;) {
            const found = results.find(match);
            if (found) return found;
            if (Date.now() > deadline)
              throw new Error(`no matching subscription result within ${timeoutMs} ms; got ${JSON.stringify(results)}`);
            await new Promise((resolve) => setTimeout(resolve, 20));
          }
        },
        unsubscribe,
        dispose,
      };
    },
  };
}

/** A subscription on a socket of its own. */
export function subscribe(
  kassa: Pick<TestKassa, 'url'>,
  query: string,
  variables: Record<string, unknown>,
): LiveSubscription {
  return openSocket(kassa).subscribe(query, variables);
}

/**
 * The public REST view (snake_case) a CheckoutSession of GraphQL must equal, field by field,
 * except the payer's identity: GraphQL leaves out `user` and `payer_wallet_address` (anyone
 * with the session id can read it; see withoutPayerIdentity).
 */
export function restViewOf(session: Record<string, any>): Record<string, any> {
  return {
    session_id: session.sessionId,
    status: String(session.status).toLowerCase(),
    source: session.source,
    from_payment_link: session.fromPaymentLink,
    anonymous: session.anonymous,
    requires_payer_identity: session.requiresPayerIdentity,
    identity_options: session.identityOptions,
    product_payment_link_id: session.productPaymentLinkId,
    total_amount_crypto: session.totalAmountCrypto,
    crypto_currency: session.cryptoCurrency,
    crypto_options: session.cryptoOptions.map((o: Record<string, string>) => ({
      ticker: o.ticker,
      id: o.id,
      unit_price_fiat: o.unitPriceFiat,
      amount: o.amount,
    })),
    fiat_currency: session.fiatCurrency,
    total_amount_fiat: session.totalAmountFiat,
    wallet_address: session.walletAddress,
    supported_networks: session.supportedNetworks,
    expires_at: session.expiresAt,
    overpaid: session.overpaid,
    bound_tx_hash: session.boundTxHash,
    chain_id: session.chainId,
  };
}

/** A REST public view without what GraphQL does not show: the merchant's customer (`user`) and the payer wallet. */
export function withoutPayerIdentity(view: Record<string, any>): Record<string, any> {
  const { user: _user, payer_wallet_address: _payer, ...rest } = view;
  return rest;
}

/** The public fields GraphQL shares with REST. */
export const GRAPHQL_PUBLIC_FIELDS = ['user', 'payer_wallet_address'] as const;
