import { Prisma } from '../generated/prisma/client.js';
import type { AssetTicker } from '../domain/shared/assets.js';
import type { CheckoutSession, CryptoQuote } from '../domain/sessions/checkout-session.js';
import type { BoundTransaction } from '../domain/payments/chain-ports.js';
import type { AmountClaimRequest, ChainTransfer, Credit } from '../domain/payments/payment-ports.js';
import type { TxStore } from '../domain/ports.js';
import type { IdempotencyRecord, SessionPatch } from '../domain/sessions/session-ports.js';
import {
  claimRestAmount,
  claimUniqueAmounts,
  reclaimExactAmounts,
  releaseAmountClaims,
} from './payments/amount-claims.js';
import { transferSnapshot } from './payments/amount-owners.js';
import { appendOutboxEvent } from './outbox-event.store.js';
import { amountClaimant, amountContenders, exactOwner } from '../domain/payments/amount-facts.js';
import { boundTransactions } from './payments/bound-transaction.store.js';
import { readSession } from './sessions/checkout-session.read.js';
import { expiryHolds } from './payments/expiry-holds.js';
import {
  confirmExactCredit,
  lockAsset,
  paymentTotals,
  quoteAt,
  recordTransfer,
  transferHolders,
} from './payments/payment-credits.js';
import { replaceQuotes } from './sessions/quote-changes.js';
import { requoteHeld } from './payments/requote-holds.js';

type Tx = Prisma.TransactionClient;

/** The column each SessionPatch field writes (quoted where the name needs it). */
const SESSION_COLUMNS: Record<keyof SessionPatch, string> = {
  status: 'status',
  overpaid: 'overpaid',
  cryptoCurrency: 'crypto_currency',
  totalAmountCrypto: 'total_amount_crypto',
  boundTxHash: 'bound_tx_hash',
  boundAt: 'bound_at',
  payerWalletAddress: 'payer_wallet_address',
  chainId: 'chain_id',
  failureReason: 'failure_reason',
  amountReceived: 'amount_received',
  amountReceivedLate: 'amount_received_late',
  amountPending: 'amount_pending',
  restAmount: 'rest_amount',
  paymentsChangedAt: 'payments_changed_at',
  boundTxCheckedAt: 'bound_tx_checked_at',
  quotedAt: 'quoted_at',
  updatedAt: 'updated_at',
};

/** A patch value as SQL: amounts as exact numeric text, the status as its enum, times as timestamptz. */
function columnValue(field: keyof SessionPatch, value: unknown): Prisma.Sql {
  if (value === null) return Prisma.sql`NULL`;
  if (field === 'status') return Prisma.sql`${value as string}::checkout_session_status`;
  if (value instanceof Date) return Prisma.sql`${value}::timestamptz`;
  if (typeof value === 'object' && value !== null && 'toFixed' in value)
    return Prisma.sql`${(value as { toFixed(): string }).toFixed()}::numeric`;
  return Prisma.sql`${value}`;
}

export async function receivesAtDepositAddress(client: Tx, sessionId: string): Promise<boolean> {
  const rows = await client.$queryRaw<Array<{ deposit: boolean }>>`
    SELECT receiving_mode = 'deposit_addresses' AS deposit FROM checkout_sessions WHERE id = ${sessionId}::uuid`;
  return rows[0]?.deposit ?? false;
}

export async function findIdempotencyKey(
  client: Tx,
  organisationId: string,
  key: string,
): Promise<IdempotencyRecord | null> {
  const row = await client.idempotencyKey.findUnique({ where: { organisationId_key: { organisationId, key } } });
  return row ? { requestHash: row.requestHash, sessionId: row.sessionId } : null;
}

/**
 * The domain's storage inside one Prisma transaction. `touched` collects the sessions
 * it locked or wrote, for the caller to drop from caches once the transaction ends.
 */
export class PrismaTxStore implements TxStore {
  constructor(
    private readonly tx: Tx,
    private readonly touched: Set<string> = new Set(),
  ) {}

  /** The transaction itself, for the store's own locking queries. */
  get client(): Tx {
    return this.tx;
  }

  findIdempotencyKey(organisationId: string, key: string) {
    return findIdempotencyKey(this.tx, organisationId, key);
  }

  /** Reads a session the caller has locked already (FOR UPDATE in its own query). */
  readLockedSession(id: string): Promise<CheckoutSession | null> {
    this.touched.add(id);
    return readSession(this.tx, id);
  }

  /** Locks the session row and reads the session, in one statement. */
  async lockSession(id: string): Promise<CheckoutSession | null> {
    this.touched.add(id);
    return readSession(this.tx, id, { lock: true });
  }

  /** One raw UPDATE of the fields given (Prisma's update reads the row back; nobody needs it). */
  async updateSession(id: string, patch: SessionPatch): Promise<void> {
    this.touched.add(id);
    const assignments = Object.entries(patch)
      .filter(([, value]) => value !== undefined)
      .map(([field, value]) => {
        const key = field as keyof SessionPatch;
        return Prisma.sql`${Prisma.raw(SESSION_COLUMNS[key])} = ${columnValue(key, value)}`;
      });
    await this.tx.$executeRaw`UPDATE checkout_sessions SET ${Prisma.join(assignments, ', ')} WHERE id = ${id}::uuid`;
  }

