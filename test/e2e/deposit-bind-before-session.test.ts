import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureDepositContracts } from '../../src/chain/sandbox.js';
import { checkoutRequest } from '../factories/checkout-request.js';
import { createMerchant, type TestMerchant } from '../factories/merchant.js';
import { startChainKassa, startTestChain, type ChainKassa, type TestChain } from '../support/chain.js';
import { createSession, postBind } from '../support/rest-kassa.js';

/**
 * A bind of a transaction mined before its session was created (docs/payment-rules.md#deposit-mode): in deposit mode
 * it is accepted as a hint and writes nothing, as the scan credits such a transfer to the address's session; on the
 * shared wallet it is refused `tx_mined_before_session` as before. Real anvil and PostgreSQL.
 */

let chain: TestChain;
let node: ChainKassa;
let depositShop: TestMerchant;
let sharedShop: TestMerchant;

const randomWallet = () => `0x${randomBytes(20).toString('hex')}`;

beforeAll(async () => {
  chain = await startTestChain();
  await ensureDepositContracts(chain.url, chain.network);
  node = await startChainKassa(chain.url, { env: { KASSA_CONFIRMATIONS_LOCAL: '1' } });
  depositShop = await createMerchant(node.kassa.ctx, { wallet: randomWallet(), receiving: 'deposit' });
  sharedShop = await createMerchant(node.kassa.ctx, { wallet: randomWallet(), receiving: 'shared' });
}, 120_000);

afterAll(async () => {
  await node?.close();
  await chain?.stop();
});

/** A session paid in full in USDT, then moved to two minutes after the block that paid it. */
async function paidBeforeCreation(merchant: TestMerchant) {
  const session = await createSession(node.kassa, merchant, checkoutRequest());
  const id = session.session_id as string;
  const usdt = (session.crypto_options as Array<{ ticker: string; amount: string }>).find((o) => o.ticker === 'USDT')!;
  const sent = await chain.pay(session.wallet_address as string, 'USDT', usdt.amount, { from: 4 });
  await node.kassa.runtime.db.prisma.$executeRaw`
    UPDATE checkout_sessions SET created_at = created_at + interval '2 minutes' WHERE id = ${id}::uuid`;
  return { id, hash: sent.hash };
}

const bind = (id: string, hash: string) =>
  postBind(node.kassa, id, { tx_hash: hash, chain_id: '31337', crypto_currency: 'USDT' });

async function bindRows(id: string): Promise<number> {
  const rows = await node.kassa.runtime.db.prisma.$queryRaw<Array<{ n: number }>>`
    SELECT count(*)::int AS n FROM checkout_session_transactions WHERE session_id = ${id}::uuid`;
  return rows[0]!.n;
}

async function scan(): Promise<void> {
  await chain.mine(1);
  await node.watchers.tick();
  await node.watchers.tick();
}

describe('a bind of a transaction mined before the session was created', () => {
  it('deposit mode: accepted (200), writes nothing, and the scan credits the transfer to the session once', async () => {
    const { id, hash } = await paidBeforeCreation(depositShop);
    const answer = await bind(id, hash);
    expect(answer.status, JSON.stringify(answer.body)).toBe(200);
    expect(await bindRows(id)).toBe(0);
    await scan();
    const view = await node.kassa.http.get(`/checkout-sessions/${id}`);
    expect(view.body.status).toBe('paid');
    const payments = await node.kassa.ctx.store.chain.paymentsOfSession(id);
    expect(payments.map((p) => [p.txHash, p.attribution])).toEqual([[hash, 'deposit_address']]);
    expect((await bind(id, hash)).status).toBe(200);
  });

  it('shared wallet: refused 409 tx_mined_before_session, as before', async () => {
    const { id, hash } = await paidBeforeCreation(sharedShop);
    const answer = await bind(id, hash);
    expect(answer.status).toBe(409);
    expect(answer.body.code).toBe('tx_mined_before_session');
    expect(await bindRows(id)).toBe(0);
  });
});
