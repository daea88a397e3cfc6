import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { setBranding } from '../../src/domain/organisations/branding.js';
import { createMerchant, type TestMerchant } from '../factories/merchant.js';
import { createLink, linkCall, visitLink } from '../factories/payment-link.js';
import { graphqlData, graphqlError } from '../support/graphql-kassa.js';
import { startTestKassa, type TestKassa } from '../support/kassa.js';

/** Issue 12 over GraphQL: the payer's `paymentLink(id)` and the merchant on a checkout session. */

let kassa: TestKassa;
let shop: TestMerchant;

beforeAll(async () => {
  kassa = await startTestKassa();
  shop = await createMerchant(kassa.ctx, { name: 'Graph Shop' });
  await setBranding(kassa.ctx, shop.organisationId, { brandColor: '#123456' });
});

afterAll(async () => {
  await kassa?.close();
});

const LINK_QUERY = `query Link($id: ID!) { paymentLink(id: $id) {
  id name currency items { name quantity unitPrice totalPrice } totalAmountFiat amountMin amountMax
  identityOptions anonymous requiresPayerIdentity state merchant { name logoUrl brandColor } } }`;

describe('paymentLink(id)', () => {
  it('answers what the link page shows: basket or range, identity options, state and merchant', async () => {
    const link = await createLink(kassa, shop, { identity_options: ['telegram'], max_uses: 1 });
    const data = await graphqlData(kassa, LINK_QUERY, { id: link.payment_link_id });
    expect(data.paymentLink).toEqual({
      id: link.payment_link_id,
      name: 'Coffee subscription',
      currency: 'USD',
      items: [
        { name: 'Coffee beans', quantity: 2, unitPrice: '12.50000000', totalPrice: '25.00000000' },
        { name: 'Grinder', quantity: 1, unitPrice: '80.00000000', totalPrice: '80.00000000' },
      ],
      totalAmountFiat: '105.00000000',
      amountMin: null,
      amountMax: null,
      identityOptions: ['telegram'],
      anonymous: false,
      requiresPayerIdentity: true,
      state: 'ACTIVE',
      merchant: { name: 'Graph Shop', logoUrl: null, brandColor: '#123456' },
    });
  });

  it('a used-up, inactive or expired link answers only that it is unavailable: its id and state, nothing of what it sold or whose it is', async () => {
    const unavailable = (id: string, state: string) => ({
      id,
      state,
      name: null,
      currency: null,
      items: null,
      totalAmountFiat: null,
      amountMin: null,
      amountMax: null,
      identityOptions: null,
      anonymous: null,
      requiresPayerIdentity: null,
      merchant: null,
    });
    const link = await createLink(kassa, shop, { identity_options: ['telegram'], max_uses: 1 });
    await visitLink(kassa, link.payment_link_id, { telegram: '123456789' });
    expect((await graphqlData(kassa, LINK_QUERY, { id: link.payment_link_id })).paymentLink).toEqual(
      unavailable(link.payment_link_id, 'USED_UP'),
    );
    await linkCall(kassa, shop, 'patch', `/payment-links/${link.payment_link_id}`, { active: false });
    expect((await graphqlData(kassa, LINK_QUERY, { id: link.payment_link_id })).paymentLink).toEqual(
      unavailable(link.payment_link_id, 'INACTIVE'),
    );
    const expiring = await createLink(kassa, shop, {
      items: undefined,
      amount_fiat: { min: 1, max: 5 },
      identity_options: undefined,
    });
    await kassa.ctx.store.paymentLinks.update(
      expiring.payment_link_id,
      { expiresAt: new Date(Date.now() - 1000) },
      new Date(),
    );
    expect((await graphqlData(kassa, LINK_QUERY, { id: expiring.payment_link_id })).paymentLink).toEqual(
      unavailable(expiring.payment_link_id, 'EXPIRED'),
    );
  });

  it('BAD_USER_INPUT for a malformed id, NOT_FOUND for an unknown one', async () => {
    const malformed = await graphqlError(kassa, LINK_QUERY, { id: 'nope' }, 'BAD_USER_INPUT');
    expect(malformed).toMatchObject({ message: 'id must be a UUID', extensions: { code: 'BAD_USER_INPUT' } });
    const unknown = await graphqlError(kassa, LINK_QUERY, { id: '00000000-0000-4000-8000-000000000000' }, 'NOT_FOUND');
    expect(unknown).toMatchObject({
      message: 'Payment link 00000000-0000-4000-8000-000000000000 not found',
      extensions: { code: 'NOT_FOUND' },
    });
  });

  it("a link session's merchant (name, colour, logo) and its link fields", async () => {
    const link = await createLink(kassa, shop, { identity_options: undefined });
    const session = (await visitLink(kassa, link.payment_link_id, {})).body;
    const data = await graphqlData(
      kassa,
      `query($id: ID!) { checkoutSession(id: $id) { source fromPaymentLink productPaymentLinkId merchant { name brandColor logoUrl } } }`,
      { id: session.session_id },
    );
    expect(data.checkoutSession).toEqual({
      source: 'payment_link',
      fromPaymentLink: true,
      productPaymentLinkId: link.payment_link_id,
      merchant: { name: 'Graph Shop', brandColor: '#123456', logoUrl: null },
    });
  });
});
