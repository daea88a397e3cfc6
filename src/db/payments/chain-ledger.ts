import type { Prisma, PrismaClient } from '../../generated/prisma/client.js';
import type { AssetTicker } from '../../domain/shared/assets.js';
import { OPEN_STATUSES } from '../../domain/sessions/checkout-session.js';
import { toDecimal } from '../../domain/shared/money.js';
import type { ChainLedger, DepositNativeBook, ScannedRange, WatchedWallet } from '../../domain/payments/chain-ports.js';
import type { Attribution, ChainTransfer, PaymentRecord } from '../../domain/payments/payment-ports.js';
import type { TransferSnapshot } from '../../domain/payments/amount-facts.js';
import type { ScanOutcome } from '../../domain/payments/decide.js';
import { transferSnapshot } from './amount-owners.js';
import { boundTransactions } from './bound-transaction.store.js';
import { confirmExactCredit, lockAsset, markChanged, recordTransfer } from './payment-credits.js';

type Tx = Prisma.TransactionClient;

const OPEN: readonly string[] = OPEN_STATUSES;
// Under 30 s like every transaction: the events feed takes an outbox gap older than KASSA_OUTBOX_GAP_SECONDS (60) for a
// rollback.
const TRANSACTION_OPTIONS = { maxWait: 20_000, timeout: 30_000 } as const;

interface PaymentRow {
  id: string;
  network: string;
  chain_id: string;
  tx_hash: string;
  log_index: number;
  from_address: string;
  to_address: string;
  asset: string;
  token_address: string | null;
  base_units: string;
  amount: string;
  block_number: bigint;
  block_hash: string;
  block_time: Date;
  confirmations: number;
  state: string;
  session_id: string | null;
  attribution: string | null;
  reserved_for: string | null;
  late: boolean;
  created_at: Date;
}

/** The chain watcher's storage over Prisma (raw SQL: row locks, upserts and set updates). */
export class PrismaChainLedger implements ChainLedger {
  constructor(private readonly prisma: PrismaClient) {}

  async leaseNetwork(
    network: string,
    chainId: string,
    instanceId: string,
    leaseSeconds: number,
    startBlock: bigint,
  ): Promise<bigint | null> {
    await this.prisma.$executeRaw`
      INSERT INTO chain_cursors (network, chain_id, next_block) VALUES (${network}, ${chainId}, ${startBlock})
      ON CONFLICT (network) DO NOTHING`;
    // The database's clock decides leases, so instances with skewed clocks agree.
    const rows = await this.prisma.$queryRaw<Array<{ next_block: bigint }>>`
      UPDATE chain_cursors
         SET leader = ${instanceId}, lease_until = now() + make_interval(secs => ${leaseSeconds}), updated_at = now()
       WHERE network = ${network}
         AND (leader IS NULL OR leader = ${instanceId} OR lease_until < now())
      RETURNING next_block`;
    return rows[0]?.next_block ?? null;
  }

  async releaseNetwork(network: string, instanceId: string): Promise<void> {
    await this.prisma.$executeRaw`
      UPDATE chain_cursors SET leader = NULL, lease_until = NULL WHERE network = ${network} AND leader = ${instanceId}`;
  }

  async watchedWallets(network: string, now: Date): Promise<WatchedWallet[]> {
    const rows = await this.prisma.$queryRaw<Array<{ wallet: string; deposit: boolean }>>`
      SELECT lower(n.wallet_address) AS wallet, bool_or(s.receiving_mode = 'deposit_addresses') AS deposit
        FROM checkout_session_networks n
        JOIN checkout_sessions s ON s.id = n.session_id
        JOIN organisations o ON o.id = s.organisation_id
       WHERE n.network = ${network}
         AND (s.status::text = ANY(${OPEN})
              OR s.expires_at + make_interval(mins => o.late_payment_window_minutes) > ${now})
       GROUP BY 1`;
    return rows.map((row) => ({ address: row.wallet, deposit: row.deposit }));
  }

