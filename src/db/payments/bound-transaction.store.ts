import type { Prisma, PrismaClient } from '../../generated/prisma/client.js';
import type { AssetTicker } from '../../domain/shared/assets.js';
import { OPEN_STATUSES } from '../../domain/sessions/checkout-session.js';
import type { BoundTransaction } from '../../domain/payments/chain-ports.js';
import type { RejectionCode } from '../../domain/shared/reason-codes.js';

type Client = Prisma.TransactionClient;
const OPEN: readonly string[] = OPEN_STATUSES;

interface BoundTransactionRow {
  id: string;
  session_id: string;
  network: string;
  chain_id: string;
  tx_hash: string;
  crypto_currency: string;
  payer_wallet_address: string | null;
  state: string;
  reason_code: string | null;
  reason: string | null;
  seen_on_chain_at: Date | null;
  client_address: string | null;
  created_at: Date;
}

const COLUMNS =
  'id, session_id, network, chain_id, tx_hash, crypto_currency, payer_wallet_address, state, reason_code, reason, ' +
  'seen_on_chain_at, client_address, created_at';

function toBoundTransaction(row: BoundTransactionRow): BoundTransaction {
  return {
    id: row.id,
    sessionId: row.session_id,
    network: row.network,
    chainId: row.chain_id,
    txHash: row.tx_hash,
    cryptoCurrency: row.crypto_currency as AssetTicker,
    payerWalletAddress: row.payer_wallet_address,
    state: row.state as BoundTransaction['state'],
    reasonCode: row.reason_code as RejectionCode | null,
    reason: row.reason,
    seenOnChainAt: row.seen_on_chain_at,
    clientAddress: row.client_address,
    createdAt: row.created_at,
  };
}

/** The transactions payers bound to sessions (docs/payment-rules.md, rule 3: a bind is a hint). */
export const boundTransactions = {
  async ofSession(client: Client, sessionId: string): Promise<BoundTransaction[]> {
    const rows = await client.$queryRawUnsafe<BoundTransactionRow[]>(
      `SELECT ${COLUMNS} FROM checkout_session_transactions WHERE session_id = $1::uuid ORDER BY created_at, id`,
      sessionId,
    );
    return rows.map(toBoundTransaction);
  },

  /** Not rejected, of other open sessions: a transaction one payer bound that another wants to bind too. */
  async ofOtherOpenSessions(
    client: Client,
    txHash: string,
    chainId: string,
    sessionId: string,
  ): Promise<BoundTransaction[]> {
    const rows = await client.$queryRaw<BoundTransactionRow[]>`
      SELECT t.id, t.session_id, t.network, t.chain_id, t.tx_hash, t.crypto_currency, t.payer_wallet_address,
        t.state, t.reason_code, t.reason,
             t.seen_on_chain_at, t.client_address, t.created_at
        FROM checkout_session_transactions t JOIN checkout_sessions s ON s.id = t.session_id
       WHERE t.tx_hash = ${txHash} AND t.chain_id = ${chainId} AND t.session_id <> ${sessionId}::uuid
         AND t.state <> 'rejected' AND s.status::text = ANY(${OPEN})`;
    return rows.map(toBoundTransaction);
  },

  async insert(client: Client, bound: BoundTransaction): Promise<void> {
    await client.$executeRaw`
      INSERT INTO checkout_session_transactions (id, session_id, network, chain_id, tx_hash, crypto_currency,
        payer_wallet_address, state, reason_code, reason, seen_on_chain_at, client_address, created_at, updated_at)
      VALUES (${bound.id}::uuid, ${bound.sessionId}::uuid, ${bound.network}, ${bound.chainId}, ${bound.txHash},
        ${bound.cryptoCurrency}, ${bound.payerWalletAddress}, ${bound.state}, ${bound.reasonCode}, ${bound.reason},
        ${bound.seenOnChainAt},
        ${bound.clientAddress}, ${bound.createdAt}, ${bound.createdAt})`;
  },

  async remove(client: Client, id: string): Promise<void> {
    await client.$executeRaw`DELETE FROM checkout_session_transactions WHERE id = ${id}::uuid`;
  },

  async update(
    client: Client,
    id: string,
    patch: {
      state?: BoundTransaction['state'];
      reasonCode?: RejectionCode;
      reason?: string;
      seenOnChainAt?: Date;
      checkedAt: Date;
    },
  ): Promise<void> {
    await client.$executeRaw`
      UPDATE checkout_session_transactions
         SET state = COALESCE(${patch.state ?? null}, state), reason = COALESCE(${patch.reason ?? null}, reason),
             reason_code = COALESCE(${patch.reasonCode ?? null}, reason_code),
             seen_on_chain_at = COALESCE(seen_on_chain_at, ${patch.seenOnChainAt ?? null}::timestamptz),
             checked_at = ${patch.checkedAt}, updated_at = ${patch.checkedAt}
       WHERE id = ${id}::uuid`;
  },

  /**
   * Not judged yet, on one chain, of open sessions or of closed ones a transfer of the transaction pays already (the
   * scan paid it by amount first): never checked first, then least recently checked, so junk never fills every pass.
   */
  async toCheck(client: Client | PrismaClient, chainId: string, limit: number): Promise<BoundTransaction[]> {
    const rows = await client.$queryRaw<BoundTransactionRow[]>`
      SELECT t.id, t.session_id, t.network, t.chain_id, t.tx_hash, t.crypto_currency, t.payer_wallet_address,
        t.state, t.reason_code, t.reason,
             t.seen_on_chain_at, t.client_address, t.created_at
        FROM checkout_session_transactions t JOIN checkout_sessions s ON s.id = t.session_id
       WHERE t.chain_id = ${chainId} AND t.state = 'unverified'
         AND (s.status::text = ANY(${OPEN}) OR EXISTS (
              SELECT 1 FROM payments p
               WHERE p.chain_id = t.chain_id AND p.tx_hash = t.tx_hash AND p.session_id = t.session_id
                 AND p.state <> 'reversed'))
       ORDER BY t.checked_at NULLS FIRST, t.created_at
       LIMIT ${limit}`;
    return rows.map(toBoundTransaction);
  },
};
