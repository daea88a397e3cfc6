import { createHash, randomUUID } from 'node:crypto';
import type { DomainContext } from '../context.js';
import type { AssetTicker } from '../shared/assets.js';
import { conflict, invalid, notFound, unavailable, unprocessable } from '../shared/errors.js';
import { Decimal } from '../shared/money.js';
import { NATIVE_COIN_DECIMALS } from '../shared/networks.js';
import { acceptDestination, evmAddressFormatProblem } from './refund-address.js';
import { chooseSource, fiatToToken, refundAmount } from './refund-amounts.js';
import { NO_TRANSFER, type FiatBasis, type Refund, type RefundBasis, type RefundKind } from './refund.js';
import type { ReceivedAsset, RefundableSession } from './refund-ports.js';
import { refundEvent } from './refund.views.js';

/** How long a claim link takes an address unless the create says otherwise: 7 days. */
export const DEFAULT_CLAIM_MINUTES = 7 * 24 * 60;
export const MIN_CLAIM_MINUTES = 5;
export const MAX_CLAIM_MINUTES = 30 * 24 * 60;

/** A refund the merchant asks for (REST, GraphQL, CLI and dashboard parse into this). */
export interface CreateRefundInput {
  readonly kind: RefundKind;
  /** Default token. */
  readonly basis?: RefundBasis;
  /** Kind part, token basis: the amount in the asset. */
  readonly amount?: Decimal;
  /** Kind part, fiat basis: the amount in the session's currency, converted at the rate of the moment. */
  readonly amountFiat?: Decimal;
  /** Which payments to return; either may be left out when the session received in one asset on one network. */
  readonly cryptoCurrency?: AssetTicker;
  readonly network?: string;
  /** Given: the refund is ready. Absent: a claim link the payer fills in. */
  readonly destination?: string;
  /** The claim link's lifetime (MIN_CLAIM_MINUTES to MAX_CLAIM_MINUTES, default DEFAULT_CLAIM_MINUTES). */
  readonly claimExpiresInMinutes?: number;
  readonly note?: string;
}

export const NOTE_MAX_LENGTH = 500;

/**
 * The problems of an input as any transport gave it (REST checks the same with its schema first): which amount goes
 * with which kind and basis, the claim link's life, the note, the destination's form.
 */
export function refundInputProblems(input: CreateRefundInput): string[] {
  const problems: string[] = [];
  const fiat = input.basis === 'fiat';
  if (fiat && input.kind !== 'part') problems.push('basis must be token unless kind is part');
  if (input.kind === 'part' && !fiat && input.amount === undefined)
    problems.push('amount is required when kind is part');
  if (input.kind === 'part' && fiat && input.amountFiat === undefined)
    problems.push('amount_fiat is required when basis is fiat');
  if (input.amount !== undefined && (input.kind !== 'part' || fiat))
    problems.push('amount is only for kind part with basis token');
  if (input.amountFiat !== undefined && !fiat) problems.push('amount_fiat is only for basis fiat');
  for (const [name, value] of [
    ['amount', input.amount],
    ['amount_fiat', input.amountFiat],
  ] as const) {
    if (value !== undefined && !value.gt(0)) problems.push(`${name} must be greater than 0`);
    else if (value !== undefined && value.decimalPlaces() > 8)
      problems.push(`${name} must have at most 8 decimal places`);
  }
  const minutes = input.claimExpiresInMinutes;
  if (minutes !== undefined) {
    if (input.destination !== undefined)
      problems.push('claim_expires_in_minutes is only for a claim link (without destination)');
    else if (!Number.isInteger(minutes) || minutes < MIN_CLAIM_MINUTES || minutes > MAX_CLAIM_MINUTES)
      problems.push(`claim_expires_in_minutes must be an integer from ${MIN_CLAIM_MINUTES} to ${MAX_CLAIM_MINUTES}`);
  }
  if (input.note !== undefined && input.note.length > NOTE_MAX_LENGTH)
    problems.push(`note must be shorter than or equal to ${NOTE_MAX_LENGTH} characters`);
  const destination = input.destination === undefined ? null : evmAddressFormatProblem(input.destination);
  if (destination) problems.push(destination);
  return problems;
}

export interface CreatedRefund {
  readonly refund: Refund;
  /** True when an Idempotency-Key made it before: nothing new was written. */
  readonly replayed: boolean;
}

/** The request's meaning, for Idempotency-Key replays (docs/decisions/0013): the session and the parsed input. */
function requestHash(sessionId: string, input: CreateRefundInput): string {
  const canonical = {
    sessionId,
    kind: input.kind,
    basis: input.basis ?? 'token',
    amount: input.amount?.toFixed() ?? null,
    amountFiat: input.amountFiat?.toFixed() ?? null,
    cryptoCurrency: input.cryptoCurrency ?? null,
    network: input.network ?? null,
    destination: input.destination?.toLowerCase() ?? null,
    claimExpiresInMinutes: input.destination === undefined ? (input.claimExpiresInMinutes ?? null) : null,
    note: input.note ?? null,
  };
  return createHash('sha256').update(JSON.stringify(canonical)).digest('hex');
}

