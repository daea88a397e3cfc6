import { randomBytes } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import { GraphQLError, parse } from 'graphql';
import { DateTimeScalar, DecimalScalar } from '../../src/graphql/scalars.js';
import { formatGraphqlError, GRAPHQL_CODE_BY_DOMAIN_CODE, toGraphqlError } from '../../src/graphql/errors.js';
import { GRAPHQL_PARSE_OPTIONS } from '../../src/graphql/protection.js';
import { Decimal } from '../../src/domain/shared/money.js';
import { DomainError } from '../../src/domain/shared/errors.js';
import { RateLimitedError } from '../../src/domain/organisations/throttle.js';
import { loadConfig } from '../../src/config.js';

describe('Decimal scalar', () => {
  it('serialises Decimals and decimal strings with exactly 8 fractional digits', () => {
    expect(DecimalScalar.serialize(new Decimal('12.5'))).toBe('12.50000000');
    expect(DecimalScalar.serialize(new Decimal('0.000000011'))).toBe('0.00000001');
    expect(DecimalScalar.serialize('105')).toBe('105.00000000');
    expect(DecimalScalar.serialize('123456789012.12345678')).toBe('123456789012.12345678');
  });

  it('never accepts a float, on the way out or in', () => {
    expect(() => DecimalScalar.serialize(12.5)).toThrow(/Decimal cannot represent number/);
    expect(() => DecimalScalar.serialize('1e3')).toThrow(GraphQLError);
    expect(() => DecimalScalar.parseValue(12.5)).toThrow(/must be a string/);
    expect((DecimalScalar.parseValue('0.1') as Decimal).plus('0.2').toFixed(8)).toBe('0.30000000');
  });
});

describe('DateTime scalar', () => {
  it('is ISO 8601 in UTC with milliseconds', () => {
    expect(DateTimeScalar.serialize(new Date(Date.UTC(2026, 10, 21, 19, 0, 0, 5)))).toBe('2026-11-21T19:00:00.005Z');
    expect(DateTimeScalar.serialize('2026-11-21T20:00:00+01:00')).toBe('2026-11-21T19:00:00.000Z');
    expect(() => DateTimeScalar.serialize('yesterday')).toThrow(/ISO 8601/);
  });
});

describe('GraphQL error mapping', () => {
  it('maps every domain code once, keeping the REST messages', () => {
    expect(GRAPHQL_CODE_BY_DOMAIN_CODE).toEqual({
      invalid: 'BAD_USER_INPUT',
      not_found: 'NOT_FOUND',
      conflict: 'CONFLICT',
      unprocessable: 'CONFLICT',
      unauthorised: 'UNAUTHENTICATED',
      forbidden: 'FORBIDDEN',
      unavailable: 'SERVICE_UNAVAILABLE',
      rate_limited: 'TOO_MANY_REQUESTS',
      gone: 'GONE',
    });
    const error = toGraphqlError(new DomainError('invalid', ['a is wrong', 'b is wrong']));
    expect(error.message).toBe('a is wrong; b is wrong');
    expect(error.extensions).toEqual({
      code: 'BAD_USER_INPUT',
      reason: 'validation_failed',
      messages: ['a is wrong', 'b is wrong'],
    });
    // A rate limit also says when to retry (docs/api/rest.md#rate-limits).
    const limited = toGraphqlError(new RateLimitedError('graphql', 12, { limit: 600, windowSeconds: 60 }));
    expect(limited.extensions).toEqual({
      code: 'TOO_MANY_REQUESTS',
      reason: 'rate_limited',
      messages: [limited.message],
      retryAfterSeconds: 12,
    });
  });

  it('masks unexpected errors outside development, and strips stack traces in every mode', () => {
    const unexpected = new Error('connect ECONNREFUSED 10.0.0.5:5432');
    const formatted = {
      message: unexpected.message,
      path: ['checkoutSession'],
      extensions: { code: 'INTERNAL_SERVER_ERROR', stacktrace: ['at x (y.ts:1:1)'] },
    };
    expect(formatGraphqlError(formatted, unexpected, { development: false })).toEqual({
      message: 'Internal server error',
      path: ['checkoutSession'],
      extensions: { code: 'INTERNAL_SERVER_ERROR' },
    });
    // Development keeps the message (the log has the stack).
    expect(formatGraphqlError(formatted, unexpected, { development: true })).toEqual({
      message: unexpected.message,
      path: ['checkoutSession'],
      extensions: { code: 'INTERNAL_SERVER_ERROR' },
    });
    const intended = toGraphqlError(new DomainError('not_found', 'Checkout session x not found'));
    for (const development of [false, true]) {
      expect(
        formatGraphqlError(
          { message: intended.message, extensions: { ...intended.extensions, stacktrace: ['…'] } },
          intended,
          { development },
        ),
      ).toEqual({
        message: 'Checkout session x not found',
        extensions: { code: 'NOT_FOUND', reason: 'not_found', messages: ['Checkout session x not found'] },
      });
    }
  });
});

