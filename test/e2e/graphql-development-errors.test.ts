import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestKassa, type TestKassa } from '../support/kassa.js';
import { INTERNALS, SESSION_QUERY, postGraphql } from '../support/graphql-kassa.js';

/**
 * `npm start` runs in development (KASSA_ENV's default): GraphQL errors there keep their messages but never carry a
 * stack trace (DESIGN's non-negotiable: never a stack trace), as REST never does in any mode. Over real HTTP.
 */

let kassa: TestKassa;

beforeAll(async () => {
  kassa = await startTestKassa({
    env: { KASSA_ENV: 'development', KASSA_DEMO: 'false', KASSA_SANDBOX: 'false', KASSA_NETWORKS: 'local' },
  });
});
afterAll(() => kassa?.close());

describe('GraphQL errors in development', () => {
  it('an unknown session: NOT_FOUND with its message, no stack trace', async () => {
    const response = await postGraphql(kassa, SESSION_QUERY, { id: '7d444840-9dc0-11d1-b245-5ffdce74fad2' });
    expect(response.status).toBe(200);
    expect(response.body.errors[0]).toMatchObject({
      message: 'Checkout session 7d444840-9dc0-11d1-b245-5ffdce74fad2 not found',
      extensions: { code: 'NOT_FOUND' },
    });
    expect(response.text).not.toMatch(INTERNALS);
  });

  it('a query that does not validate, a malformed variable, a syntax error: their messages, no stack trace', async () => {
    for (const [query, variables] of [
      ['{ checkoutSession(id: "x") { nope } }', undefined],
      [SESSION_QUERY, { id: { not: 'an id' } }],
      ['{ checkoutSession(', undefined],
    ] as const) {
      const response = await postGraphql(kassa, query, variables);
      expect(response.status).toBe(400);
      expect(response.body.errors[0].message).toBeTruthy();
      expect(response.text).not.toMatch(INTERNALS);
    }
  });
});