  async depositNativeBooks(
    network: string,
    beforeBlock: bigint,
    now: Date,
    holding: readonly string[],
  ): Promise<DepositNativeBook[]> {
    // Joined and grouped (not a subquery per address), so the cost grows with the rows, not addresses × rows.
    const rows = await this.prisma.$queryRaw<Array<{ address: string; known: string }>>`
      WITH asked AS (
        SELECT unnest(${holding}::text[]) AS address
        UNION
        SELECT lower(i.deposit_address) FROM deposit_collection_items i
          JOIN deposit_collections c ON c.id = i.collection_id
         WHERE c.network = ${network} AND i.token_address IS NULL),
      watched AS (
        SELECT DISTINCT lower(n.wallet_address) AS address
          FROM checkout_session_networks n
          JOIN checkout_sessions s ON s.id = n.session_id
          JOIN organisations o ON o.id = s.organisation_id
         WHERE n.network = ${network} AND s.receiving_mode = 'deposit_addresses'
           AND lower(n.wallet_address) IN (SELECT address FROM asked)
           AND (s.status::text = ANY(${OPEN})
                OR s.expires_at + make_interval(mins => o.late_payment_window_minutes) > ${now})),
      arrived AS (
        SELECT p.to_address AS address, SUM(p.base_units) AS units
          FROM payments p JOIN watched w ON w.address = p.to_address
         WHERE p.network = ${network} AND p.token_address IS NULL AND p.state <> 'reversed'
           AND p.block_number < ${beforeBlock}
         GROUP BY p.to_address),
      taken AS (
        SELECT lower(i.deposit_address) AS address, SUM(i.base_units) AS units FROM deposit_collection_items i
          JOIN deposit_collections c ON c.id = i.collection_id
          JOIN watched w ON w.address = lower(i.deposit_address)
         WHERE c.network = ${network} AND i.token_address IS NULL AND c.block_number < ${beforeBlock}
         GROUP BY lower(i.deposit_address))
      SELECT w.address, (COALESCE(a.units, 0) - COALESCE(t.units, 0))::text AS known
        FROM watched w LEFT JOIN arrived a ON a.address = w.address LEFT JOIN taken t ON t.address = w.address`;
    return rows.map((row) => ({ address: row.address, known: BigInt(row.known) }));
  }

  async recordedBlocks(network: string, limit: number): Promise<Array<{ number: bigint; hash: string }>> {
    return this.prisma.$queryRaw<Array<{ number: bigint; hash: string }>>`
      SELECT number, hash FROM chain_blocks WHERE network = ${network} ORDER BY number DESC LIMIT ${limit}`;
  }

  async recordRange(
    range: ScannedRange,
    instanceId: string,
    judge: (snapshot: TransferSnapshot) => ScanOutcome | null,
    now: Date,
  ): Promise<boolean> {
    return this.prisma.$transaction(async (tx) => {
      const cursor = await tx.$queryRaw<Array<{ next_block: bigint; leader: string | null }>>`
        SELECT next_block, leader FROM chain_cursors WHERE network = ${range.network} FOR UPDATE`;
      // Compare-and-set: a scanner that lost its lease, or raced another, writes nothing.
      if (cursor[0]?.next_block !== range.fromBlock || cursor[0]?.leader !== instanceId) return false;

      for (const transfer of range.transfers) {
        await applyScanOutcome(tx, transfer, judge(await transferSnapshot(tx, transfer)), now);
        await tx.$executeRaw`
          INSERT INTO chain_blocks (network, number, hash) VALUES (${range.network}, ${transfer.blockNumber},
            ${transfer.blockHash})
          ON CONFLICT (network, number) DO UPDATE SET hash = EXCLUDED.hash`;
      }
      await tx.$executeRaw`
        INSERT INTO chain_blocks (network, number, hash) VALUES (${range.network}, ${range.toBlock},
          ${range.toBlockHash})
        ON CONFLICT (network, number) DO UPDATE SET hash = EXCLUDED.hash`;
      await tx.$executeRaw`
        UPDATE chain_cursors SET next_block = ${range.toBlock + 1n}, updated_at = ${now}
          WHERE network = ${range.network}`;
      // Only recent hashes are needed to find a fork point.
      await tx.$executeRaw`
        DELETE FROM chain_blocks WHERE network = ${range.network} AND number < ${range.toBlock - 10_000n}`;
      return true;
    }, TRANSACTION_OPTIONS);
  }

  async markCaughtUp(network: string, instanceId: string, head: bigint, at: Date): Promise<void> {
    await this.prisma.$executeRaw`
      UPDATE chain_cursors SET caught_up_at = ${at} WHERE network = ${network} AND leader = ${instanceId}
        AND next_block > ${head}`;
  }

  async rollBack(network: string, fromBlock: bigint, now: Date): Promise<number> {
    return this.prisma.$transaction(async (tx) => {
      await tx.$queryRaw`SELECT 1 FROM chain_cursors WHERE network = ${network} FOR UPDATE`;
      const reversed = await tx.$queryRaw<Array<{ session_id: string | null }>>`
        UPDATE payments SET state = 'reversed', live = NULL, confirmations = 0, updated_at = ${now}
         WHERE network = ${network} AND block_number >= ${fromBlock} AND state <> 'reversed'
        RETURNING session_id`;
      const sessions = [...new Set(reversed.map((row) => row.session_id).filter((id): id is string => id !== null))];
      await markChanged(tx, sessions, now);
      await tx.$executeRaw`DELETE FROM chain_blocks WHERE network = ${network} AND number >= ${fromBlock}`;
      await tx.$executeRaw`
        UPDATE chain_cursors SET next_block = LEAST(next_block, ${fromBlock}), updated_at = ${now}
          WHERE network = ${network}`;
      return reversed.length;
    }, TRANSACTION_OPTIONS);
  }

