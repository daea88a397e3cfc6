import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkoutRequest } from '../factories/checkout-request.js';
import { createMerchant } from '../factories/merchant.js';
import { createLink, visitLink } from '../factories/payment-link.js';
import { startTestKassa, type TestKassa } from '../support/kassa.js';
import { expectErrorCode, postCreate } from '../support/rest-kassa.js';

/**
 * A busy price that runs out of unique amounts (docs/payment-rules.md, rule 4) is refused 409 with what to do: wait
 * for one of the sessions holding them (paid, or its time up), or raise KASSA_UNIQUE_AMOUNT_STEPS. On a real
 * PostgreSQL, with 4 amounts a price. Before, the message said only to retry.
 */

let kassa: TestKassa;
beforeAll(async () => {
  kassa = await startTestKassa({ env: { KASSA_UNIQUE_AMOUNT_STEPS: '4' } });
}, 60_000);
afterAll(async () => kassa?.close());

const lamp = checkoutRequest({ items: [{ name: 'Lamp', quantity: 1, unit_price: 10 }] });

describe('a price out of unique amounts', () => {
  it("the merchant's create is refused 409 naming the setting that raises the capacity", async () => {
    const merchant = await createMerchant(kassa.ctx);
    for (let i = 0; i < 4; i += 1) expect((await postCreate(kassa, merchant, lamp)).status).toBe(201);
    const refused = await postCreate(kassa, merchant, lamp);
    expectErrorCode(refused, 409, 'amounts_exhausted');
    expect(refused.body.message).toMatch(/^Every unique amount of this total in \w+ is held by another open/);
    expect(refused.body.message).toContain('(4 amounts a price, KASSA_UNIQUE_AMOUNT_STEPS)');
    expect(refused.body.message).toContain('late-payment window');
    expect(refused.body.message).toMatch(/raise KASSA_UNIQUE_AMOUNT_STEPS/);
  });

  it("a payment link's visit is refused 409 naming its lane of the amounts", async () => {
    const merchant = await createMerchant(kassa.ctx);
    const link = await createLink(kassa, merchant, { items: [{ name: 'Lamp', quantity: 1, unit_price: 10 }] });
    for (let i = 0; i < 2; i += 1)
      expect((await visitLink(kassa, link.payment_link_id, { email: `p${i}@example.com` })).status).toBe(201);
    const refused = await visitLink(kassa, link.payment_link_id, { email: 'late@example.com' });
    expectErrorCode(refused, 409, 'amounts_exhausted');
    expect(refused.body.message).toContain('(2 of the 4 amounts a price for payment links, KASSA_UNIQUE_AMOUNT_STEPS)');
    expect(refused.body.message).toMatch(/raise KASSA_UNIQUE_AMOUNT_STEPS/);
  });
});