/** The token of `source` on its network: decimals and the contract; 422 when the network is not enabled now. */
function tokenOf(ctx: DomainContext, source: ReceivedAsset): { decimals: number; tokenAddress: string | null } {
  const network = ctx.networks.find((candidate) => candidate.slug === source.network);
  if (!network)
    throw unprocessable(`Network ${source.network} is not enabled: Kassa cannot watch a refund on it`, 'unprocessable');
  if (network.nativeAsset === source.asset && source.tokenAddress === null)
    return { decimals: NATIVE_COIN_DECIMALS, tokenAddress: null };
  const token = network.tokens.find((candidate) => candidate.ticker === source.asset);
  if (!token) throw unprocessable(`${source.asset} is no longer listed on ${source.network}`, 'unprocessable');
  return { decimals: token.decimals, tokenAddress: token.address.toLowerCase() };
}

function ownedSession(session: RefundableSession | null, sessionId: string, organisationId: string) {
  if (!session || session.organisationId !== organisationId) throw notFound(`Checkout session ${sessionId} not found`);
  return session;
}

/** The rate of the moment for a fiat basis (503 rates_unavailable without a fresh one). */
async function fiatBasis(
  ctx: DomainContext,
  session: RefundableSession,
  source: ReceivedAsset,
  amountFiat: Decimal,
): Promise<FiatBasis> {
  const [rate] = await ctx.rates.quoteRates(session.fiatCurrency, [source.asset], ctx.clock());
  if (!rate)
    throw unavailable(`No fresh ${source.asset} rate in ${session.fiatCurrency} right now`, 'rates_unavailable');
  return {
    currency: session.fiatCurrency,
    amountFiat,
    unitPriceFiat: rate.unitPriceFiat,
    rateSource: rate.source,
    ratedAt: rate.ratedAt,
  };
}

/**
 * Creates a refund of a session of the merchant's organisation (docs/api/refunds.md#create): in one transaction that
 * locks the session row, so two creates at once (on two instances too) never refund more than it received.
 */
export async function createRefund(
  ctx: DomainContext,
  organisationId: string,
  sessionId: string,
  input: CreateRefundInput,
  idempotencyKey?: string,
): Promise<CreatedRefund> {
  const problems = refundInputProblems(input);
  if (problems.length > 0) throw invalid(problems);
  const hash = idempotencyKey === undefined ? null : requestHash(sessionId, input);
  // The rate is fetched before the transaction, which holds the session row only for reads and writes.
  let fiat: FiatBasis | null = null;
  if (input.basis === 'fiat') {
    const session = ownedSession(await ctx.store.refunds.findSession(sessionId), sessionId, organisationId);
    fiat = await fiatBasis(ctx, session, chooseSource(session, input), input.amountFiat ?? new Decimal(0));
  }
  return ctx.store.refunds.transaction(async (tx) => {
    const session = ownedSession(await tx.lockSession(sessionId), sessionId, organisationId);
    // After the lock: a create with the same key on this session has committed by now, and is replayed.
    if (idempotencyKey !== undefined) {
      const earlier = await tx.findByIdempotencyKey(organisationId, idempotencyKey);
      if (earlier) return replay(earlier, hash!);
    }
    const source = chooseSource(session, input);
    const { decimals, tokenAddress } = tokenOf(ctx, source);
    const amount = refundAmount(session, source, decimals, {
      kind: input.kind,
      amount: fiat ? fiatToToken(fiat.amountFiat, fiat.unitPriceFiat, decimals) : input.amount,
    });
    const now = ctx.clock();
    const destination =
      input.destination === undefined
        ? null
        : await acceptDestination(tx, organisationId, source.network, input.destination);
    const claimMinutes = input.claimExpiresInMinutes ?? DEFAULT_CLAIM_MINUTES;
    const refund: Refund = {
      id: randomUUID(),
      organisationId,
      sessionId,
      kind: input.kind,
      basis: fiat ? 'fiat' : 'token',
      status: destination === null ? 'awaiting_destination' : 'ready',
      network: source.network,
      chainId: source.chainId,
      asset: source.asset,
      tokenAddress,
      decimals,
      amount,
      baseUnits: BigInt(amount.times(new Decimal(10).pow(decimals)).toFixed(0)),
      fiat,
      destination,
      destinationSource: destination === null ? null : 'merchant',
      destinationAt: destination === null ? null : now,
      proof: null,
      claimExpiresAt: destination === null ? new Date(now.getTime() + claimMinutes * 60_000) : null,
      transfer: NO_TRANSFER,
      failureReason: null,
      note: input.note ?? null,
      idempotencyKey: idempotencyKey ?? null,
      requestHash: hash,
      createdAt: now,
      updatedAt: now,
    };
    if (!(await tx.insertRefund(refund))) {
      // Another session's create took the key in the meantime (this session's creates wait on its row).
      const earlier = await tx.findByIdempotencyKey(organisationId, idempotencyKey!);
      if (earlier) return replay(earlier, hash!);
      throw conflict('Idempotency-Key was already used with a different request body', 'idempotency_conflict');
    }
    await tx.recordStatusChange({ refundId: refund.id, from: null, to: refund.status, cause: 'created', at: now });
    await tx.appendEvent(refundEvent(refund, 'refund.created', now, ctx.checkoutBaseUrl));
    return { refund, replayed: false };
  });
}

function replay(earlier: Refund, hash: string): CreatedRefund {
  if (earlier.requestHash !== hash)
    throw conflict('Idempotency-Key was already used with a different request body', 'idempotency_conflict');
  return { refund: earlier, replayed: true };
}
