import { Prisma, type PrismaClient } from '../../generated/prisma/client.js';
import type { AssetTicker } from '../../domain/shared/assets.js';
import type { CheckoutSession, CheckoutSessionStatus } from '../../domain/sessions/checkout-session.js';
import { toDecimal } from '../../domain/shared/money.js';

type Client = PrismaClient | Prisma.TransactionClient;

interface SessionReadRow {
  id: string;
  organisation_id: string;
  organisation_name: string;
  organisation_deleted: boolean;
  owner_user_id: string | null;
  status: CheckoutSessionStatus;
  source: string;
  from_payment_link: boolean;
  anonymous: boolean;
  requires_payer_identity: boolean;
  identity_options: string[] | null;
  product_payment_link_id: string | null;
  fiat_currency: string;
  total_amount_fiat: string;
  crypto_currency: string | null;
  total_amount_crypto: string | null;
  expires_at: Date;
  overpaid: boolean;
  bound_tx_hash: string | null;
  bound_at: Date | null;
  bound_tx_checked_at: Date | null;
  payer_wallet_address: string | null;
  chain_id: string | null;
  failure_reason: string | null;
  amount_received: string;
  amount_received_late: string;
  amount_pending: string;
  rest_amount: string | null;
  quoted_at: Date;
  underpayment_tolerance_percent: string;
  late_payment_window_minutes: number;
  user_id: string;
  user_email: string | null;
  user_telegram_id: string | null;
  user_username: string | null;
  metadata: Record<string, unknown> | null;
  created_at: Date;
  updated_at: Date;
  items: Array<{ name: string; quantity: number; unitPrice: string; totalPrice: string; productId: string | null }>;
  quotes: Array<{
    ticker: string;
    assetId: string;
    unitPriceFiat: string;
    amount: string;
    baseAmount: string;
    amountStep: string;
    offsetSteps: number;
    rateSource: string;
    ratedAt: string;
    rounding: string;
  }>;
  networks: Array<{ network: string; chainId: string; walletAddress: string }>;
}

/**
 * Reads a whole session in one round trip, the hottest query: one raw statement costs half the CPU of findUnique with
 * includes (docs/benchmarks.md). Amounts travel as text, so no float touches them.
 */
export async function readSession(
  client: Client,
  id: string,
  options: { lock?: boolean } = {},
): Promise<CheckoutSession | null> {
  // FOR UPDATE OF s: the session row is locked by the read itself (the organisation's is not).
  const lock = options.lock ? Prisma.sql`FOR UPDATE OF s` : Prisma.empty;
  const rows = await client.$queryRaw<SessionReadRow[]>`
    SELECT s.id, s.organisation_id, o.name AS organisation_name, o.deleted_at IS NOT NULL AS organisation_deleted,
           s.owner_user_id, s.status::text AS status, s.source, s.from_payment_link, s.anonymous,
             s.requires_payer_identity,
           s.identity_options, s.product_payment_link_id, s.fiat_currency,
             s.total_amount_fiat::text AS total_amount_fiat,
           s.crypto_currency, s.total_amount_crypto::text AS total_amount_crypto, s.expires_at, s.overpaid,
             s.bound_tx_hash,
           s.bound_at, s.bound_tx_checked_at, s.payer_wallet_address, s.chain_id, s.failure_reason,
             s.amount_received::text AS amount_received,
           s.amount_received_late::text AS amount_received_late, s.amount_pending::text AS amount_pending,
           s.rest_amount::text AS rest_amount, s.quoted_at,
           o.underpayment_tolerance_percent::text AS underpayment_tolerance_percent, o.late_payment_window_minutes,
             s.user_id, s.user_email, s.user_telegram_id,
           s.user_username, s.metadata, s.created_at, s.updated_at,
           COALESCE((SELECT json_agg(json_build_object('name', i.name, 'quantity', i.quantity, 'unitPrice',
             i.unit_price::text,
                       'totalPrice', i.total_price::text, 'productId', i.product_id) ORDER BY i.position)
                     FROM checkout_session_items i WHERE i.session_id = s.id), '[]'::json) AS items,
           COALESCE((SELECT json_agg(json_build_object('ticker', q.ticker, 'assetId', q.asset_id, 'unitPriceFiat',
             q.unit_price_fiat::text,
                       'amount', q.amount::text, 'baseAmount', q.base_amount::text,
                       'amountStep', q.amount_step::text, 'offsetSteps', q.offset_steps, 'rateSource',
                         q.rate_source, 'ratedAt', q.rated_at, 'rounding', q.rounding) ORDER BY q.position)
                     FROM checkout_session_quotes q WHERE q.session_id = s.id), '[]'::json) AS quotes,
           COALESCE((SELECT json_agg(json_build_object('network', n.network, 'chainId', n.chain_id, 'walletAddress',
             n.wallet_address)
                       ORDER BY n.position)
                     FROM checkout_session_networks n WHERE n.session_id = s.id), '[]'::json) AS networks
      FROM checkout_sessions s
      JOIN organisations o ON o.id = s.organisation_id
     WHERE s.id = ${id}::uuid
     ${lock}`;
  const row = rows[0];
  return row ? toCheckoutSession(row) : null;
}

