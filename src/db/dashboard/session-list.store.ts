import { Prisma, type PrismaClient } from '../../generated/prisma/client.js';
import type { CheckoutSessionStatus } from '../../domain/sessions/checkout-session.js';
import { OPEN_STATUSES } from '../../domain/sessions/checkout-session.js';
import type {
  DashboardSessionReader,
  SessionFilter,
  SessionListRow,
} from '../../domain/dashboard/session-list-ports.js';
import { Decimal } from '../../domain/shared/money.js';
import { metadataPair } from '../../domain/dashboard/session-list.js';
import { isUuid } from '../../domain/shared/uuid.js';
import { timeline } from './session-timeline.store.js';

const OPEN: readonly string[] = OPEN_STATUSES;

/** The status reads show (docs/payment-rules.md#statuses): open, past expiry, nothing bound → expired. */
function statusSql(now: Date): Prisma.Sql {
  return Prisma.sql`(CASE WHEN s.status::text = ANY(${OPEN}::text[]) AND s.expires_at <= ${now}
                          AND s.bound_tx_hash IS NULL THEN 'expired' ELSE s.status::text END)`;
}

/**
 * The statuses as reads show them, written on the stored status so the (organisation, status, created_at) index
 * answers: an open status excludes its sessions past expiry with nothing bound, `expired` takes them in.
 */
function statusCondition(statuses: readonly CheckoutSessionStatus[], now: Date): Prisma.Sql {
  const lapsed = Prisma.sql`(s.expires_at <= ${now} AND s.bound_tx_hash IS NULL)`;
  const stored = (list: readonly string[]) => Prisma.sql`s.status = ANY(${[...list]}::checkout_session_status[])`;
  const open = statuses.filter((status) => OPEN.includes(status));
  const closed = statuses.filter((status) => !OPEN.includes(status));
  const parts: Prisma.Sql[] = [];
  if (closed.length > 0) parts.push(stored(closed));
  if (open.length > 0) parts.push(Prisma.sql`(${stored(open)} AND NOT ${lapsed})`);
  if (statuses.includes('expired')) parts.push(Prisma.sql`(${stored(OPEN)} AND ${lapsed})`);
  return Prisma.sql`(${Prisma.join(parts, ' OR ')})`;
}

function columnsSql(now: Date): Prisma.Sql {
  return Prisma.sql`s.id, ${statusSql(now)} AS status, s.fiat_currency, s.total_amount_fiat::text AS total_amount_fiat,
    s.crypto_currency, s.total_amount_crypto::text AS total_amount_crypto, s.amount_received::text AS amount_received,
    s.user_email, s.user_id, s.product_payment_link_id, s.bound_tx_hash, s.created_at, s.expires_at`;
}

interface Row {
  id: string;
  status: string;
  fiat_currency: string;
  total_amount_fiat: string;
  crypto_currency: string | null;
  total_amount_crypto: string | null;
  amount_received: string;
  user_email: string | null;
  user_id: string;
  product_payment_link_id: string | null;
  bound_tx_hash: string | null;
  created_at: Date;
  expires_at: Date;
  metadata?: unknown;
}

function toRow(row: Row): SessionListRow {
  return {
    id: row.id,
    status: row.status as CheckoutSessionStatus,
    fiatCurrency: row.fiat_currency,
    totalAmountFiat: new Decimal(row.total_amount_fiat),
    cryptoCurrency: row.crypto_currency,
    totalAmountCrypto: row.total_amount_crypto === null ? null : new Decimal(row.total_amount_crypto),
    amountReceived: new Decimal(row.amount_received),
    payerEmail: row.user_email,
    payerId: row.user_id,
    paymentLinkId: row.product_payment_link_id,
    boundTxHash: row.bound_tx_hash,
    createdAt: row.created_at,
    expiresAt: row.expires_at,
  };
}

