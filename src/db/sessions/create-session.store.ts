import type { CreateBatcher } from './create-batcher.js';
import { sharedText } from '../../domain/shared/money.js';
import type { AssetTicker } from '../../domain/shared/assets.js';
import type { CheckoutSession } from '../../domain/sessions/checkout-session.js';
import type { NewSessionOutcome, NewSessionWrite } from '../../domain/sessions/session-ports.js';
import type { AmountClaimRequest } from '../../domain/payments/payment-ports.js';
import { EVERY_STEP } from '../../domain/rates/quotes.js';
import { SHARED_WALLET_RECEIVING, type SessionReceiving } from '../../domain/organisations/deposit-addresses.js';

/**
 * Rows as kassa_create_checkout_session() takes them: every column but ROW_COLUMNS_FILLED_BY_SQL, by name;
 * test/integration/raw-sql-agreement.test.ts holds these keys to prisma/schema.prisma.
 */
export const ROW_COLUMNS_FILLED_BY_SQL = {
  checkout_sessions: [],
  checkout_session_items: ['session_id'],
  checkout_session_quotes: ['session_id', 'rounding'],
  checkout_session_networks: ['session_id'],
} as const;

export function sessionRow(
  session: CheckoutSession,
  receiving: SessionReceiving = SHARED_WALLET_RECEIVING,
): Record<string, unknown> {
  return {
    id: session.id,
    organisation_id: session.organisationId,
    status: session.status,
    source: session.source,
    from_payment_link: session.fromPaymentLink,
    anonymous: session.anonymous,
    requires_payer_identity: session.requiresPayerIdentity,
    identity_options: [...session.identityOptions],
    product_payment_link_id: session.productPaymentLinkId,
    owner_user_id: session.ownerUserId,
    fiat_currency: session.fiatCurrency,
    total_amount_fiat: session.totalAmountFiat.toFixed(),
    crypto_currency: session.cryptoCurrency,
    total_amount_crypto: session.totalAmountCrypto?.toFixed() ?? null,
    supported_networks: session.networks.map((network) => network.network),
    expires_at: session.expiresAt.toISOString(),
    overpaid: session.overpaid,
    bound_tx_hash: session.boundTxHash,
    bound_at: session.boundAt?.toISOString() ?? null,
    payer_wallet_address: session.payerWalletAddress,
    chain_id: session.chainId,
    failure_reason: session.failureReason,
    amount_received: session.amountReceived.toFixed(),
    amount_received_late: session.amountReceivedLate.toFixed(),
    amount_pending: session.amountPending.toFixed(),
    rest_amount: session.restAmount?.toFixed() ?? null,
    quoted_at: session.quotedAt.toISOString(),
    payments_changed_at: null,
    bound_tx_checked_at: session.boundTxCheckedAt?.toISOString() ?? null,
    user_id: session.user.id,
    user_email: session.user.email,
    user_telegram_id: session.user.telegramId,
    user_username: session.user.username,
    metadata: session.metadata,
    created_at: session.createdAt.toISOString(),
    updated_at: session.updatedAt.toISOString(),
    receiving_mode: receiving.mode,
  };
}

export function itemRows(session: CheckoutSession): Array<Record<string, unknown>> {
  return session.items.map((item, position) => ({
    position,
    name: item.name,
    quantity: item.quantity,
    unit_price: item.unitPrice.toFixed(),
    total_price: item.totalPrice.toFixed(),
    product_id: item.productId,
  }));
}

/** The quotes; one whose rounding rule is not `rounding` (the one given once for all) names its own. */
export function quoteRows(
  session: CheckoutSession,
  rounding = sharedRounding(session),
): Array<Record<string, unknown>> {
  return session.quotes.map((quote, position) => ({
    position,
    ticker: quote.ticker,
    asset_id: quote.assetId,
    unit_price_fiat: sharedText(quote.unitPriceFiat).plain,
    amount: quote.amount.toFixed(),
    base_amount: quote.baseAmount.toFixed(),
    amount_step: sharedText(quote.amountStep).plain,
    offset_steps: quote.offsetSteps,
    rate_source: quote.rateSource,
    rated_at: quote.ratedAt.toISOString(),
    ...(quote.rounding === rounding ? {} : { rounding: quote.rounding }),
  }));
}

/** The rounding rule written once for every quote (they all share AMOUNT_ROUNDING). */
export function sharedRounding(session: CheckoutSession): string {
  return session.quotes[0]?.rounding ?? '';
}

export function networkRows(
  session: CheckoutSession,
  receiving: SessionReceiving = SHARED_WALLET_RECEIVING,
): Array<Record<string, unknown>> {
  return session.networks.map((network, position) => ({
    position,
    network: network.network,
    chain_id: network.chainId,
    wallet_address: network.walletAddress,
    deposit_destination: receiving.destinations[network.network] ?? null,
  }));
}

type Claim = AmountClaimRequest;

