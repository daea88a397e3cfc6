import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { SCHEMA_FILE_PATH } from '../support/graphql-schema-file.js';
import { printGraphqlSchema } from '../../src/graphql/schema.js';

/** The committed schema.graphql is what the code builds; integrators and docs/api/graphql.md rely on it. */
describe('schema.graphql', () => {
  it('matches the schema built from src/graphql', async () => {
    const committed = readFileSync(SCHEMA_FILE_PATH, 'utf8');
    const built = await printGraphqlSchema();
    if (built !== committed) {
      // toBe shows the diff; the message says how to fix it.
      expect(
        built,
        'schema.graphql is out of date with src/graphql: run `npm run schema:graphql` and commit schema.graphql',
      ).toBe(committed);
    }
  });

  it('has the operations, enums and scalars of the issue', async () => {
    const sdl = await printGraphqlSchema();
    expect(sdl).toContain('checkoutSession(id: ID!): CheckoutSession\n');
    expect(sdl).toContain('networks: [Network!]!');
    expect(sdl).toContain('bindTransaction(sessionId: ID!, input: BindTransactionInput!): BindResult!');
    expect(sdl).toContain('checkoutSessionUpdated(id: ID!): CheckoutSession!');
    expect(sdl).toMatch(
      /enum CheckoutSessionStatus \{\s+PENDING\s+WAITING_PAYMENT\s+PARTIAL\s+PAID\s+EXPIRED\s+FAILED\s+\}/,
    );
    expect(sdl).toMatch(/enum CryptoTicker \{\s+BTC\s+USDT\s+BNB\s+SOL\s+USDC\s+ETH\s+\}/);
    expect(sdl).toContain('scalar Decimal');
    expect(sdl).toContain('scalar DateTime');
    for (const hidden of ['organisationId', 'ownerUserId', 'productId', 'metadata', 'rpcUrls'])
      expect(sdl).not.toContain(hidden);
  });
});
