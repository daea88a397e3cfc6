import { Router } from 'express';
import { execute, GraphQLError, parse, validate, type DocumentNode } from 'graphql';
import type { DomainContext } from '../../domain/context.js';
import { principalOf, requireCsrfToken, requireSameOrigin } from '../../http/dashboard-session.js';
import type { DashboardCookieOptions } from '../../http/dashboard-session.js';
import { methodNotAllowed } from '../../http/error-handler.js';
import { clientAddressOf } from '../../http/client-address.js';
import { HttpError } from '../../http/http-error.js';
import { rawBytes } from '../../http/json-body.js';
import { formatGraphqlError } from '../errors.js';
import { ApolloArmor } from '@escape.tech/graphql-armor';
import { specifiedRules } from 'graphql';
import { GRAPHQL_LIMITS, GRAPHQL_PARSE_OPTIONS } from '../protection.js';
import type { MerchantContext } from './context.js';
import type { WebhookPost } from '../../domain/dashboard/webhooks/webhooks.js';
import { merchantSchema } from './schema.js';

export const MERCHANT_GRAPHQL_PATH = '/dashboard/graphql';

/** Only these keys; anything else in the body is a client bug worth saying so. */
interface GraphqlRequest {
  readonly query: string;
  readonly variables?: Record<string, unknown>;
  readonly operationName?: string;
}

function readRequest(body: unknown): GraphqlRequest | string {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return 'The body must be one JSON object';
  const { query, variables, operationName, ...rest } = body as Record<string, unknown>;
  if (Object.keys(rest).length > 0) return `Unknown request property ${Object.keys(rest)[0]}`;
  if (typeof query !== 'string') return 'query must be a string';
  if (variables !== undefined && variables !== null && (typeof variables !== 'object' || Array.isArray(variables)))
    return 'variables must be an object';
  if (operationName !== undefined && operationName !== null && typeof operationName !== 'string')
    return 'operationName must be a string';
  return {
    query,
    variables: (variables ?? undefined) as Record<string, unknown> | undefined,
    operationName: operationName ?? undefined,
  };
}

/** The JSON body as GraphQL reads it (numbers as numbers: variables are GraphQL's to coerce). */
function readBody(type: string | undefined, bytes: Buffer): unknown {
  if (!type || !/^application\/json\s*(;|$)/i.test(type))
    throw new HttpError(415, 'Content-Type must be application/json');
  try {
    return JSON.parse(bytes.toString('utf8'));
  } catch {
    throw new HttpError(400, ['Malformed JSON in the request body']);
  }
}

/**
 * The payer's limits on depth, aliases, directives and tokens (src/graphql/protection.ts); the cost limit is
 * MERCHANT_MAX_COST, as the dashboard's session page asks for a session with its whole timeline in one query.
 */
export const MERCHANT_MAX_COST = 5000;

function merchantValidationRules() {
  const armor = new ApolloArmor({
    maxDepth: { n: GRAPHQL_LIMITS.maxDepth, exposeLimits: true },
    maxAliases: { n: GRAPHQL_LIMITS.maxAliases, exposeLimits: true },
    costLimit: { maxCost: MERCHANT_MAX_COST, exposeLimits: true },
    maxDirectives: { n: GRAPHQL_LIMITS.maxDirectives, exposeLimits: true },
    maxTokens: { enabled: false },
    blockFieldSuggestion: { enabled: false },
  });
  return [...specifiedRules, ...armor.protect().validationRules];
}

function refusal(code: string, message: string) {
  return { errors: [new GraphQLError(message, { extensions: { code } }).toJSON()] };
}

/**
 * The merchant GraphQL API (docs/dashboard.md#merchant-graphql): session cookie, own origin and CSRF token are checked
 * before GraphQL runs (REST's 401 and 403); each operation checks the role in its organisation (schema.ts).
 */
export function merchantGraphqlRouter(
  ctx: DomainContext,
  options: DashboardCookieOptions,
  postWebhook?: WebhookPost,
): Router {
  const router = Router();
  const rules = merchantValidationRules();
  router.post(MERCHANT_GRAPHQL_PATH, async (req, res) => {
    requireSameOrigin(req, ctx.checkoutBaseUrl);
    const principal = await principalOf(ctx, req, options);
    requireCsrfToken(req, principal, {});
    const request = readRequest(readBody(req.headers['content-type'], rawBytes(req)));
    if (typeof request === 'string') return res.status(400).json(refusal('BAD_REQUEST', request));
    const schema = await merchantSchema();
    let document: DocumentNode;
    try {
      document = parse(request.query, GRAPHQL_PARSE_OPTIONS);
    } catch (error) {
      return res.status(400).json(refusal('GRAPHQL_PARSE_FAILED', (error as Error).message));
    }
    const problems = validate(schema, document, rules);
    if (problems.length > 0)
      return res.status(400).json({
        errors: problems.map((problem) => ({ ...problem.toJSON(), extensions: { code: 'GRAPHQL_VALIDATION_FAILED' } })),
      });
    const contextValue: MerchantContext = { domain: ctx, principal, clientAddress: clientAddressOf(req), postWebhook };
    const result = await execute({
      schema,
      document,
      variableValues: request.variables,
      operationName: request.operationName,
      contextValue,
    });
    const errorOptions = { development: false, logError: (error: unknown) => req.log?.error({ err: error }) };
    res.status(200).json({
      ...(result.errors
        ? { errors: result.errors.map((error) => formatGraphqlError(error.toJSON(), error, errorOptions)) }
        : {}),
      data: result.data ?? null,
    });
  });
  router.all(MERCHANT_GRAPHQL_PATH, methodNotAllowed(['POST']));
  return router;
}
