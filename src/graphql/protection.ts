import { ApolloArmor } from '@escape.tech/graphql-armor';
import { NoSchemaIntrospectionCustomRule, specifiedRules, type ParseOptions, type ValidationRule } from 'graphql';

/**
 * Limits on one GraphQL operation over HTTP and WebSocket (graphql-armor's rules): the hosted page's largest query has
 * depth 4, no aliases and a cost of about 130. Apollo Sandbox's introspection is exempt from depth and cost.
 */
export const GRAPHQL_LIMITS = {
  maxDepth: 10,
  maxAliases: 15,
  maxCost: 1000,
  maxDirectives: 20,
  maxTokens: 2000,
} as const;

/**
 * How every operation is parsed: GraphQL's own parser stops at the token limit with a syntax error (HTTP 400), not
 * graphql-armor's max-tokens plugin, whose second parse in `parsingDidStart` turns every syntax error into a 500.
 */
export const GRAPHQL_PARSE_OPTIONS: ParseOptions = { maxLexicalTokens: GRAPHQL_LIMITS.maxTokens };

export interface GraphqlProtection {
  /** Apollo plugins graphql-armor needs (the field-suggestion mask). */
  readonly plugins: ReturnType<ApolloArmor['protect']>['plugins'];
  /** Added to GraphQL's own rules (specifiedRules) for every operation. */
  readonly validationRules: ValidationRule[];
  readonly introspection: boolean;
}

export function graphqlProtection(options: { introspection: boolean }): GraphqlProtection {
  const armor = new ApolloArmor({
    maxDepth: { n: GRAPHQL_LIMITS.maxDepth, exposeLimits: true },
    maxAliases: { n: GRAPHQL_LIMITS.maxAliases, exposeLimits: true },
    costLimit: { maxCost: GRAPHQL_LIMITS.maxCost, exposeLimits: true },
    maxDirectives: { n: GRAPHQL_LIMITS.maxDirectives, exposeLimits: true },
    // The token limit is GraphQL's own parse option (GRAPHQL_PARSE_OPTIONS above).
    maxTokens: { enabled: false },
    // "Did you mean …" helps someone exploring the schema; without introspection it would leak it.
    blockFieldSuggestion: { enabled: !options.introspection },
  });
  const { plugins, validationRules } = armor.protect();
  return { plugins, validationRules, introspection: options.introspection };
}

/**
 * Every rule a WebSocket operation is validated with. Over HTTP Apollo adds
 * GraphQL's own rules, and its introspection rule when introspection is off.
 */
export function allValidationRules(protection: GraphqlProtection): ValidationRule[] {
  return [
    ...specifiedRules,
    ...protection.validationRules,
    ...(protection.introspection ? [] : [NoSchemaIntrospectionCustomRule]),
  ];
}
