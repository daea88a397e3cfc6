import type { AssetTicker } from '../../domain/shared/assets.js';
import type { CheckoutSession, CheckoutSessionStatus } from '../../domain/sessions/checkout-session.js';
import { toDecimal, type Decimal } from '../../domain/shared/money.js';
import type { AdapterStatement } from '../database.js';
import type { BoundTransaction } from '../../domain/payments/chain-ports.js';
import type { RejectionCode } from '../../domain/shared/reason-codes.js';
import { StatementBatches } from './statement-batches.js';

// A session read outside a transaction by kassa_read_session's one JSON text of arrays, with its bound transactions
// (docs/benchmarks.md#cold-reads); checkout-session.read.ts reads one inside a transaction.
/**
 * Reads a whole session outside a transaction in one call of kassa_read_session, bound transactions included; about
 * half the CPU of readSession's `$queryRaw` (docs/benchmarks.md#cold-reads).
 */
export async function readSessionForRead(statement: AdapterStatement, id: string): Promise<CheckoutSession | null> {
  return fromReadText((await statement(READ_SESSION_SQL, [id]))[0]?.[0]);
}

/**
 * Whole sessions read as readSessionForRead reads one, in batches of the reads asked in one turn of the event loop or
 * while READS_IN_FLIGHT statements run (docs/decisions/0037-session-reads-in-batches.md), each id's answer its own row.
 */
export class SessionReads {
  private readonly batches: StatementBatches<unknown>;

  constructor(
    private readonly statement: AdapterStatement,
    maxInFlight = READS_IN_FLIGHT,
  ) {
    this.batches = new StatementBatches((ids) => readTexts(statement, ids), MAX_READS, maxInFlight, 'at once', 'turn');
  }

  /** Statements sent and the reads they carried (for tests and the benchmark). */
  get sent(): { readonly statements: number; readonly calls: number } {
    return this.batches.sent;
  }

  async read(id: string): Promise<CheckoutSession | null> {
    // Only a UUID's text goes into the batch's array literal; anything else is read alone (and refused there).
    if (!UUID_TEXT.test(id)) return readSessionForRead(this.statement, id);
    return fromReadText(await this.batches.call(id));
  }
}

/** Reads in one statement at most, and statements of them at once per instance (see SessionReads). */
export const MAX_READS = 32;
export const READS_IN_FLIGHT = 2;
const UUID_TEXT = /^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$/;

async function readTexts(statement: AdapterStatement, ids: readonly string[]): Promise<unknown[]> {
  const rows =
    ids.length === 1
      ? await statement(READ_SESSION_SQL, ids)
      : await statement(READ_SESSIONS_SQL, [`{${ids.join(',')}}`]);
  return rows.map((row) => row[0]);
}

function fromReadText(text: unknown): CheckoutSession | null {
  if (typeof text !== 'string') return null;
  const array = JSON.parse(text) as ReadArray;
  const session = fromReadArray(array);
  transactionsRead.set(
    session,
    array[41].map((t) => toBoundTransaction(session.id, t)),
  );
  return session;
}

/**
 * The bound transactions read with `session` (readSessionForRead), oldest first; undefined otherwise. As current as the
 * session object, since changing them updates the session row too.
 */
export function boundTransactionsRead(session: CheckoutSession): BoundTransaction[] | undefined {
  return transactionsRead.get(session);
}

const transactionsRead = new WeakMap<CheckoutSession, BoundTransaction[]>();

const READ_SESSION_SQL = 'SELECT kassa_read_session($1::uuid)';
/** One row per id, in the ids' order (null for an id no session has). */
const READ_SESSIONS_SQL =
  'SELECT kassa_read_session(t.id) FROM unnest($1::uuid[]) WITH ORDINALITY AS t(id, n) ORDER BY t.n';

/** kassa_read_session's answer: the session's columns in its order, then its items, quotes and networks. */
type ReadArray = [
  ...[id: string, organisationId: string, organisationName: string, organisationDeleted: boolean],
  ...[ownerUserId: string | null, status: CheckoutSessionStatus, source: string, fromPaymentLink: boolean],
  ...[anonymous: boolean, requiresPayerIdentity: boolean, identityOptions: string[] | null],
  ...[productPaymentLinkId: string | null, fiatCurrency: string, totalAmountFiat: string],
  ...[cryptoCurrency: string | null, totalAmountCrypto: string | null, expiresAt: number, overpaid: boolean],
  ...[boundTxHash: string | null, boundAt: number | null, boundTxCheckedAt: number | null],
  ...[payerWalletAddress: string | null, chainId: string | null, failureReason: string | null],
  ...[amountReceived: string, amountReceivedLate: string, amountPending: string, restAmount: string | null],
  ...[quotedAt: number, underpaymentTolerancePercent: string, latePaymentWindowMinutes: number],
  ...[userId: string, userEmail: string | null, userTelegramId: string | null, userUsername: string | null],
  ...[metadata: Record<string, unknown> | null, createdAt: number, updatedAt: number],
  items: Array<[name: string, quantity: number, unitPrice: string, totalPrice: string, productId: string | null]>,
  quotes: Array<
    [
      ...[ticker: string, assetId: string, unitPriceFiat: string, amount: string, baseAmount: string],
      ...[amountStep: string, offsetSteps: number, rateSource: string, ratedAt: number, rounding: string],
    ]
  >,
  networks: Array<[network: string, chainId: string, walletAddress: string]>,
  transactions: Array<TransactionArray>,
];

