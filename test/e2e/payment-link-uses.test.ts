import { randomBytes } from 'node:crypto';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { expireDueSessions } from '../../src/domain/sessions/expire-sessions.js';
import { createMerchant } from '../factories/merchant.js';
import { createLink, linkCall, visitLink } from '../factories/payment-link.js';
import { startChainKassa, startTestChain, type ChainKassa, type TestChain } from '../support/chain.js';
import { fixedRates } from '../support/fixed-rates.js';
import { controllableClock, expectErrorBody } from '../support/rest-kassa.js';

/**
 * A payment link's `max_uses` counts sessions paid and sessions still open (docs/hosted-pages.md#payment-links,
 * docs/decisions/0016): an open session holds a use, which comes back when it expires, and a paid one keeps it. So a
 * link of 2 never sells 3, and visits that never pay hold a use only for a session lifetime. Against a real anvil and
 * PostgreSQL. Before, every session started counted a use for good: visits that never paid used the link up.
 */

const MIN = 60_000;
let chain: TestChain;
let node: ChainKassa;
const time = controllableClock();
const { rates } = fixedRates();

beforeAll(async () => {
  chain = await startTestChain();
  node = await startChainKassa(chain.url, { clock: time.clock, override: { rates } });
}, 90_000);

afterAll(async () => {
  await node?.close();
  await chain?.stop();
});

afterEach(() => time.release());

const randomWallet = () => `0x${randomBytes(20).toString('hex')}`;

async function scanAt(at: number): Promise<void> {
  await chain.rpc('evm_setNextBlockTimestamp', [Math.floor(at / 1000)]);
  await chain.mine(1);
  time.freeze(at);
  await node.watchers.tick();
}

describe('max_uses counts paid sessions and open ones', () => {
  it('two open sessions use a link of 2 up; an expired one gives its use back; a paid one never does', async () => {
    const t0 = Date.now() + 60 * MIN;
    await scanAt(t0);
    const merchant = await createMerchant(node.kassa.ctx, { wallet: randomWallet() });
    const link = await createLink(node.kassa, merchant, { max_uses: 2, expires_in_minutes: 5 });
    const id = link.payment_link_id as string;
    const visit = (n: number) => visitLink(node.kassa, id, { email: `payer${n}@example.com` });
    const linkView = async () => (await linkCall(node.kassa, merchant, 'get', `/payment-links/${id}`)).body;

    const paying = await visit(1);
    const leaving = await visit(2);
    expect([paying.status, leaving.status]).toEqual([201, 201]);
    expectErrorBody(await visit(3), 409, `Payment link ${id} has been used the most times allowed`);
    expect(await linkView()).toMatchObject({ max_uses: 2, uses: 2, state: 'used_up' });

    // The first payer pays exactly; the second leaves.
    const usdt = (paying.body.crypto_options as Array<{ ticker: string; amount: string }>).find(
      (o) => o.ticker === 'USDT',
    )!.amount;
    await chain.rpc('evm_setNextBlockTimestamp', [Math.floor((t0 + MIN) / 1000)]);
    time.freeze(t0 + MIN);
    await chain.pay(merchant.wallet, 'USDT', usdt, { from: 4 });
    await scanAt(t0 + MIN + 1_000);
    expect((await node.kassa.http.get(`/checkout-sessions/${paying.body.session_id}`)).body.status).toBe('paid');
    expect(await linkView()).toMatchObject({ uses: 2, state: 'used_up' });

    await scanAt(t0 + 6 * MIN);
    await expireDueSessions(node.kassa.ctx);
    expect((await node.kassa.http.get(`/checkout-sessions/${leaving.body.session_id}`)).body.status).toBe('expired');
    expect(await linkView()).toMatchObject({ uses: 1, state: 'active' });

    // The use the expired session held comes back: one more visit, and the link is used up again.
    const third = await visit(4);
    expect(third.status, JSON.stringify(third.body)).toBe(201);
    expectErrorBody(await visit(5), 409, `Payment link ${id} has been used the most times allowed`);

    // That one expires too: the paid session's use stays.
    await scanAt(t0 + 13 * MIN);
    await expireDueSessions(node.kassa.ctx);
    expect(await linkView()).toMatchObject({ uses: 1, state: 'active' });
  }, 60_000);
});
