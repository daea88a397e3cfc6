import { describe, expect, it } from 'vitest';
import { isDatabaseUnavailable } from '../../src/db/database-errors.js';

/**
 * The errors as Prisma 7's pg driver adapter and pg raise them (shapes captured from real ones: a refused port, a
 * stalled server, a statement cancelled by statement_timeout and by pg_cancel_backend).
 */
const adapterError = (cause: Record<string, unknown>) =>
  Object.assign(new Error('Raw query failed.'), { code: 'P2010', meta: { driverAdapterError: { cause } } });

describe('isDatabaseUnavailable (REST 503, GraphQL SERVICE_UNAVAILABLE)', () => {
  it.each([
    ['a refused connection', adapterError({ kind: 'DatabaseNotReachable', host: '127.0.0.1', port: 5999 })],
    [
      'a refused connection, as the driver adapter raises it to a statement run on it directly',
      Object.assign(new Error('DatabaseNotReachable'), {
        name: 'DriverAdapterError',
        cause: { kind: 'DatabaseNotReachable', host: '127.0.0.1', port: 5999 },
      }),
    ],
    [
      'a statement cancelled by statement_timeout',
      adapterError({ kind: 'postgres', code: '57014', message: 'canceling statement due to statement timeout' }),
    ],
    [
      "pg-pool's connection timeout",
      Object.assign(new Error('Connection terminated due to connection timeout'), {
        cause: new Error('Connection terminated unexpectedly'),
      }),
    ],
    ['a server shutting down', adapterError({ kind: 'postgres', code: '57P01', message: 'terminating connection' })],
    ['a socket refused', Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' })],
    [
      'a transaction that ran out of its time (P2028)',
      Object.assign(
        new Error(
          'Transaction API error: Transaction already closed: A query cannot be executed on an expired transaction.',
        ),
        { code: 'P2028' },
      ),
    ],
  ])('%s is', (_what, error) => {
    expect(isDatabaseUnavailable(error)).toBe(true);
  });

  // Found by a review: 57014 is also an operator's pg_cancel_backend, and P2028 a transaction used after its end.
  it.each([
    [
      'a statement an operator cancelled',
      adapterError({ kind: 'postgres', code: '57014', message: 'canceling statement due to user request' }),
    ],
    [
      'a transaction used after its end (P2028)',
      Object.assign(new Error('Transaction already closed'), { code: 'P2028' }),
    ],
    ['a unique violation', adapterError({ kind: 'UniqueConstraintViolation', constraint: { fields: ['id'] } })],
    ['a bug', new TypeError("Cannot read properties of undefined (reading 'id')")],
  ])('%s is not', (_what, error) => {
    expect(isDatabaseUnavailable(error)).toBe(false);
  });
});