type TransactionArray = [
  ...[id: string, network: string, chainId: string, txHash: string, cryptoCurrency: string],
  ...[payerWalletAddress: string | null, state: string, reasonCode: string | null, reason: string | null],
  ...[seenOnChainAt: number | null, clientAddress: string | null, createdAt: number],
];

function toBoundTransaction(sessionId: string, t: TransactionArray): BoundTransaction {
  return {
    id: t[0],
    sessionId,
    network: t[1],
    chainId: t[2],
    txHash: t[3],
    cryptoCurrency: t[4] as AssetTicker,
    payerWalletAddress: t[5],
    state: t[6] as BoundTransaction['state'],
    reasonCode: t[7] as RejectionCode | null,
    reason: t[8],
    seenOnChainAt: dateOrNull(t[9]),
    clientAddress: t[10],
    createdAt: new Date(t[11]),
  };
}

const dateOrNull = (ms: number | null) => (ms === null ? null : new Date(ms));

/**
 * Amounts many sessions hold alike (nothing received yet, a step, a rate's price, a policy), one Decimal each rather
 * than one per read: decimal.js values never change, and a cached session holds a few dozen.
 */
const sharedDecimals = new Map<string, Decimal>();
const SHARED_DECIMALS_KEPT = 4096;

function sharedDecimal(text: string): Decimal {
  let value = sharedDecimals.get(text);
  if (value === undefined) {
    if (sharedDecimals.size >= SHARED_DECIMALS_KEPT) sharedDecimals.clear();
    sharedDecimals.set(text, (value = toDecimal(text)));
  }
  return value;
}

/**
 * Within one read, one Decimal per amount text and one Date per instant: they repeat often and are most of a cached
 * session's size. Neither is ever changed in place.
 */
function readValues() {
  const amounts = new Map<string, Decimal>();
  const times = new Map<number, Date>();
  return {
    amount(text: string): Decimal {
      let value = amounts.get(text);
      if (value === undefined) amounts.set(text, (value = toDecimal(text)));
      return value;
    },
    time(ms: number): Date {
      let value = times.get(ms);
      if (value === undefined) times.set(ms, (value = new Date(ms)));
      return value;
    },
  };
}

/** When quotes were rated: every session quoted from one rate shares it. */
const sharedTimes = new Map<number, Date>();

function sharedTime(ms: number): Date {
  let value = sharedTimes.get(ms);
  if (value === undefined) {
    if (sharedTimes.size >= SHARED_DECIMALS_KEPT) sharedTimes.clear();
    sharedTimes.set(ms, (value = new Date(ms)));
  }
  return value;
}

function fromReadArray(a: ReadArray): CheckoutSession {
  const { amount, time } = readValues();
  const timeOrNull = (ms: number | null) => (ms === null ? null : time(ms));
  return {
    id: a[0],
    organisationId: a[1],
    organisationName: a[2],
    organisationDeleted: a[3],
    ownerUserId: a[4],
    status: a[5],
    source: a[6],
    fromPaymentLink: a[7],
    anonymous: a[8],
    requiresPayerIdentity: a[9],
    identityOptions: a[10] ?? [],
    productPaymentLinkId: a[11],
    fiatCurrency: a[12],
    totalAmountFiat: amount(a[13]),
    cryptoCurrency: a[14] as AssetTicker | null,
    totalAmountCrypto: a[15] === null ? null : amount(a[15]),
    networks: a[40].map(([network, chainId, walletAddress]) => ({ network, chainId, walletAddress })),
    quotes: a[39].map((q) => ({
      ticker: q[0] as AssetTicker,
      assetId: q[1],
      unitPriceFiat: sharedDecimal(q[2]),
      amount: amount(q[3]),
      baseAmount: amount(q[4]),
      amountStep: sharedDecimal(q[5]),
      offsetSteps: q[6],
      rateSource: q[7],
      ratedAt: sharedTime(q[8]),
      rounding: q[9],
    })),
    items: a[38].map(([name, quantity, unitPrice, totalPrice, productId]) => ({
      name,
      quantity,
      unitPrice: amount(unitPrice),
      totalPrice: amount(totalPrice),
      productId,
    })),
    expiresAt: time(a[16]),
    overpaid: a[17],
    boundTxHash: a[18],
    boundAt: timeOrNull(a[19]),
    boundTxCheckedAt: timeOrNull(a[20]),
    payerWalletAddress: a[21],
    chainId: a[22],
    failureReason: a[23],
    amountReceived: sharedDecimal(a[24]),
    amountReceivedLate: sharedDecimal(a[25]),
    amountPending: sharedDecimal(a[26]),
    restAmount: a[27] === null ? null : amount(a[27]),
    quotedAt: time(a[28]),
    paymentPolicy: {
      underpaymentTolerancePercent: sharedDecimal(a[29]),
      latePaymentWindowMinutes: a[30],
    },
    user: { id: a[31], email: a[32], telegramId: a[33], username: a[34] },
    metadata: a[35] ?? {},
    createdAt: time(a[36]),
    updatedAt: time(a[37]),
  };
}
