import { randomBytes } from 'node:crypto';
import { expect } from 'vitest';
import { Decimal } from '../../src/domain/shared/money.js';
import { createMerchant, type TestMerchant } from '../factories/merchant.js';
import { checkoutRequest } from '../factories/checkout-request.js';
import type { ChainKassa, TestChain } from './chain.js';
import type { TestKassa } from './kassa.js';
import { createSession, postBind } from './rest-kassa.js';
import { signedRequest } from './webhooks.js';

/** Sessions paid on anvil and refund calls, for the refunds tests (docs/api/refunds.md). */

export const randomWallet = () => `0x${randomBytes(20).toString('hex')}`;

export interface PaidSession {
  readonly merchant: TestMerchant;
  readonly id: string;
  /** The session's price in the asset, and what was sent (price + extra). */
  readonly price: string;
  readonly sent: string;
  /** The paying address, lower-case. */
  readonly payer: string;
}

/** A session paid on anvil with `extra` more than its price in `asset` (0: exact), confirmed and `paid`. */
export async function paidSession(
  chain: TestChain,
  node: ChainKassa,
  asset: 'USDT' | 'BTC' | 'ETH' = 'USDT',
  extra = '0',
  merchant?: TestMerchant,
): Promise<PaidSession> {
  const kassa = node.kassa;
  const owner = merchant ?? (await createMerchant(kassa.ctx, { wallet: randomWallet() }));
  const session = await createSession(kassa, owner, checkoutRequest());
  const options = session.crypto_options as Array<{ ticker: string; amount: string }>;
  const price = options.find((option) => option.ticker === asset)!.amount;
  const sent = new Decimal(price).plus(extra).toFixed();
  const paid = await chain.pay(owner.wallet, asset, sent);
  const bound = await postBind(kassa, session.session_id, {
    tx_hash: paid.hash,
    chain_id: String(chain.network.chainId),
    crypto_currency: asset,
    payer_wallet_address: paid.from,
  });
  expect(bound.status, JSON.stringify(bound.body)).toBe(200);
  await node.watchers.tick();
  const view = await kassa.http.get(`/checkout-sessions/${session.session_id}`);
  expect(view.body.status).toBe('paid');
  return { merchant: owner, id: session.session_id as string, price, sent, payer: paid.from.toLowerCase() };
}

/** POST /checkout-sessions/:id/refunds, signed by the merchant, on `on` (default the chain node's Kassa). */
export function postRefund(
  kassa: TestKassa,
  merchant: TestMerchant,
  sessionId: string,
  body: unknown,
  options: { key?: string } = {},
) {
  const request = signedRequest(kassa, merchant, 'post', `/checkout-sessions/${sessionId}/refunds`, body);
  return options.key ? request.set('Idempotency-Key', options.key) : request;
}

/** Row counts of what a refund writes for one organisation, for "nothing was written" checks. */
export async function refundRows(kassa: TestKassa, organisationId: string) {
  const prisma = kassa.runtime.db.prisma;
  return {
    refunds: await prisma.refund.count({ where: { organisationId } }),
    history: await prisma.refundStatusChange.count({ where: { refund: { organisationId } } }),
    outbox: await prisma.outboxEvent.count({ where: { organisationId } }),
  };
}

/** A refund's history rows as [from, to, cause]. */
export async function refundHistory(kassa: TestKassa, refundId: string) {
  const rows = await kassa.runtime.db.prisma.refundStatusChange.findMany({
    where: { refundId },
    orderBy: { id: 'asc' },
  });
  return rows.map((row) => [row.fromStatus, row.toStatus, row.cause]);
}

/** The refund events of a session's outbox, in order: type and payload. */
export async function refundEvents(kassa: TestKassa, sessionId: string) {
  const rows = await kassa.runtime.db.prisma.outboxEvent.findMany({
    where: { sessionId, type: { startsWith: 'refund.' } },
    orderBy: { seq: 'asc' },
  });
  return rows.map((row) => ({ type: row.type, data: row.payload as Record<string, any> }));
}