  async recordStatusChange(change: Parameters<TxStore['recordStatusChange']>[0]): Promise<void> {
    await this.tx.checkoutSessionStatusChange.create({
      data: {
        sessionId: change.sessionId,
        fromStatus: change.from,
        toStatus: change.to,
        cause: change.cause,
        createdAt: change.at,
      },
    });
  }

  async appendEvent(event: Parameters<TxStore['appendEvent']>[0]): Promise<void> {
    await appendOutboxEvent(this.tx, event);
  }

  expiryHolds(session: CheckoutSession, graceMinutes: number) {
    return expiryHolds(this.tx, session.id, graceMinutes);
  }

  paymentTotals(session: CheckoutSession, asset: AssetTicker, chainId: string) {
    return paymentTotals(this.tx, session, asset, chainId);
  }

  receivesAtDepositAddress(sessionId: string) {
    return receivesAtDepositAddress(this.tx, sessionId);
  }

  async claimUniqueAmounts(sessionId: string, requests: readonly AmountClaimRequest[], maxSteps: number, at: Date) {
    // A deposit-mode session's address tells its payments apart: a re-priced quote is its base amount, claimed by none.
    if (await this.receivesAtDepositAddress(sessionId))
      return new Map<AssetTicker, number | null>(requests.map((request) => [request.ticker, 0]));
    return claimUniqueAmounts(this.tx, sessionId, requests, maxSteps, at);
  }

  claimRestAmount(...args: Parameters<TxStore['claimRestAmount']>) {
    return claimRestAmount(this.tx, ...args);
  }

  releaseAmountClaims(sessionId: string, at: Date, keep?: { asset: AssetTicker; network: string }) {
    return releaseAmountClaims(this.tx, sessionId, at, keep);
  }

  reclaimExactAmounts(sessionId: string, at: Date) {
    return reclaimExactAmounts(this.tx, sessionId, at);
  }

  transferSnapshot(transfer: ChainTransfer) {
    return transferSnapshot(this.tx, transfer);
  }

  async exactAmountOwner(transfer: ChainTransfer) {
    return exactOwner(await transferSnapshot(this.tx, transfer));
  }

  async amountContenders(transfer: ChainTransfer) {
    return amountContenders(await transferSnapshot(this.tx, transfer));
  }

  async amountClaimant(transfer: ChainTransfer) {
    return amountClaimant(await transferSnapshot(this.tx, transfer));
  }

  async creditTransfers(
    transfers: readonly ChainTransfer[],
    credits: ReadonlyArray<Credit | null>,
    at: Date,
  ): Promise<Array<string | null>> {
    const holders: Array<string | null> = [];
    for (const [index, transfer] of transfers.entries()) {
      const credit = credits[index] ?? null;
      const holder = await recordTransfer(this.tx, transfer, credit, at);
      const exact = holder !== null && credit?.attribution === 'exact_amount' && holder === credit.sessionId;
      holders.push(exact && !(await confirmExactCredit(this.tx, holder, transfer, at)) ? null : holder);
    }
    for (const holder of holders) if (holder) this.touched.add(holder);
    return holders;
  }

  lockAsset(
    sessionId: string,
    asset: AssetTicker,
    network: string,
    chainId: string,
    firstSeenAt: Date,
    at: Date,
    keepOthersMinutes: number,
  ) {
    this.touched.add(sessionId);
    return lockAsset(this.tx, sessionId, asset, network, chainId, firstSeenAt, at, null, keepOthersMinutes);
  }

  quoteAt(sessionId: string, asset: AssetTicker, at: Date) {
    return quoteAt(this.tx, sessionId, asset, at);
  }

  transferHolders(txHash: string, chainId: string) {
    return transferHolders(this.tx, txHash, chainId);
  }

  transactionsOfSession(sessionId: string) {
    return boundTransactions.ofSession(this.tx, sessionId);
  }

  otherSessionsBinding(txHash: string, chainId: string, sessionId: string) {
    return boundTransactions.ofOtherOpenSessions(this.tx, txHash, chainId, sessionId);
  }

  insertBoundTransaction(bound: BoundTransaction) {
    this.touched.add(bound.sessionId);
    return boundTransactions.insert(this.tx, bound);
  }

  removeBoundTransaction(id: string) {
    return boundTransactions.remove(this.tx, id);
  }

  updateBoundTransaction(id: string, patch: Parameters<TxStore['updateBoundTransaction']>[1]) {
    return boundTransactions.update(this.tx, id, patch);
  }

  requoteHeld(sessionId: string, now: Date, ttlMinutes: number, graceMinutes: number) {
    return requoteHeld(this.tx, sessionId, now, ttlMinutes, graceMinutes);
  }

  replaceQuotes(session: CheckoutSession, quotes: readonly CryptoQuote[], at: Date) {
    this.touched.add(session.id);
    return replaceQuotes(this.tx, session, quotes, at);
  }
}
