import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkoutRequest } from '../factories/checkout-request.js';
import { createMerchant } from '../factories/merchant.js';
import { createLink, visitLink } from '../factories/payment-link.js';
import { startTestKassa, type TestKassa } from '../support/kassa.js';
import { postCreate } from '../support/rest-kassa.js';

/**
 * Sessions of payment links take only one lane of a price's unique amounts (docs/payment-rules.md, rule 4): anyone
 * can open link sessions, and they must never hold every amount the merchant's own API creates of that price need.
 * On a real PostgreSQL. Before, 100 visits of an open-amount link at one amount held all 100 amounts of it, and the
 * merchant's creates of that price were refused 409 for the sessions' lifetime.
 */

let kassa: TestKassa;
beforeAll(async () => {
  kassa = await startTestKassa();
}, 60_000);
afterAll(async () => kassa?.close());

const tipJar = { items: undefined, amount_fiat: { min: 1, max: 500 }, identity_options: [], name: 'Tip jar' };
const merchantCreate = checkoutRequest({ items: [{ name: 'Tip', quantity: 1, unit_price: 77.77 }], currency: 'USD' });

describe('payment link sessions and the amounts of API creates', () => {
  it("100 visits of an open-amount link at 77.77 USD leave the merchant's create of 77.77 USD its amounts", async () => {
    const merchant = await createMerchant(kassa.ctx);
    const link = await createLink(kassa, merchant, tipJar);
    const visits: number[] = [];
    for (let i = 0; i < 100; i += 1)
      visits.push((await visitLink(kassa, link.payment_link_id, { amount: '77.77' })).status);
    // Half the amounts are the links' lane: the rest of the visits are refused as amounts taken.
    expect(visits.filter((status) => status === 201)).toHaveLength(50);
    expect(visits.filter((status) => status !== 201).every((status) => status === 409)).toBe(true);

    // The merchant's own creates of that price still get amounts: the other lane is theirs.
    for (let i = 0; i < 50; i += 1) {
      const created = await postCreate(kassa, merchant, merchantCreate);
      expect(created.status, JSON.stringify(created.body)).toBe(201);
    }
    // One more visit finds nothing free in its lane.
    expect((await visitLink(kassa, link.payment_link_id, { amount: '77.77' })).status).toBe(409);
  }, 120_000);

  it('an API create takes any free amount: past its own lane it uses the one link sessions leave', async () => {
    const merchant = await createMerchant(kassa.ctx);
    const link = await createLink(kassa, merchant, tipJar);
    for (let i = 0; i < 10; i += 1)
      expect((await visitLink(kassa, link.payment_link_id, { amount: '77.77' })).status).toBe(201);
    const statuses: number[] = [];
    for (let i = 0; i < 91; i += 1) statuses.push((await postCreate(kassa, merchant, merchantCreate)).status);
    expect(statuses.slice(0, 90).every((status) => status === 201)).toBe(true);
    expect(statuses[90]).toBe(409);
  }, 120_000);
});
