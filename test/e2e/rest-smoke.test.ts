import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestKassa, type TestKassa } from '../support/kassa.js';
import { createMerchant, signed, type TestMerchant } from '../factories/merchant.js';
import { checkoutRequest } from '../factories/checkout-request.js';

let kassa: TestKassa;
let merchant: TestMerchant;

beforeAll(async () => {
  kassa = await startTestKassa();
  merchant = await createMerchant(kassa.ctx);
});
afterAll(() => kassa?.close());

describe('smoke', () => {
  it('creates and reads a session', async () => {
    const created = await signed(kassa.http.post('/checkout-sessions'), merchant, JSON.stringify(checkoutRequest()));
    expect(created.status).toBe(201);
    expect(created.body.total_amount_fiat).toBe('105.00000000');
    const read = await kassa.http.get(`/checkout-sessions/${created.body.session_id}`);
    expect(read.status).toBe(200);
    expect(read.body.session_id).toBe(created.body.session_id);
  });
});