/** `key=value`: containment, which the GIN index answers; other text: a case-insensitive search of the JSON text. */
function metadataCondition(text: string): Prisma.Sql {
  const pair = metadataPair(text);
  if (pair) {
    const asText = JSON.stringify({ [pair.key]: pair.value });
    const literal = /^-?\d+(\.\d+)?$|^true$|^false$/.test(pair.value)
      ? `{${JSON.stringify(pair.key)}:${pair.value}}`
      : null;
    return literal
      ? Prisma.sql`(s.metadata @> ${asText}::jsonb OR s.metadata @> ${literal}::jsonb)`
      : Prisma.sql`s.metadata @> ${asText}::jsonb`;
  }
  const pattern = `%${text.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
  return Prisma.sql`s.metadata::text ILIKE ${pattern}`;
}

/** The filter as SQL conditions on `s` (checkout_sessions), each optional. */
function conditions(organisationId: string, filter: SessionFilter, now: Date): Prisma.Sql[] {
  const where: Prisma.Sql[] = [];
  if (filter.statuses?.length) where.push(statusCondition(filter.statuses, now));
  if (filter.asset) where.push(Prisma.sql`s.crypto_currency = ${filter.asset}`);
  if (filter.network)
    where.push(Prisma.sql`(
      EXISTS (SELECT 1 FROM payments p WHERE p.session_id = s.id AND p.network = ${filter.network})
      OR EXISTS (SELECT 1 FROM checkout_session_transactions t
                  WHERE t.session_id = s.id AND t.network = ${filter.network}))`);
  if (filter.createdFrom) where.push(Prisma.sql`s.created_at >= ${filter.createdFrom}`);
  if (filter.createdBefore) where.push(Prisma.sql`s.created_at < ${filter.createdBefore}`);
  if (filter.fiatCurrency) where.push(Prisma.sql`s.fiat_currency = ${filter.fiatCurrency}`);
  if (filter.fiatMin) where.push(Prisma.sql`s.total_amount_fiat >= ${filter.fiatMin.toFixed()}::numeric`);
  if (filter.fiatMax) where.push(Prisma.sql`s.total_amount_fiat <= ${filter.fiatMax.toFixed()}::numeric`);
  if (filter.payer)
    where.push(Prisma.sql`(lower(s.user_email) = lower(${filter.payer}) OR s.user_id = ${filter.payer})`);
  // ARRAY(…) is computed first and looked up by id: a semi-join here would scan the organisation's sessions.
  if (filter.txHash)
    where.push(Prisma.sql`s.id = ANY(ARRAY(
      SELECT b.id FROM checkout_sessions b WHERE b.bound_tx_hash = ${filter.txHash}
      UNION SELECT p.session_id FROM payments p WHERE p.tx_hash = ${filter.txHash} AND p.session_id IS NOT NULL
      UNION SELECT t.session_id FROM checkout_session_transactions t WHERE t.tx_hash = ${filter.txHash}))`);
  if (filter.paymentLinkId) where.push(Prisma.sql`s.product_payment_link_id = ${filter.paymentLinkId}::uuid`);
  if (filter.payerWallet)
    where.push(Prisma.sql`s.id = ANY(ARRAY(
      SELECT w.id FROM checkout_sessions w
       WHERE w.organisation_id = ${organisationId}::uuid AND lower(w.payer_wallet_address) = ${filter.payerWallet}
      UNION SELECT p.session_id FROM payments p
       WHERE lower(p.from_address) = ${filter.payerWallet} AND p.session_id IS NOT NULL
      UNION SELECT t.session_id FROM checkout_session_transactions t
       WHERE lower(t.payer_wallet_address) = ${filter.payerWallet}))`);
  if (filter.metadata) where.push(metadataCondition(filter.metadata));
  return where;
}

export function createDashboardSessionReader(prisma: PrismaClient): DashboardSessionReader {
  const payments: DashboardSessionReader['payments'] = async (organisationId, sessionIds) => {
    if (sessionIds.length === 0) return [];
    // The rate in force at the block's time: the old price of the first re-pricing after it, else the quote's.
    const rows = await prisma.$queryRaw<
      Array<{
        session_id: string;
        block_time: Date;
        block_number: bigint;
        log_index: number;
        tx_hash: string;
        network: string;
        asset: string;
        amount: string;
        state: string;
        fiat_currency: string;
        rate: string | null;
      }>
    >`
      SELECT p.session_id, p.block_time, p.block_number, p.log_index, p.tx_hash, p.network, p.asset,
             p.amount::text AS amount, p.state, s.fiat_currency,
             COALESCE((SELECT qc.old_unit_price_fiat FROM checkout_session_quote_changes qc
                       WHERE qc.session_id = p.session_id AND qc.ticker = p.asset AND qc.created_at > p.block_time
                       ORDER BY qc.created_at, qc.id LIMIT 1), q.unit_price_fiat)::text AS rate
      FROM payments p
      JOIN checkout_sessions s ON s.id = p.session_id
      LEFT JOIN checkout_session_quotes q ON q.session_id = p.session_id AND q.ticker = p.asset
      WHERE s.organisation_id = ${organisationId}::uuid AND p.session_id = ANY(${[...sessionIds]}::uuid[]) AND p.live
        AND p.state <> 'reversed'
      ORDER BY p.block_number, p.log_index, p.id`;
    return rows.map((row) => ({
      sessionId: row.session_id,
      blockTime: row.block_time,
      blockNumber: row.block_number,
      logIndex: row.log_index,
      txHash: row.tx_hash,
      network: row.network,
      asset: row.asset,
      amount: new Decimal(row.amount),
      state: row.state,
      fiatCurrency: row.fiat_currency,
      rate: row.rate === null ? null : new Decimal(row.rate),
    }));
  };

  return {
    payments,
    async ofOrganisation(organisationId, sessionIds) {
      const ids = sessionIds.filter(isUuid);
      if (ids.length === 0) return [];
      const rows = await prisma.$queryRaw<Array<{ id: string }>>`
        SELECT id FROM checkout_sessions WHERE id = ANY(${ids}::uuid[]) AND organisation_id = ${organisationId}::uuid`;
      return rows.map((row) => row.id);
    },
    async list(organisationId, filter, limit, after, now) {
      const where = [
        Prisma.sql`s.organisation_id = ${organisationId}::uuid`,
        ...conditions(organisationId, filter, now),
      ];
      if (after) where.push(Prisma.sql`(s.created_at, s.id) < (${after.createdAt}, ${after.id}::uuid)`);
      const rows = await prisma.$queryRaw<Row[]>`
        SELECT ${columnsSql(now)} FROM checkout_sessions s
         WHERE ${Prisma.join(where, ' AND ')}
         ORDER BY s.created_at DESC, s.id DESC
         LIMIT ${limit}`;
      return rows.map(toRow);
    },
    async story(organisationId, sessionId, now) {
      const rows = await prisma.$queryRaw<Row[]>`
        SELECT ${columnsSql(now)}, s.metadata FROM checkout_sessions s
         WHERE s.id = ${sessionId}::uuid AND s.organisation_id = ${organisationId}::uuid`;
      const found = rows[0];
      if (!found) return null;
      const row = toRow(found);
      const [items, quotes] = await Promise.all([
        prisma.checkoutSessionItem.findMany({ where: { sessionId }, orderBy: { position: 'asc' } }),
        prisma.checkoutSessionQuote.findMany({ where: { sessionId }, orderBy: { position: 'asc' } }),
      ]);
      return {
        ...row,
        metadata: JSON.stringify(found.metadata ?? {}),
        items: items.map((item) => ({
          name: item.name,
          quantity: item.quantity,
          unitPrice: new Decimal(item.unitPrice.toString()),
          totalPrice: new Decimal(item.totalPrice.toString()),
        })),
        quotes: quotes.map((quote) => ({
          ticker: quote.ticker,
          unitPriceFiat: new Decimal(quote.unitPriceFiat.toString()),
          amount: new Decimal(quote.amount.toString()),
          rateSource: quote.rateSource,
          ratedAt: quote.ratedAt,
        })),
        timeline: await timeline(prisma, row),
      };
    },
  };
}
