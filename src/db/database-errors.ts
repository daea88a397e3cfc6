/** What a request that found the database away is answered with (REST 503, GraphQL SERVICE_UNAVAILABLE). */
export const DATABASE_UNAVAILABLE_MESSAGE = 'The database is not reachable right now; try again shortly';
/** REST's Retry-After with it. */
export const DATABASE_RETRY_AFTER_SECONDS = 5;

/**
 * Whether `error` says the database could not be reached or did not answer in time, along the `cause` chain: the
 * transports answer it 503 with Retry-After, not 500, so retries and load balancers tell an outage from a bug.
 */
export function isDatabaseUnavailable(error: unknown): boolean {
  let current: unknown = error;
  for (let depth = 0; depth < 6 && current !== null && typeof current === 'object'; depth++) {
    const value = current as {
      kind?: unknown;
      code?: unknown;
      message?: unknown;
      meta?: { driverAdapterError?: { cause?: { kind?: unknown; code?: unknown; message?: unknown } } };
      cause?: unknown;
    };
    // A driver adapter's own error (a statement run through it, not through the client) carries the kind as its cause.
    if (typeof value.kind === 'string' && UNREACHABLE_KINDS.has(value.kind)) return true;
    const adapterCause = value.meta?.driverAdapterError?.cause;
    if (typeof adapterCause?.kind === 'string' && UNREACHABLE_KINDS.has(adapterCause.kind)) return true;
    if (typeof adapterCause?.code === 'string' && unavailableState(adapterCause.code, adapterCause.message))
      return true;
    if (typeof value.code === 'string' && (unavailableState(value.code, value.message) || SOCKET_CODES.has(value.code)))
      return true;
    if (typeof value.code === 'string' && PRISMA_CONNECTION_CODES.has(value.code)) return true;
    // A transaction that ran out of time or could not start in time (load), not one used after its end (a bug).
    if (value.code === 'P2028' && typeof value.message === 'string' && TRANSACTION_TIMEOUT.test(value.message))
      return true;
    if (typeof value.message === 'string' && CONNECTION_MESSAGES.test(value.message)) return true;
    current = value.cause;
  }
  return false;
}

/** Driver-adapter error kinds of a database that is not there (Prisma's `DriverAdapterError` causes). */
const UNREACHABLE_KINDS = new Set([
  'DatabaseNotReachable',
  'DatabaseUnavailable',
  'ConnectionClosed',
  'SocketTimeout',
  'TooManyConnections',
]);

/**
 * Whether a SQLSTATE says the server is unavailable: class 08, 53300, 57P01–57P03, and 57014 only for a
 * statement_timeout (pg_cancel_backend's 57014 is an operator's cancel, no outage).
 */
function unavailableState(code: string, message: unknown): boolean {
  if (code === '57014') return typeof message === 'string' && /statement timeout/.test(message);
  return UNAVAILABLE_SQLSTATES.has(code);
}

/** SQLSTATEs of an unavailable server (57014 apart: unavailableState). */
const UNAVAILABLE_SQLSTATES = new Set([
  '08000',
  '08001',
  '08003',
  '08004',
  '08006',
  '53300',
  '57P01',
  '57P02',
  '57P03',
]);

const SOCKET_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'EHOSTUNREACH', 'ENETUNREACH']);

/**
 * Prisma's own connection codes. P2028 counts only by its message (TRANSACTION_TIMEOUT): it also means a transaction
 * used after its end, a bug to answer 500.
 */
const PRISMA_CONNECTION_CODES = new Set(['P1001', 'P1002', 'P1008', 'P1017', 'P2024']);

/** P2028's messages for a transaction that timed out (expired) or could not start within maxWait. */
const TRANSACTION_TIMEOUT = /expired transaction|Unable to start a transaction in the given time/;

/** pg's and pg-pool's messages for a connection that failed or timed out. */
const CONNECTION_MESSAGES =
  /^(?:Connection terminated|timeout exceeded when trying to connect|Client has encountered a connection error)/;