/**
 * The step each unique amount tries first (docs/payment-rules.md, rule 4): the one after the last handed out for the
 * same base and wallets, so one price's sessions need no claim lookups; a held step makes the database search. Bounded.
 */
export class OffsetHints {
  private readonly next = new Map<string, number>();

  constructor(private readonly capacity = 10_000) {}

  /** The step to try for `claim`, handed out: the next call for the same base gets the one after it. */
  take(claim: Claim, maxSteps: number): number {
    if (claim.wallets.length === 0) return 0;
    const { first, stride } = claim.lane ?? EVERY_STEP;
    const key = hintKey(claim);
    let step = this.next.get(key) ?? first;
    if (step >= maxSteps || step < first || (step - first) % stride !== 0) step = first;
    this.remember(key, step + stride >= maxSteps ? first : step + stride);
    return step;
  }

  /** What the write claimed for `claim` (null: none) when it was not the step tried: the hint goes on from it. */
  learn(claim: Claim, tried: number, offset: number | null, maxSteps: number): void {
    if (offset === tried) return;
    const { first, stride } = claim.lane ?? EVERY_STEP;
    this.remember(hintKey(claim), offset === null || offset + stride >= maxSteps ? first : offset + stride);
  }

  private remember(key: string, step: number): void {
    this.next.delete(key);
    this.next.set(key, step);
    if (this.next.size > this.capacity) this.next.delete(this.next.keys().next().value!);
  }
}

function hintKey(claim: Claim): string {
  let wallets = walletKeys.get(claim.wallets);
  if (wallets === undefined) {
    wallets = claim.wallets
      .map((wallet) => `${wallet.network}:${wallet.walletAddress.toLowerCase()}`)
      .sort()
      .join(',');
    walletKeys.set(claim.wallets, wallets);
  }
  const lane = claim.lane ? `|${claim.lane.first}/${claim.lane.stride}` : '';
  return `${claim.ticker}|${claim.baseAmount.toFixed()}|${sharedText(claim.step).plain}|${wallets}${lane}`;
}

// Sessions of one organisation share their claims' wallet lists (src/domain/quotes.ts): keyed once per list.
const walletKeys = new WeakMap<Claim['wallets'], string>();

/**
 * Create's write (docs/benchmarks.md): everything it writes, committed at once or not at all, in one statement
 * with the other creates the batcher gathered meanwhile (src/db/create-batcher.ts).
 */
export async function writeNewSession(
  batcher: CreateBatcher,
  write: NewSessionWrite,
  hints = new OffsetHints(),
): Promise<NewSessionOutcome> {
  const { session } = write;
  const rounding = sharedRounding(session);
  const argument = {
    session: sessionRow(session, write.receiving),
    items: itemRows(session),
    // Quotes and event carry the amounts of the steps to try: the statement rewrites only those it could not claim.
    quotes: quoteRows(session, rounding),
    rounding,
    networks: networkRows(session, write.receiving),
    // Each claim's asset, base amount and step are its quote's (same position).
    claims: write.claims.map((claim) => ({
      position: claim.position,
      networks: claim.wallets.map((wallet) => wallet.network),
      wallets: claim.wallets.map((wallet) => wallet.walletAddress.toLowerCase()),
      try: session.quotes[claim.position]!.offsetSteps,
      first: claim.lane?.first ?? 0,
      stride: claim.lane?.stride ?? 1,
    })),
    max_steps: write.maxSteps,
    cause: write.cause,
    event: {
      id: write.event.id,
      type: write.event.type,
      payload: write.event.payload,
      created_at: write.event.createdAt.toISOString(),
    },
    amount_paths: session.quotes.map((_, position) => write.amountPath(position)),
    signature: write.signature && {
      api_key_id: write.signature.apiKeyId,
      signature: write.signature.signature,
      expires_at: write.signature.keepUntil.toISOString(),
    },
    idempotency: write.idempotency && { key: write.idempotency.key, request_hash: write.idempotency.requestHash },
    link: write.linkUse && { id: write.linkUse.linkId, now: write.linkUse.at.toISOString() },
  };
  const result = await batcher.write(JSON.stringify(argument));
  if (result.link_unavailable) return { kind: 'link_unavailable' };
  if (result.amounts_taken) return { kind: 'amounts_taken', ticker: result.amounts_taken as AssetTicker };
  if (result.replayed_signature) return { kind: 'replayed_signature' };
  if (result.replay)
    return { kind: 'replay', record: { requestHash: result.replay.request_hash, sessionId: result.replay.session_id } };
  const offsets = new Map<number, number>();
  for (const [position, offset] of Object.entries(result.offsets ?? {})) offsets.set(Number(position), offset);
  for (const claim of write.claims) {
    const tried = session.quotes[claim.position]!.offsetSteps;
    hints.learn(claim, tried, offsets.get(claim.position) ?? null, write.maxSteps);
  }
  return { kind: 'created', offsets };
}
