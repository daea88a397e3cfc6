import type { EnvReader } from './env-reader.js';

export interface GraphqlConfig {
  /** GraphQL schema introspection (KASSA_GRAPHQL_INTROSPECTION); on outside production by default. */
  readonly graphqlIntrospection: boolean;
  /** Apollo Sandbox landing page on GET /graphql (KASSA_GRAPHQL_SANDBOX); on outside production by default. */
  readonly graphqlSandbox: boolean;
  /**
   * Most GraphQL WebSocket connections one instance holds (KASSA_GRAPHQL_MAX_CONNECTIONS); more are refused with 503.
   */
  readonly graphqlMaxConnections: number;
  /**
   * Most of them from one client address (KASSA_GRAPHQL_MAX_CONNECTIONS_PER_ADDRESS); more are refused with 429, so
   * one address cannot hold every slot.
   */
  readonly graphqlMaxConnectionsPerAddress: number;
}

export function readGraphqlConfig(read: EnvReader, production: boolean): GraphqlConfig {
  const graphqlSandbox = read.boolean('KASSA_GRAPHQL_SANDBOX', !production);
  // Sandbox explores the schema by introspection, so enabling it enables introspection unless refused outright.
  const graphqlIntrospection = read.boolean('KASSA_GRAPHQL_INTROSPECTION', !production || graphqlSandbox);
  if (graphqlSandbox && !graphqlIntrospection) {
    read.problems.push(
      'KASSA_GRAPHQL_SANDBOX needs KASSA_GRAPHQL_INTROSPECTION: Apollo Sandbox reads the schema by introspection',
    );
  }
  const graphqlMaxConnections = read.integer('KASSA_GRAPHQL_MAX_CONNECTIONS', 1000, 1, 1_000_000);
  const graphqlMaxConnectionsPerAddress = read.integer('KASSA_GRAPHQL_MAX_CONNECTIONS_PER_ADDRESS', 50, 1, 1_000_000);
  return { graphqlSandbox, graphqlIntrospection, graphqlMaxConnections, graphqlMaxConnectionsPerAddress };
}
