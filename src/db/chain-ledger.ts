import { randomUUID } from 'node:crypto';
import type { Prisma, PrismaClient } from '../generated/prisma/client.js';
import type { AssetTicker } from '../domain/assets.js';
import { OPEN_STATUSES } from '../domain/checkout-session.js';
import { NATIVE_COIN_DECIMALS } from '../domain/networks.js';
import { toDecimal } from '../domain/money.js';
import type { Attribution, AttributionCandidates, ChainTransfer } from '../domain/payments.js';
import type { ChainLedger, PaymentRecord, ScannedRange } from '../domain/ports.js';

type Tx = Prisma.TransactionClient;

const OPEN: readonly string[] = OPEN_STATUSES;
// Under 30 s like every transaction: the events feed takes an outbox gap older than KASSA_OUTBOX_GAP_SECONDS (60) for a rollback.
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
  confirmations: number;
  state: string;
  session_id: string | null;
  attribution: string | null;
  late: boolean;
  created_at: Date;
}

/** The chain watcher's storage over Prisma (raw SQL: row locks, upserts and set updates). */
export class PrismaChainLedger implements ChainLedger {
  constructor(private readonly prisma: PrismaClient) {}

  async leaseNetwork(network: string, chainId: string, instanceId: string, leaseSeconds: number, startBlock: bigint): Promise<bigint | null> {
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

  async watchedWallets(network: string, now: Date): Promise<string[]> {
    const rows = await this.prisma.$queryRaw<Array<{ wallet: string }>>`
      SELECT DISTINCT lower(n.wallet_address) AS wallet
        FROM checkout_session_networks n
        JOIN checkout_sessions s ON s.id = n.session_id
        JOIN organisations o ON o.id = s.organisation_id
       WHERE n.network = ${network}
         AND (s.status::text = ANY(${OPEN})
              OR s.expires_at + make_interval(mins => o.late_payment_window_minutes) > ${now})`;
    return rows.map((row) => row.wallet);
  }

  async recordedBlocks(network: string, limit: number): Promise<Array<{ number: bigint; hash: string }>> {
    return this.prisma.$queryRaw<Array<{ number: bigint; hash: string }>>`
      SELECT number, hash FROM chain_blocks WHERE network = ${network} ORDER BY number DESC LIMIT ${limit}`;
  }

  async recordRange(
    range: ScannedRange,
    instanceId: string,
    attribute: (candidates: AttributionCandidates) => { sessionId: string; attribution: Attribution } | null,
    now: Date,
  ): Promise<boolean> {
    return this.prisma.$transaction(async (tx) => {
      const cursor = await tx.$queryRaw<Array<{ next_block: bigint; leader: string | null }>>`
        SELECT next_block, leader FROM chain_cursors WHERE network = ${range.network} FOR UPDATE`;
      // Compare-and-set: a scanner that lost its lease, or raced another, writes nothing.
      if (cursor[0]?.next_block !== range.fromBlock || cursor[0]?.leader !== instanceId) return false;

      for (const transfer of range.transfers) {
        const decimals = range.decimals[transfer.tokenAddress ?? 'native'] ?? NATIVE_COIN_DECIMALS;
        const candidates = await findCandidates(tx, transfer, decimals, now);
        const match = attribute(candidates);
        await insertPayment(tx, transfer, match, now);
        await tx.$executeRaw`
          INSERT INTO chain_blocks (network, number, hash) VALUES (${range.network}, ${transfer.blockNumber}, ${transfer.blockHash})
          ON CONFLICT (network, number) DO UPDATE SET hash = EXCLUDED.hash`;
      }
      await tx.$executeRaw`
        INSERT INTO chain_blocks (network, number, hash) VALUES (${range.network}, ${range.toBlock}, ${range.toBlockHash})
        ON CONFLICT (network, number) DO UPDATE SET hash = EXCLUDED.hash`;
      await tx.$executeRaw`
        UPDATE chain_cursors SET next_block = ${range.toBlock + 1n}, updated_at = ${now} WHERE network = ${range.network}`;
      // Only recent hashes are needed to find a fork point.
      await tx.$executeRaw`
        DELETE FROM chain_blocks WHERE network = ${range.network} AND number < ${range.toBlock - 10_000n}`;
      return true;
    }, TRANSACTION_OPTIONS);
  }

  async rollBack(network: string, fromBlock: bigint, now: Date): Promise<number> {
    return this.prisma.$transaction(async (tx) => {
      await tx.$queryRaw`SELECT 1 FROM chain_cursors WHERE network = ${network} FOR UPDATE`;
      const reversed = await tx.$queryRaw<Array<{ session_id: string | null }>>`
        UPDATE payments SET state = 'reversed', confirmations = 0, updated_at = ${now}
         WHERE network = ${network} AND block_number >= ${fromBlock} AND state <> 'reversed'
        RETURNING session_id`;
      const sessions = [...new Set(reversed.map((row) => row.session_id).filter((id): id is string => id !== null))];
      if (sessions.length > 0) {
        await tx.$executeRaw`UPDATE checkout_sessions SET payments_changed_at = ${now} WHERE id::text = ANY(${sessions})`;
      }
      await tx.$executeRaw`DELETE FROM chain_blocks WHERE network = ${network} AND number >= ${fromBlock}`;
      await tx.$executeRaw`
        UPDATE chain_cursors SET next_block = LEAST(next_block, ${fromBlock}), updated_at = ${now} WHERE network = ${network}`;
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

  async confirmPayments(ids: readonly string[], now: Date): Promise<void> {
    if (ids.length === 0) return;
    await this.prisma.$transaction(async (tx) => {
      const confirmed = await tx.$queryRaw<Array<{ session_id: string | null }>>`
        UPDATE payments SET state = 'confirmed', updated_at = ${now}
         WHERE id::text = ANY(${[...ids]}) AND state = 'seen'
        RETURNING session_id`;
      const sessions = [...new Set(confirmed.map((row) => row.session_id).filter((id): id is string => id !== null))];
      if (sessions.length > 0) {
        await tx.$executeRaw`UPDATE checkout_sessions SET payments_changed_at = ${now} WHERE id::text = ANY(${sessions})`;
      }
    }, TRANSACTION_OPTIONS);
  }

  async updateConfirmations(network: string, head: bigint): Promise<void> {
    await this.prisma.$executeRaw`
      UPDATE payments SET confirmations = GREATEST(0, (${head} - block_number + 1))::int
       WHERE network = ${network} AND state <> 'reversed' AND block_number > ${head} - 100000
         AND confirmations <> GREATEST(0, (${head} - block_number + 1))::int`;
  }

  async boundSessionsToCheck(chainId: string, limit: number) {
    const rows = await this.prisma.$queryRaw<Array<{ id: string; bound_tx_hash: string }>>`
      SELECT id, bound_tx_hash FROM checkout_sessions
       WHERE chain_id = ${chainId} AND bound_tx_hash IS NOT NULL AND bound_tx_checked_at IS NULL
         AND status::text = ANY(${OPEN})
       ORDER BY bound_at
       LIMIT ${limit}`;
    return rows.map((row) => ({ sessionId: row.id, txHash: row.bound_tx_hash }));
  }

  async markBoundTransactionValid(sessionId: string, at: Date): Promise<void> {
    await this.prisma.$executeRaw`UPDATE checkout_sessions SET bound_tx_checked_at = ${at} WHERE id = ${sessionId}::uuid`;
  }

  async unattributedPayments(limit: number): Promise<PaymentRecord[]> {
    const rows = await this.prisma.$queryRaw<PaymentRow[]>`
      SELECT id, network, chain_id, tx_hash, log_index, from_address, to_address, asset, token_address, base_units::text AS base_units,
             amount::text AS amount, block_number, block_hash, confirmations, state, session_id, attribution, late, created_at
        FROM payments WHERE session_id IS NULL AND state <> 'reversed'
       ORDER BY created_at, log_index LIMIT ${limit}`;
    return rows.map(toPaymentRecord);
  }

  async paymentsOfSession(sessionId: string): Promise<PaymentRecord[]> {
    const rows = await this.prisma.$queryRaw<PaymentRow[]>`
      SELECT id, network, chain_id, tx_hash, log_index, from_address, to_address, asset, token_address, base_units::text AS base_units,
             amount::text AS amount, block_number, block_hash, confirmations, state, session_id, attribution, late, created_at
        FROM payments WHERE session_id = ${sessionId}::uuid
       ORDER BY block_number, log_index`;
    return rows.map(toPaymentRecord);
  }
}

async function findCandidates(tx: Tx, transfer: ChainTransfer, decimals: number, now: Date): Promise<AttributionCandidates> {
  const bound = await tx.$queryRaw<Array<{ id: string }>>`
    SELECT id FROM checkout_sessions WHERE bound_tx_hash = ${transfer.txHash} AND chain_id = ${transfer.chainId}`;
  const payer = await tx.$queryRaw<Array<{ id: string; open: boolean }>>`
    SELECT s.id, s.status::text = ANY(${OPEN}) AS open
      FROM checkout_sessions s
      JOIN checkout_session_networks n ON n.session_id = s.id
      JOIN organisations o ON o.id = s.organisation_id
     WHERE n.network = ${transfer.network} AND lower(n.wallet_address) = ${transfer.to}
       AND s.payer_wallet_address = ${transfer.from} AND s.chain_id = ${transfer.chainId}
       -- Only once the bound transaction was found valid (and sent by that wallet): a payer
       -- wallet typed into a bind proves nothing by itself.
       AND s.bound_tx_checked_at IS NOT NULL
       AND (s.status::text = ANY(${OPEN}) OR s.expires_at + make_interval(mins => o.late_payment_window_minutes) > ${now})
     ORDER BY s.bound_at DESC`;
  const exact = await tx.$queryRaw<Array<{ id: string }>>`
    SELECT s.id
      FROM checkout_sessions s
      JOIN checkout_session_networks n ON n.session_id = s.id
      JOIN checkout_session_quotes q ON q.session_id = s.id AND q.ticker = ${transfer.asset}
     WHERE n.network = ${transfer.network} AND lower(n.wallet_address) = ${transfer.to}
       AND s.status::text = ANY(${OPEN}) AND s.bound_tx_hash IS NULL
       AND (s.crypto_currency IS NULL OR s.crypto_currency = ${transfer.asset})
       AND ceil(q.amount * power(10::numeric, ${decimals})) = ${transfer.baseUnits.toString()}::numeric
     LIMIT 2`;
  return {
    boundSessionId: bound[0]?.id ?? null,
    payerWalletSessionIds: payer.filter((row) => row.open).map((row) => row.id),
    latePayerWalletSessionIds: payer.filter((row) => !row.open).map((row) => row.id),
    exactAmountSessionIds: exact.map((row) => row.id),
  };
}

async function insertPayment(tx: Tx, transfer: ChainTransfer, match: { sessionId: string; attribution: Attribution } | null, now: Date): Promise<void> {
  let late = false;
  if (match) {
    const session = await tx.$queryRaw<Array<{ status: string; crypto_currency: string | null }>>`
      SELECT status::text AS status, crypto_currency FROM checkout_sessions WHERE id = ${match.sessionId}::uuid FOR UPDATE`;
    late = session.length > 0 && !OPEN.includes(session[0]!.status);
    if (match.attribution === 'exact_amount' && session[0]?.crypto_currency === null) {
      // An exact payment in an asset selects that asset, as a bind would.
      await tx.$executeRaw`
        UPDATE checkout_sessions s
           SET crypto_currency = ${transfer.asset}, chain_id = ${transfer.chainId}, updated_at = ${now},
               total_amount_crypto = (SELECT q.amount FROM checkout_session_quotes q WHERE q.session_id = s.id AND q.ticker = ${transfer.asset})
         WHERE s.id = ${match.sessionId}::uuid AND s.crypto_currency IS NULL`;
    }
  }
  // A transfer seen again after a reorg (re-included in another block) is revived with its new block.
  await tx.$executeRaw`
    INSERT INTO payments (id, network, chain_id, tx_hash, log_index, from_address, to_address, asset, token_address,
                          base_units, amount, block_number, block_hash, state, session_id, attribution, late, created_at, updated_at)
    VALUES (${randomUUID()}::uuid, ${transfer.network}, ${transfer.chainId}, ${transfer.txHash}, ${transfer.logIndex},
            ${transfer.from}, ${transfer.to}, ${transfer.asset}, ${transfer.tokenAddress},
            ${transfer.baseUnits.toString()}::numeric, ${transfer.amount.toFixed()}::numeric, ${transfer.blockNumber}, ${transfer.blockHash},
            'seen', ${match?.sessionId ?? null}::uuid, ${match?.attribution ?? null}, ${late}, ${now}, ${now})
    ON CONFLICT (chain_id, tx_hash, log_index) DO UPDATE
       SET state = 'seen', block_number = EXCLUDED.block_number, block_hash = EXCLUDED.block_hash, updated_at = EXCLUDED.updated_at
     WHERE payments.state = 'reversed'`;
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
    state: row.state as PaymentRecord['state'],
    confirmations: row.confirmations,
    sessionId: row.session_id,
    attribution: row.attribution as Attribution | null,
    late: row.late,
    createdAt: row.created_at,
  };
}
