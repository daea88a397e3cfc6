import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkoutRequest } from '../factories/checkout-request.js';
import { createMerchant } from '../factories/merchant.js';
import { startChainKassa, startTestChain, type ChainKassa, type TestChain } from '../support/chain.js';
import { createSession, postBind } from '../support/rest-kassa.js';
import { postGraphql } from '../support/graphql-kassa.js';

/**
 * Found by the second review: a rejected bind's stored reason named the session the transfer paid,
 * and the public GraphQL `transactions { reason }` showed it, so anyone binding a stranger's
 * pending payment learned the stranger's session id (and with it their public view). The reason
 * now says "another checkout session". Against a real anvil.
 */

const CHAIN_ID = '31337';
let chain: TestChain;
let node: ChainKassa;
beforeAll(async () => {
  chain = await startTestChain();
  node = await startChainKassa(chain.url, { env: { KASSA_CONFIRMATIONS_LOCAL: '1' } });
}, 90_000);
afterAll(async () => {
  await node?.close();
  await chain?.stop();
});
const priced = (usd: number) => checkoutRequest({ items: [{ name: 'Order', quantity: 1, unit_price: usd }] });

describe('a rejected bind', () => {
  it('does not tell whose session the transfer paid', async () => {
    const merchant = await createMerchant(node.kassa.ctx, { wallet: `0x${randomBytes(20).toString('hex')}` });
    const victim = await createSession(node.kassa, merchant, priced(25));
    const attacker = (await createSession(node.kassa, merchant, priced(25))).session_id as string;
    const exact = (victim.crypto_options as Array<{ ticker: string; amount: string }>).find(
      (o) => o.ticker === 'USDT',
    )!.amount;
    const sent = await chain.payPending(merchant.wallet, 'USDT', exact, { from: 2 });
    const bind = await postBind(node.kassa, attacker, {
      tx_hash: sent.hash,
      chain_id: CHAIN_ID,
      crypto_currency: 'USDT',
    });
    expect(bind.status, JSON.stringify(bind.body)).toBe(200);
    await sent.release();
    await chain.mine(1);
    await node.watchers.tick();
    await node.watchers.tick();
    const res = await postGraphql(
      node.kassa,
      `query($id: ID!) { checkoutSession(id: $id) { transactions { txHash state reason } } }`,
      { id: attacker },
    );
    const transactions = (
      res.body as { data: { checkoutSession: { transactions: Array<{ state: string; reason: string }> } } }
    ).data.checkoutSession.transactions;
    expect(transactions.map((t) => [t.state, t.reason])).toEqual([
      ['REJECTED', `already credited: transaction ${sent.hash} pays another checkout session`],
    ]);
    expect(JSON.stringify(res.body)).not.toContain(victim.session_id as string);
  });
});