function toCheckoutSession(row: SessionReadRow): CheckoutSession {
  return {
    id: row.id,
    organisationId: row.organisation_id,
    organisationName: row.organisation_name,
    organisationDeleted: row.organisation_deleted,
    ownerUserId: row.owner_user_id,
    status: row.status,
    source: row.source,
    fromPaymentLink: row.from_payment_link,
    anonymous: row.anonymous,
    requiresPayerIdentity: row.requires_payer_identity,
    identityOptions: row.identity_options ?? [],
    productPaymentLinkId: row.product_payment_link_id,
    fiatCurrency: row.fiat_currency,
    totalAmountFiat: toDecimal(row.total_amount_fiat),
    cryptoCurrency: row.crypto_currency as AssetTicker | null,
    totalAmountCrypto: row.total_amount_crypto === null ? null : toDecimal(row.total_amount_crypto),
    networks: row.networks,
    quotes: row.quotes.map((q) => ({
      ticker: q.ticker as AssetTicker,
      assetId: q.assetId,
      unitPriceFiat: toDecimal(q.unitPriceFiat),
      amount: toDecimal(q.amount),
      baseAmount: toDecimal(q.baseAmount),
      amountStep: toDecimal(q.amountStep),
      offsetSteps: q.offsetSteps,
      rateSource: q.rateSource,
      ratedAt: new Date(q.ratedAt),
      rounding: q.rounding,
    })),
    items: row.items.map((i) => ({
      name: i.name,
      quantity: i.quantity,
      unitPrice: toDecimal(i.unitPrice),
      totalPrice: toDecimal(i.totalPrice),
      productId: i.productId,
    })),
    expiresAt: row.expires_at,
    overpaid: row.overpaid,
    boundTxHash: row.bound_tx_hash,
    boundAt: row.bound_at,
    boundTxCheckedAt: row.bound_tx_checked_at,
    payerWalletAddress: row.payer_wallet_address,
    chainId: row.chain_id,
    failureReason: row.failure_reason,
    amountReceived: toDecimal(row.amount_received),
    amountReceivedLate: toDecimal(row.amount_received_late),
    amountPending: toDecimal(row.amount_pending),
    restAmount: row.rest_amount === null ? null : toDecimal(row.rest_amount),
    quotedAt: row.quoted_at,
    paymentPolicy: {
      underpaymentTolerancePercent: toDecimal(row.underpayment_tolerance_percent),
      latePaymentWindowMinutes: row.late_payment_window_minutes,
    },
    user: { id: row.user_id, email: row.user_email, telegramId: row.user_telegram_id, username: row.user_username },
    metadata: row.metadata ?? {},
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}