describe('GraphQL parsing', () => {
  const parseError = (query: string): GraphQLError => {
    try {
      parse(query, GRAPHQL_PARSE_OPTIONS);
    } catch (error) {
      return error as GraphQLError;
    }
    throw new Error(`${query} parsed`);
  };

  it('a syntax error or the token limit is a client error: kept, not logged, the token limit said plainly', () => {
    const logError = vi.fn();
    const tooLong = parseError(`{ ${'networks { slug } '.repeat(500)}}`);
    const formatted = formatGraphqlError(
      { message: tooLong.message, extensions: { code: 'GRAPHQL_PARSE_FAILED' } },
      tooLong,
      { development: false, logError },
    );
    expect(formatted).toEqual({
      message: 'Syntax Error: Token limit of 2000 exceeded.',
      extensions: { code: 'GRAPHQL_PARSE_FAILED' },
    });
    const brace = parseError('{');
    expect(
      formatGraphqlError({ message: brace.message, extensions: { code: 'GRAPHQL_PARSE_FAILED' } }, brace, {
        development: false,
        logError,
      }).message,
    ).toBe('Syntax Error: Expected Name, found <EOF>.');
    expect(logError).not.toHaveBeenCalled();
    // 2000 tokens exactly is within the limit.
    expect(() =>
      parse(
        `{ ${Array.from({ length: 333 }, (_, i) => `n${i}: networks { slug }`).join(' ')} }`,
        GRAPHQL_PARSE_OPTIONS,
      ),
    ).not.toThrow();
  });
});

describe('GraphQL config', () => {
  const base = { KASSA_DATA_DIR: mkdtempSync(path.join(tmpdir(), 'kassa-graphql-config-')), LOG_LEVEL: 'silent' };
  // The least production starts with (docs/operations.md#running-in-production).
  const production = {
    ...base,
    KASSA_ENV: 'production',
    KASSA_MASTER_KEY: randomBytes(32).toString('hex'),
    CHECKOUT_BASE_URL: 'https://pay.example.com',
    DATABASE_URL: 'postgresql://db.example/kassa',
    KASSA_RPC_URLS_ETHEREUM: 'https://ethereum.rpc.example',
    KASSA_RPC_URLS_BSC: 'https://bsc.rpc.example',
  };

  it('introspection and Sandbox: on in development, off in production unless enabled', () => {
    expect(loadConfig({ ...base, KASSA_ENV: 'development' })).toMatchObject({
      graphqlIntrospection: true,
      graphqlSandbox: true,
    });
    expect(loadConfig(production)).toMatchObject({ graphqlIntrospection: false, graphqlSandbox: false });
    expect(loadConfig({ ...production, KASSA_GRAPHQL_INTROSPECTION: 'true' })).toMatchObject({
      graphqlIntrospection: true,
      graphqlSandbox: false,
    });
    expect(loadConfig({ ...production, KASSA_GRAPHQL_SANDBOX: 'true' })).toMatchObject({
      graphqlIntrospection: true,
      graphqlSandbox: true,
    });
  });

  it('KASSA_GRAPHQL_MAX_CONNECTIONS: 1000 WebSocket connections per instance unless set', () => {
    expect(loadConfig({ ...base, KASSA_ENV: 'test' }).graphqlMaxConnections).toBe(1000);
    expect(loadConfig({ ...base, KASSA_ENV: 'test', KASSA_GRAPHQL_MAX_CONNECTIONS: '50' }).graphqlMaxConnections).toBe(
      50,
    );
    expect(() => loadConfig({ ...base, KASSA_ENV: 'test', KASSA_GRAPHQL_MAX_CONNECTIONS: '0' })).toThrow(
      /KASSA_GRAPHQL_MAX_CONNECTIONS/,
    );
  });

  it('refuses Sandbox without introspection, and a value that is not a boolean', () => {
    expect(() => loadConfig({ ...base, KASSA_GRAPHQL_SANDBOX: 'true', KASSA_GRAPHQL_INTROSPECTION: 'false' })).toThrow(
      /KASSA_GRAPHQL_SANDBOX needs KASSA_GRAPHQL_INTROSPECTION/,
    );
    expect(() => loadConfig({ ...base, KASSA_GRAPHQL_SANDBOX: 'maybe' })).toThrow(
      /KASSA_GRAPHQL_SANDBOX must be true or false/,
    );
  });
});