  async paymentsAwaitingConfirmation(network: string, throughBlock: bigint) {
    const rows = await this.prisma.$queryRaw<Array<{ id: string; block_number: bigint; block_hash: string }>>`
      SELECT id, block_number, block_hash FROM payments
       WHERE network = ${network} AND state = 'seen' AND block_number <= ${throughBlock}
       ORDER BY block_number, log_index`;
    return rows.map((row) => ({ id: row.id, blockNumber: row.block_number, blockHash: row.block_hash }));
  }

  async confirmPayments(payments: ReadonlyArray<{ id: string; blockHash: string }>, now: Date): Promise<void> {
    if (payments.length === 0) return;
    await this.prisma.$transaction(async (tx) => {
      const confirmed = await tx.$queryRaw<Array<{ session_id: string | null }>>`
        UPDATE payments p SET state = 'confirmed', updated_at = ${now}
          FROM unnest(${payments.map((x) => x.id)}::text[], ${payments.map((x) => x.blockHash)}::text[])
               AS checked(id, block_hash)
         WHERE p.id = checked.id::uuid AND p.block_hash = checked.block_hash AND p.state = 'seen'
        RETURNING p.session_id`;
      const sessions = [...new Set(confirmed.map((row) => row.session_id).filter((id): id is string => id !== null))];
      await markChanged(tx, sessions, now);
    }, TRANSACTION_OPTIONS);
  }

  async updateConfirmations(network: string, head: bigint): Promise<void> {
    await this.prisma.$executeRaw`
      UPDATE payments SET confirmations = GREATEST(0, (${head} - block_number + 1))::int
       WHERE network = ${network} AND state <> 'reversed' AND block_number > ${head} - 100000
         AND confirmations <> GREATEST(0, (${head} - block_number + 1))::int`;
  }

  boundTransactionsToCheck(chainId: string, limit: number) {
    return boundTransactions.toCheck(this.prisma, chainId, limit);
  }

  async unattributedPayments(limit: number): Promise<PaymentRecord[]> {
    const rows = await this.prisma.$queryRaw<PaymentRow[]>`
      SELECT id, network, chain_id, tx_hash, log_index, from_address, to_address, asset, token_address,
        base_units::text AS base_units,
             amount::text AS amount, block_number, block_hash, block_time, confirmations, state, session_id,
               attribution, reserved_for, late, created_at
        FROM payments WHERE session_id IS NULL AND state <> 'reversed'
       ORDER BY created_at, log_index LIMIT ${limit}`;
    return rows.map(toPaymentRecord);
  }

  async paymentsOfSession(sessionId: string): Promise<PaymentRecord[]> {
    const rows = await this.prisma.$queryRaw<PaymentRow[]>`
      SELECT id, network, chain_id, tx_hash, log_index, from_address, to_address, asset, token_address,
        base_units::text AS base_units,
             amount::text AS amount, block_number, block_hash, block_time, confirmations, state, session_id,
               attribution, reserved_for, late, created_at
        FROM payments WHERE session_id = ${sessionId}::uuid
       ORDER BY block_number, log_index`;
    return rows.map(toPaymentRecord);
  }
}

/**
 * Applies what decide() made of a scanned transfer: recorded, credited or reserved; credited to the session whose
 * exact payment it is, that session's asset is judged next (decide's exact_credit), as a verified bind would select it.
 */
async function applyScanOutcome(tx: Tx, transfer: ChainTransfer, outcome: ScanOutcome | null, now: Date) {
  const credit = outcome?.kind === 'credit' ? { sessionId: outcome.sessionId, attribution: outcome.attribution } : null;
  const reservedFor =
    outcome?.kind === 'reserve' ? outcome.sessionId : outcome?.kind === 'credit' ? outcome.reservedFor : null;
  const holder = await recordTransfer(tx, transfer, credit, now, reservedFor);
  if (holder && outcome?.kind === 'credit' && holder === outcome.exactOwner)
    await confirmExactCredit(tx, holder, transfer, now);
  // The first payment to a deposit address selects its asset and chain at the quote valid when it was mined.
  if (holder && credit?.attribution === 'deposit_address' && holder === credit.sessionId) {
    const minedAt = transfer.blockTime < now ? transfer.blockTime : now;
    await lockAsset(tx, holder, transfer.asset, transfer.network, transfer.chainId, minedAt, now);
  }
}

function toPaymentRecord(row: PaymentRow): PaymentRecord {
  return {
    id: row.id,
    network: row.network,
    chainId: row.chain_id,
    txHash: row.tx_hash,
    logIndex: row.log_index,
    from: row.from_address,
    to: row.to_address,
    asset: row.asset as AssetTicker,
    tokenAddress: row.token_address,
    baseUnits: BigInt(row.base_units),
    amount: toDecimal(row.amount),
    blockNumber: row.block_number,
    blockHash: row.block_hash,
    blockTime: row.block_time,
    state: row.state as PaymentRecord['state'],
    confirmations: row.confirmations,
    sessionId: row.session_id,
    attribution: row.attribution as Attribution | null,
    reservedFor: row.reserved_for,
    late: row.late,
    createdAt: row.created_at,
  };
}
